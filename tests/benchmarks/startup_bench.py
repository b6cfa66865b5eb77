"""Benchmark: time from launching `maic chat` to its prompt being ready, in a real pseudo-terminal.

Run:  python tests/benchmarks/startup_bench.py [RUNS]

Measures, for `maic chat` with a litellm model (litellm is warmed up in the
background, so it must not delay the prompt) and with the demo model: the
seconds from process start to the prompt ("you ›") on screen, and for
`maic --help` and `maic --version` to exit.  Nothing is sent to any model:
the prompt is answered with Ctrl-D.  Prints the median of RUNS runs (default 5).
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

PROMPT = "you ›".encode()


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


def main() -> int:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    maic = [sys.executable, "-m", "maic_cli"]
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "MAIC_HOME": home, "TERM": "xterm-256color", "COLUMNS": "120", "LINES": "35"}
        cases = {
            "maic --version": lambda: time_to_exit([*maic, "--version"], env),
            "maic --help": lambda: time_to_exit([*maic, "--help"], env),
            "maic chat (demo) to prompt": lambda: time_to_prompt([*maic, "chat", "--model", "demo"], env),
            "maic chat (litellm model) to prompt": lambda: time_to_prompt(
                [*maic, "chat", "--model", "openai/gpt-4o-mini", "--api-base", "http://127.0.0.1:9/v1"], env),
        }
        for name, measure in cases.items():
            times = [measure() for _ in range(runs)]
            print(f"{name:<40} median {statistics.median(times):.2f} s   (min {min(times):.2f}, "
                  f"max {max(times):.2f}, {runs} runs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
