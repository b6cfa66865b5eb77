"""Benchmark: the live view under a big reply (many actions, or many bytes of speech).

Run:  PYTHONPATH=. python tests/benchmarks/live_bench.py [--quick]

Drives a real :class:`LiveView` (a 120x40 terminal console writing into memory)
the way ``run_round`` does: each event is folded into the classroom, then handed
to the view.  Two series: N whiteboard actions in one message, and a reply of M
bytes of speech in 64-byte deltas.  Prints the total time, microseconds per
event, the frames drawn (at most ``fps`` a second, so their number follows
the wall time), the cost of one frame of the final state, the view's cost per
event between frames, the slowest single event (how long Ctrl-C may wait for
the event loop), and the growth exponent of the total (slope of log time
against log size; 1.0 is linear).  The total includes ``Classroom.apply``
(the engine's reducer), which the view does not control.  Targets: one frame
at the largest size within 3x of the smallest (a frame costs the screen, not
the reply), at most 20 us of view work per event between frames, no event
slower than 0.25 s.  Exits 1 if a target is missed.
"""

from __future__ import annotations

import io
import math
import sys
import time

from rich.console import Console

from maic_cli.engine.classroom import Classroom
from maic_cli.engine.events import ActionEvent, AgentEndEvent, AgentStartEvent, Event, TextDeltaEvent
from maic_cli.engine.models import AgentConfig
from maic_cli.engine.round import RoundResult
from maic_cli.ui.live import LiveView
from maic_cli.ui.views import ScreenState

MAX_BETWEEN_FRAMES = 20e-6  # seconds of view work per event when no frame is drawn
MAX_EVENT_SECONDS = 0.25
MAX_FRAME_SPREAD = 3.0
DELTA = 64


def _action(i: int) -> tuple[str, dict]:
    kind = i % 5
    if kind == 0:
        return "wb_draw_text", {"content": f"note {i} " * 5}
    if kind == 1:
        return "wb_draw_latex", {"latex": f"\\frac{{{i}}}{{2}} \\times \\pi r^2"}
    if kind == 2:
        return "wb_draw_table", {"data": [["n", "n^2"], [str(i), str(i * i)]]}
    if kind == 3:
        return "wb_draw_chart", {"labels": ["a", "b"], "series": [{"name": "s", "values": [i, i + 1]}]}
    return "wb_draw_code", {"language": "python", "code": f"x = {i}\nprint(x)"}


def action_events(n: int) -> list[Event]:
    events: list[Event] = []
    for i in range(n):
        name, params = _action(i)
        events.append(TextDeltaEvent(message_id="m1", content=f"Step {i}. "))
        events.append(ActionEvent(action_id=f"a{i}", action_name=name, params=params, agent_id="t",
                                  message_id="m1"))
    return events


def text_events(size: int) -> list[Event]:
    chunk = ("The quick brown fox jumps over the lazy dog. " * 2)[:DELTA - 1] + "\n"
    return [TextDeltaEvent(message_id="m1", content=chunk) for _ in range(size // DELTA)]


class Timings:
    def __init__(self) -> None:
        self.total = self.frame_time = self.other_view = self.slowest = 0.0
        self.frames = 0
        self.slowest_part = ""
        self.final_frame = 0.0


def drive(events: list[Event]) -> Timings:
    """Time the stream: all of it, the view's frames, the view between frames, the slowest event."""
    classroom = Classroom()
    classroom.add_learner_message("Explain everything.")
    teacher = AgentConfig(id="t", name="Ms. T", role="teacher", persona="p")
    console = Console(file=io.StringIO(), force_terminal=True, width=120, height=40, color_system="truecolor")
    view = LiveView(console, ScreenState(classroom=classroom, agents={"t": teacher}, model="bench"))
    timings = Timings()
    stream: list[Event] = [AgentStartEvent(message_id="m1", agent_id="t", agent_name="Ms. T", avatar="x",
                                           color="blue"), *events, AgentEndEvent(message_id="m1", agent_id="t")]
    view.round_started()
    start = time.perf_counter()
    for event in stream:
        before = time.perf_counter()
        classroom.apply(event)
        between = time.perf_counter()
        drawn = view._last
        view.on_event(event)
        after = time.perf_counter()
        if view._last != drawn:  # this event drew a frame
            timings.frames += 1
            timings.frame_time += after - between
        else:
            timings.other_view += after - between
        if after - before > timings.slowest:
            timings.slowest = after - before
            part = "apply" if between - before > after - between else "view"
            timings.slowest_part = f"{event.type}, mostly {part}"
    timings.total = time.perf_counter() - start
    timings.final_frame = min(_timed(lambda: view.refresh(force=True)) for _ in range(3))
    view.round_finished(RoundResult(reason="end"))
    return timings


def _timed(action) -> float:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def exponent(points: list[tuple[int, float]]) -> float:
    (n1, t1), (n2, t2) = points[0], points[-1]
    return math.log(t2 / t1) / math.log(n2 / n1)


def series(title: str, sizes: list[int], make) -> tuple[bool, str]:  # type: ignore[no-untyped-def]
    print(title)
    drive(make(sizes[0]))  # warm up (imports, lexers, caches)
    totals, frames = [], []
    worst = between = 0.0
    for size in sizes:
        events = make(size)
        t = drive(events)
        worst = max(worst, t.slowest)
        between = max(between, t.other_view / len(events))
        totals.append((size, t.total))
        frames.append(t.final_frame)
        print(f"  {size:>9,}  total {t.total * 1000:8.1f} ms  {t.total / len(events) * 1e6:7.1f} us/event  "
              f"{t.frames:4} frames  one frame {t.final_frame * 1000:6.1f} ms  view between frames "
              f"{t.other_view / len(events) * 1e6:5.1f} us/event  slowest event {t.slowest * 1000:6.1f} ms "
              f"({t.slowest_part})")
    spread = frames[-1] / frames[0]
    print(f"  growth exponent of the total {exponent(totals):.2f}; one frame at the largest size / smallest "
          f"{spread:.1f}x")
    ok = spread <= MAX_FRAME_SPREAD and between <= MAX_BETWEEN_FRAMES and worst <= MAX_EVENT_SECONDS
    return ok, title


def main() -> int:
    quick = "--quick" in sys.argv
    actions = [100, 300] if quick else [100, 300, 1000]
    sizes = [10_000, 100_000] if quick else [10_000, 100_000, 1_000_000]
    results = [series("N actions in one message", actions, action_events),
               series(f"M bytes of speech in {DELTA}-byte deltas", sizes, text_events)]
    missed = [title for ok, title in results if not ok]
    print(f"target missed: {', '.join(missed)}" if missed else "targets met")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
