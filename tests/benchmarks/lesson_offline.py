"""Benchmark: does the built-in offline model write a clean lesson?

Run:  python tests/benchmarks/lesson_offline.py [--scenes N] [--topics N] [--show]   (needs the offline extra)

Generates a lesson on each of ten everyday topics with SmolLM2-135M (compact limits, as
``maic lesson new --model local`` runs it) and checks each with
``authoring/lint.lesson_problems`` — field names as content, cut words, dangling
brackets, options that talk about answering, the same option in two questions, a sentence
said twice.  It prints, per topic, whether generation finished, the problems found and the
time, then how many lessons were clean.  ``--show`` prints every lesson's text to read.

Measured 2026-12-01 (3 scenes, on a loaded 2-core machine): 0 of 10 clean; every lesson had
field names as content ("description", "explanation" as bullets or options), quiz options
that talk about answering ("The answer to why we have colors like red or WHY; Question") or
the same option in two questions; 54–505 s per lesson.  Read, not only counted: titles like
"Why the sky is blue, in teaching order.", "Fractions For Beginners.com/A-Short-Summary".
So ``maic lesson new`` refuses this model in one line (``cli/lesson_progress.refuse_model``).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time

from maic_cli.authoring.generation import GenerationError, LessonBrief, generate_lesson
from maic_cli.authoring.lint import lesson_problems
from maic_cli.authoring.schemas import COMPACT
from maic_cli.llm.local import LocalLlamaClient
from maic_cli.store.lesson_writer import lesson_yaml

TOPICS = ["Why the sky is blue", "How volcanoes erupt", "Fractions for beginners", "The water cycle",
          "How bees make honey", "Newton's first law", "What a noun is", "How the heart pumps blood",
          "Why the moon has phases", "Recycling plastic"]


async def main(scenes: int, count: int, show: bool) -> int:
    llm = LocalLlamaClient(name="local")
    clean = 0
    for topic in TOPICS[:count]:
        started = time.monotonic()
        try:
            result = await generate_lesson(LessonBrief(topic=topic, scenes=scenes, limits=COMPACT), llm)
        except GenerationError as exc:
            print(f"{topic!r}: FAILED ({exc}) in {time.monotonic() - started:.0f} s")
            continue
        problems = lesson_problems(result.lesson)
        clean += not problems
        print(f"{topic!r}: {'clean' if not problems else f'{len(problems)} problems'} in "
              f"{time.monotonic() - started:.0f} s, {result.retries} retries")
        for problem in problems[:6]:
            print(f"    - {problem}")
        if show:
            print(lesson_yaml(result.lesson))
    print(f"clean lessons: {clean} of {min(count, len(TOPICS))}")
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--scenes", type=int, default=3)
    parser.add_argument("--topics", type=int, default=10)
    parser.add_argument("--show", action="store_true")
    arguments = parser.parse_args()
    sys.exit(asyncio.run(main(arguments.scenes, arguments.topics, arguments.show)))
