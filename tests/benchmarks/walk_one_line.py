"""Walk one learner line through maic: which modules it crosses, and which calls go back up.

Run:  python tests/benchmarks/walk_one_line.py [--lesson NAME] [--show]

Plays ``maic chat --model demo`` (with ``--lesson NAME``: that lesson, the line asked after its
first lecture) in this process with one learner line on stdin (plain view, no terminal), traces
every Python call between maic modules from that line's ``handle_line`` to the next line's, and prints
the rooms and modules it crossed in order of first entry, the number of calls between modules,
and the calls that went *back up* — from a room into a room above it (the engine calling the
chat's hooks, say).  A call back up through a hook the caller handed down is how events reach
the view and the files; each is listed so the count can be watched across changes.
"""

from __future__ import annotations

import io
import os
import sys
import tempfile
from collections import Counter
from pathlib import Path
from types import FrameType
from typing import Any

ORDER = ["replies", "prompts", "llm", "engine", "lessons", "authoring", "store", "ui", "evaluation", "chat", "cli"]
LINE = "Why is the sky blue?"


def room(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 2 else "(shared)"


def main() -> None:
    home = tempfile.mkdtemp(prefix="maic-walk-")
    os.environ["MAIC_HOME"] = home
    lesson = sys.argv[sys.argv.index("--lesson") + 1] if "--lesson" in sys.argv else None
    sys.stdin = io.TextIOWrapper(io.BytesIO(f"{LINE}\n/quit\n".encode()))
    from maic_cli.cli.main import main as maic_main

    crossings: list[tuple[str, str, str]] = []
    active = False

    def tracer(frame: FrameType, event: str, arg: Any) -> None:
        nonlocal active
        if event != "call":
            return
        callee = frame.f_globals.get("__name__", "")
        if frame.f_code.co_name == "handle_line":  # the learner's line starts the window, the next line ends it
            active = str(frame.f_locals.get("line", "")).strip() == LINE
        if not active or not callee.startswith("maic_cli."):
            return
        back = frame.f_back
        caller = back.f_globals.get("__name__", "") if back else ""
        if caller.startswith("maic_cli.") and caller != callee:
            crossings.append((caller, callee, frame.f_code.co_name))

    show = "--show" in sys.argv
    sys.argv = ["maic", "chat", "--model", "demo", "--no-memory", "--session", str(Path(home) / "s.json"),
                *(["--lesson", lesson] if lesson else [])]
    out = io.StringIO()
    real_stdout = sys.stdout
    sys.setprofile(tracer)
    try:
        sys.stdout = out
        maic_main()
    except SystemExit:
        pass
    finally:
        sys.setprofile(None)
        sys.stdout = real_stdout
    seen: list[str] = []
    for caller, callee, _ in crossings:
        for m in (caller, callee):
            if m not in seen:
                seen.append(m)
    rank = {r: i for i, r in enumerate(ORDER)}
    up = [(a, b, f) for a, b, f in crossings if room(a) in rank and room(b) in rank and rank[room(b)] > rank[room(a)]]
    rooms = []
    for m in seen:
        if room(m) not in rooms:
            rooms.append(room(m))
    how = f"--model demo, --lesson {lesson}" if lesson else "--model demo"
    print(f"one learner line ({LINE!r}, {how}): {len(seen)} modules in {len(rooms)} rooms, "
          f"{len(crossings)} calls between modules, {len(up)} calls back up")
    print("rooms, in order of first entry:", " → ".join(rooms))
    print("modules:", ", ".join(m.removeprefix("maic_cli.") for m in seen))
    kinds = Counter(f"{a.removeprefix('maic_cli.')} → {b.removeprefix('maic_cli.')}.{f}" for a, b, f in up)
    for what, count in kinds.most_common():
        print(f"  back up ×{count}: {what}")
    if show:
        print(out.getvalue())


if __name__ == "__main__":
    main()
