"""Benchmark: one frame of the chat screen with a lesson's slide on it.

Run:  PYTHONPATH=. python tests/benchmarks/slide_bench.py

For each sample lesson, its first two slides are opened (with the lesson's notes in the
conversation) and the whole screen is drawn 50 times at 80x30 and 120x40, with the
spotlight moving to the next element every 10 frames (a move draws the slide anew; the
frames between reuse its rendered lines).  Prints milliseconds per frame, and the same
for a screen without slides as the baseline.  Target: a lesson frame within 3x the
baseline plus 10 ms.  Exits 1 if missed.
"""

from __future__ import annotations

import io
import sys
import time
from pathlib import Path

from rich.console import Console

from maic_cli.engine.classroom import Classroom
from maic_cli.store.lessons import load_lesson
from maic_cli.ui.views import ScreenState, render_screen
from tests.lesson_transcript import AGENTS_BY_ID, lesson_events, pointer

LESSONS = Path(__file__).resolve().parents[2] / "lessons"
FRAMES = 50


def frame_ms(state: ScreenState, width: int, height: int, elements: list[str]) -> float:
    console = Console(file=io.StringIO(), width=width, height=height)
    start = time.perf_counter()
    for frame in range(FRAMES):
        if elements and frame % 10 == 0:
            state.classroom.apply(pointer("spotlight", elements[frame // 10 % len(elements)]))
        console.print(render_screen(state, height))
    return (time.perf_counter() - start) / FRAMES * 1000


def main() -> int:
    ok = True
    for width, height in ((80, 30), (120, 40)):
        baseline = frame_ms(ScreenState(classroom=Classroom(), agents=AGENTS_BY_ID, model="scripted"),
                            width, height, [])
        print(f"{width}x{height} no slides: {baseline:.1f} ms/frame")
        for path in sorted(LESSONS.glob("*.yaml")):
            lesson = load_lesson(path)
            state = ScreenState(classroom=Classroom(), agents=AGENTS_BY_ID, model="scripted")
            for event in lesson_events(lesson)[:2]:
                state.classroom.apply(event)
                state.notes.record(state.classroom, event)
            slide = state.classroom.store.slide
            ids = [element.id for element in slide.elements] if slide else []
            cost = frame_ms(state, width, height, ids)
            print(f"{width}x{height} {path.stem}: {cost:.1f} ms/frame")
            ok = ok and cost <= 3 * baseline + 10
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
