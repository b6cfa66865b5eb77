"""Benchmark: CPU seconds per model call of an in-process batch (the client's event loop, no start-up, no report).

Run:  python tests/benchmarks/percall_bench.py [RUNS] [CONCURRENCY] [REPEATS] [--profile FILE]

The loopback server (tests/benchmarks/batch_bench.py, 200 ms per call, in its own process so its
CPU is not counted) serves a two-agent class: director → teacher → director, three streamed calls
per run, through the direct client (``maic run``'s default for an OpenAI-compatible ``--api-base``).
After a warm-up batch (imports, first connections), each repetition runs RUNS classes at
CONCURRENCY and takes this process's CPU time (``resource.getrusage``: user + system, all threads) and
its event loop thread's alone around the batch; each divided by the calls made, their medians and lowest
over REPEATS repetitions are printed with the load average.  At -j 50 and 200 ms per call the batch
makes 250 calls a second, so every millisecond of CPU per call is a quarter of the event loop's time:
calls queue when it is busy.
``--profile FILE`` also writes a cProfile of one more repetition (read it with ``python -m pstats``).

Measured on the shared 2-core development machine (load average 2.2-2.9 from other work), 600 runs at
-j 50, main at 27f6bde ("before") and this branch ("after") run in turn, five times each, one repetition
per process (``/tmp`` copies of each tree, this script in both):

- the event loop's thread: before 2.30, 2.24, 2.63, 2.48, 2.16 ms per call (median 2.30);
  after 1.83, 1.94, 1.84, 1.70, 2.10 (median 1.84): 0.46 ms (20 %) less per call;
- the whole process (threads that open transcripts and save results included, noisier):
  before median 2.89 ms, after 2.73;
- again with the final tree (transcript lines written as bytes too), three times each, load average 0.8-1.0:
  the event loop's thread before 2.60, 2.58, 2.19 ms (median 2.58), after 1.91, 2.16, 1.63 (median 1.91):
  0.56 ms less per call (pairwise mean); the whole process before 3.02, 3.17, 2.86, after 2.39, 2.88, 2.36.

Where it went (py-spy of the batch): the built-in prompts rendered once per distinct data (a batch's runs
repeat a class), the director's state copied by its lists, not deeply; request bodies encoded and stream
chunks parsed by pydantic-core; transcript lines written from the entry's own JSON as bytes; make_inert
skipping text that cannot hold a link.  For reference, a bare aiohttp client against the same server costs
about 0.45-0.5 ms per call on this loop; of the rest, evaluation/batch.py's two thread hops per run (open the
transcript, save the result: about 4 % of the loop) and cli/batch_plan.py's deep copies per run (about 3 %)
are outside the engine.
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
