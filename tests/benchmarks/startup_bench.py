"""Benchmark: how fast maic starts — `--help` next to a bare Typer app, and `maic chat` to its prompt.

Run:  python tests/benchmarks/startup_bench.py [RUNS]

Help: a bare two-command Typer app is written to a temporary file in the same run;
`maic --help` and each `maic COMMAND --help` are timed to exit, round-robin with the
bare app's `--help` (so a load spike on the machine hits both), and printed with their
RATIO to the bare app's `--help` (the bar: at most 1.5); a COMMAND's help also with its
ratio to the bare app's `hello --help`, which pays Typer's own subcommand costs too.
Then: `maic --version` to exit, and `maic chat` with a litellm model
(litellm is warmed up in the background, so it must not delay the prompt) and with the
demo model, from process start to the prompt ("you ›") on screen in a real
pseudo-terminal.  Nothing is sent to any model: the prompt is answered with Ctrl-D.
Prints the median of RUNS runs (default 5).
"""

from __future__ import annotations

import os
import pty
import select
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

PROMPT = "you ›".encode()
RATIO_BAR = 1.5

BARE_APP = '''\
import typer

app = typer.Typer(add_completion=False)


@app.command()
def hello(name: str = typer.Option("world", help="Who to greet.")) -> None:
    """Say hello."""
    typer.echo(f"hello {name}")


@app.command()
def bye() -> None:
    """Say goodbye."""
    typer.echo("bye")


app()
'''

HELP_CASES: tuple[list[str], ...] = ([], ["chat"], ["replay"], ["run"], ["agents"], ["agents", "list"])


def time_to_prompt(args: list[str], env: dict[str, str]) -> float:
    leader, follower = pty.openpty()
    start = time.perf_counter()
    proc = subprocess.Popen(args, stdin=follower, stdout=follower, stderr=follower, env=env, close_fds=True)
    os.close(follower)
    seen = b""
    elapsed = float("nan")
    try:
        while time.perf_counter() - start < 30:
            ready, _, _ = select.select([leader], [], [], 0.05)
            if ready:
                try:
                    chunk = os.read(leader, 65536)
                except OSError:
                    break
                seen += chunk
                if PROMPT in seen:
                    elapsed = time.perf_counter() - start
                    break
        os.write(leader, b"\x04")  # Ctrl-D: leave
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(leader)
    return elapsed


def time_to_exit(args: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(args, env=env, capture_output=True, check=True, timeout=60)
    return time.perf_counter() - start


def line(name: str, times: list[float], extra: str = "") -> str:
    return (f"{name:<40} median {statistics.median(times):.2f} s   (min {min(times):.2f}, "
            f"max {max(times):.2f}, {len(times)} runs){extra}")


def help_ratios(maic: list[str], bare: list[str], env: dict[str, str], runs: int) -> None:
    """Each help case and the bare app's --help, round-robin; the ratio of their medians.

    The bare app's `hello --help` is shown too: for a subcommand's help Typer itself
    imports pydantic (typer 0.29 coerces the group's options with a TypeAdapter), a cost
    every `maic COMMAND --help` pays as well.
    """
    cases: dict[str, list[str]] = {"bare Typer app --help": [*bare, "--help"],
                                   "bare Typer app hello --help": [*bare, "hello", "--help"]}
    cases.update({" ".join(["maic", *argv, "--help"]): [*maic, *argv, "--help"] for argv in HELP_CASES})
    times: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(runs):
        for name, args in cases.items():
            times[name].append(time_to_exit(args, env))
    bare_median = statistics.median(times["bare Typer app --help"])
    bare_command_median = statistics.median(times["bare Typer app hello --help"])
    for name, samples in times.items():
        ratio = statistics.median(samples) / bare_median
        verdict = "" if name.startswith("bare") else ("  ok" if ratio <= RATIO_BAR else "  OVER")
        versus_command = ""
        if name.startswith("maic ") and name != "maic --help":
            versus_command = f"   (ratio to bare hello --help {statistics.median(samples) / bare_command_median:.2f})"
        print(line(name, samples, f"   ratio {ratio:.2f}{verdict}{versus_command}"))


def main() -> int:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    maic = [sys.executable, "-m", "maic_cli"]
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "MAIC_HOME": home, "TERM": "xterm-256color", "COLUMNS": "120", "LINES": "35"}
        bare_file = Path(home) / "bare_app.py"
        bare_file.write_text(BARE_APP, encoding="utf-8")
        help_ratios(maic, [sys.executable, str(bare_file)], env, runs)
        cases: dict[str, Callable[[], float]] = {
            "maic --version": lambda: time_to_exit([*maic, "--version"], env),
            "maic chat (demo) to prompt": lambda: time_to_prompt([*maic, "chat", "--model", "demo"], env),
            "maic chat (litellm model) to prompt": lambda: time_to_prompt(
                [*maic, "chat", "--model", "openai/gpt-4o-mini", "--api-base", "http://127.0.0.1:9/v1"], env),
        }
        for name, measure in cases.items():
            print(line(name, [measure() for _ in range(runs)]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
