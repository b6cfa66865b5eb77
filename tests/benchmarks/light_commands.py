"""Benchmark: how fast the light commands run, and what they import of the heavy libraries.

Run:  python tests/benchmarks/light_commands.py [RUNS] [--compare DIR]

Each light command (``maic agents list``, ``maic lesson check``, ``maic learner list`` with one
learner remembered, ``maic replay --plain`` of the lesson transcript) runs RUNS times (default 5)
in a fresh interpreter, round-robin so that a load spike on a shared machine hits them all, and
prints the medians of its wall time (process start to exit), its CPU time (user + system: less
sensitive to a busy machine) and what ``-X importtime`` counts as import time, how many modules it
imported, and which of jinja2, litellm, numpy and matplotlib (none, for a light command:
tests/test_startup.py).  ``--compare DIR`` also times the maic of another checkout (its folder
first on ``PYTHONPATH``), interleaved with this one's, to compare before and after a change.
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("jinja2", "litellm", "numpy", "matplotlib")
COMMANDS: tuple[tuple[str, list[str]], ...] = (
    ("agents list", ["agents", "list"]),
    ("lesson check", ["lesson", "check", str(ROOT / "lessons" / "photosynthesis.yaml")]),
    ("learner list", ["learner", "list"]),
    ("replay --plain", ["replay", str(ROOT / "transcripts" / "lesson_photosynthesis.jsonl"), "--plain"]),
)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def one_run(args: list[str], env: dict[str, str]) -> tuple[float, float, float, int, set[str]]:
    """(wall seconds, CPU seconds, import seconds, modules imported, heavy libraries imported) of ``maic ARGS``
    in a fresh interpreter."""
    cpu = _children_cpu()
    start = time.perf_counter()
    # -P: the current folder (this checkout, with its agents/) is not put before PYTHONPATH's maic
    done = subprocess.run([sys.executable, "-P", "-X", "importtime", "-m", "maic_cli", *args], capture_output=True,
                          text=True, env=env, timeout=120, cwd=ROOT)
    wall = time.perf_counter() - start
    cpu = _children_cpu() - cpu
    if done.returncode != 0:
        raise SystemExit(f"maic {' '.join(args)} exited {done.returncode}: {done.stderr[-500:]}")
    imported = modules = 0
    heavy: set[str] = set()
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        self_us, _, name = line.removeprefix("import time:").split("|", 2)
        if self_us.strip().isdigit():
            imported += int(self_us)
            modules += 1
            top = name.strip().split(".")[0]
            if top in HEAVY:
                heavy.add(top)
    return wall, cpu, imported / 1e6, modules, heavy


def main() -> None:
    args = sys.argv[1:]
    trees = [ROOT]
    if "--compare" in args:
        at = args.index("--compare")
        trees = [Path(args[at + 1]).resolve(), ROOT]
        del args[at:at + 2]
    runs = int(args[0]) if args else 5
    cases = [(tree, name, argv) for tree in trees for name, argv in COMMANDS]
    walls: dict[tuple[Path, str], list[float]] = {(tree, name): [] for tree, name, _ in cases}
    cpus: dict[tuple[Path, str], list[float]] = {(tree, name): [] for tree, name, _ in cases}
    imports: dict[tuple[Path, str], list[float]] = {(tree, name): [] for tree, name, _ in cases}
    heavy: dict[tuple[Path, str], set[str]] = {(tree, name): set() for tree, name, _ in cases}
    modules: dict[tuple[Path, str], int] = {}
    with tempfile.TemporaryDirectory() as home:
        sys.path.insert(0, str(ROOT))
        from maic_cli.store.learner_profile import LearnerProfile, save_profile

        save_profile(LearnerProfile(name="Ana", sessions=2), Path(home))
        env = {**os.environ, "MAIC_HOME": home, "NO_COLOR": "1"}
        for tree, _, argv in cases:  # one untimed run each: the file cache warm for all
            one_run(argv, {**env, "PYTHONPATH": str(tree)})
        for _ in range(runs):  # round-robin over commands and trees: a load spike hits them alike
            for tree, name, argv in cases:
                wall, cpu, imported, modules[tree, name], found = one_run(argv, {**env, "PYTHONPATH": str(tree)})
                walls[tree, name].append(wall)
                cpus[tree, name].append(cpu)
                imports[tree, name].append(imported)
                heavy[tree, name] |= found
    for tree in trees:
        print(f"maic from {tree} — median of {runs} runs")
        print(f"{'command':<16} {'wall s':>8} {'cpu s':>8} {'imports s':>10} {'modules':>8}  heavy libraries imported")
        for name, _ in COMMANDS:
            key = (tree, name)
            print(f"{name:<16} {statistics.median(walls[key]):>8.3f} {statistics.median(cpus[key]):>8.3f} "
                  f"{statistics.median(imports[key]):>10.3f} {modules[key]:>8}  "
                  f"{', '.join(sorted(heavy[key])) or 'none'}")


if __name__ == "__main__":
    main()
