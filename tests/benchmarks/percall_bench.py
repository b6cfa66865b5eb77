"""Benchmark: CPU seconds per model call of an in-process batch (the client's event loop, no start-up, no report).

Run:  python tests/benchmarks/percall_bench.py [RUNS] [CONCURRENCY] [REPEATS] [--profile FILE]

The loopback server (tests/benchmarks/batch_bench.py, 200 ms per call, in its own process so its
CPU is not counted) serves a two-agent class: director → teacher → director, three streamed calls
per run, through the direct client (``maic run``'s default for an OpenAI-compatible ``--api-base``).
After a warm-up batch (imports, first connections), each repetition runs RUNS classes at
CONCURRENCY and takes this process's CPU time (``resource.getrusage``: user + system, all threads)
around the batch; the median of REPEATS repetitions, divided by the calls made, is printed with the
load average.  At -j 50 and 200 ms per call the batch makes 250 calls a second, so every
millisecond of CPU per call is a quarter of the event loop's time: calls queue when it is busy.
``--profile FILE`` also writes a cProfile of one more repetition (read it with ``python -m pstats``).

Measured on the 2-core development machine (600 runs at -j 50, 3 repetitions, medians; the
machine is shared, load average given):

- before (main at 27f6bde): 3.62 ms CPU per call (load average 0.9)
- after: see the README section "Running batches" and the commit log of this file
"""

from __future__ import annotations

import asyncio
import cProfile
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.benchmarks.batch_bench import CALLS_PER_RUN, batch, start_server, write_scenario


def cpu_seconds(who: int = resource.RUSAGE_SELF) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def one_batch(base_url: str, folder: Path, runs: int, concurrency: int) -> tuple[float, float, float, int]:
    """(CPU seconds of the process, of the event loop's thread, wall seconds, runs passed) of one batch of
    ``runs`` classes.  The process's CPU includes the threads that open transcripts and save results (off the
    event loop); the loop's own thread is what makes calls queue when it is busy."""
    write_scenario(folder)
    before, loop_before = cpu_seconds(), cpu_seconds(resource.RUSAGE_THREAD)
    wall, passed = asyncio.run(batch(base_url, folder, runs, concurrency, "direct"))
    return cpu_seconds() - before, cpu_seconds(resource.RUSAGE_THREAD) - loop_before, wall, passed


def main() -> int:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    profile = sys.argv[sys.argv.index("--profile") + 1] if "--profile" in sys.argv else None
    if profile in args:
        args.remove(profile)
    runs = int(args[0]) if args else 600
    concurrency = int(args[1]) if len(args) > 1 else 50
    repeats = int(args[2]) if len(args) > 2 else 3
    proc, base_url = start_server()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            one_batch(base_url, Path(tmp) / "warm", 20, 10)
            per_call: list[float] = []
            loop_per_call: list[float] = []
            for index in range(repeats):
                cpu, loop, wall, passed = one_batch(base_url, Path(tmp) / f"run{index}", runs, concurrency)
                calls = runs * CALLS_PER_RUN
                per_call.append(cpu / calls * 1000)
                loop_per_call.append(loop / calls * 1000)
                print(f"repetition {index + 1}: {runs} runs (passed {passed}) at -j {concurrency}: CPU {cpu:.2f} s, "
                      f"wall {wall:.2f} s, {per_call[-1]:.2f} ms CPU per call (event loop thread "
                      f"{loop_per_call[-1]:.2f} ms)", flush=True)
            if profile:
                profiler = cProfile.Profile(time.process_time)  # CPU, not wall: waiting is not cost
                profiler.enable()
                one_batch(base_url, Path(tmp) / "profiled", runs, concurrency)
                profiler.disable()
                profiler.dump_stats(profile)
    finally:
        proc.terminate()
    print(f"median {statistics.median(per_call):.2f} ms CPU per call (event loop thread "
          f"{statistics.median(loop_per_call):.2f} ms), lowest {min(per_call):.2f} ({min(loop_per_call):.2f}) over "
          f"{repeats} repetitions (load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
