"""Benchmark: `maic run` machinery against the loopback server with 200 ms latency per call.

Run:  python tests/benchmarks/batch_bench.py [RUNS] [CONCURRENCY]

200 runs of a two-agent class (director → teacher → director, three streamed
model calls per run) at concurrency 50, against the loopback server (aiohttp,
asynchronous like a real inference server) in its own process.  The ideal time
is the calls' latency divided by the concurrency (600 × 0.2 s / 50 = 2.4 s).
Prints the wall time, its ratio to the ideal (target ≤ 1.25) and the growth of
resident memory during the batch (target < 100 MB), for ``--client direct``
(the target) and, for reference, through litellm, whose own CPU cost per call
(about 18 ms here) bounds a batch at about 50 calls a second.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from maic_cli.cli.batch import RunContext, run_all
from maic_cli.cli.run_cmd import client_pool, expand
from maic_cli.llm.litellm_client import import_litellm

LATENCY = 0.2
REPLY = json.dumps([{"type": "text", "content": "Half of a pizza is more than a third of it."}])
# A small class: director → teacher → director ("USER"), three model calls per run.
SCENARIO = """id: bench
class: {agents: [teacher, curious_student]}
messages: ["Why is one half bigger than one third?"]
expect: {first_speaker: teacher, end_reasons: [cue_user]}
"""
CALLS_PER_RUN = 3


def rss_mb() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def write_scenario(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    scenario = folder / "bench.yaml"
    scenario.write_text(SCENARIO)
    return scenario


async def batch(base_url: str, folder: Path, runs: int, concurrency: int, client: str) -> tuple[float, int]:
    specs = expand([folder / "bench.yaml"], ["openai/loopback"], runs, None, [], client=client)
    context = RunContext(out=folder / "out", clients=client_pool(api_base=base_url, router_file=None, seed=None,
                                                                 structured="json_schema", temperature=None,
                                                                 client=client))
    start = time.perf_counter()
    results, _ = await run_all(specs, context, concurrency, lambda result: None)
    elapsed = time.perf_counter() - start
    return elapsed, sum(1 for r in results if r.passed)


def start_server() -> tuple[subprocess.Popen[str], str]:
    """The loopback server in its own process, so it does not share this one's GIL."""
    proc = subprocess.Popen([sys.executable, "-m", "maic_cli.testing.openai_server", "--reply", REPLY,
                             "--latency", str(LATENCY), "--classroom"], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    return proc, proc.stdout.readline().strip()


def measure(client: str, base_url: str, runs: int, concurrency: int) -> bool:
    with tempfile.TemporaryDirectory() as tmp:
        write_scenario(Path(tmp) / "warm")
        write_scenario(Path(tmp) / "run")
        asyncio.run(batch(base_url, Path(tmp) / "warm", 5, 5, client))  # warm-up: imports, first connections
        before = rss_mb()
        elapsed, passed = asyncio.run(batch(base_url, Path(tmp) / "run", runs, concurrency, client))
        growth = rss_mb() - before
    ideal = runs * CALLS_PER_RUN * LATENCY / concurrency
    ratio = elapsed / ideal
    ok = ratio <= 1.25 and growth < 100 and passed == runs
    print(f"--client {client:<8} runs {runs} (passed {passed}) at concurrency {concurrency}: wall {elapsed:.2f} s, "
          f"ideal {ideal:.2f} s, ratio {ratio:.2f} (target <= 1.25); memory growth {growth:.1f} MB (< 100)"
          f"  {'ok' if ok else 'MISSED'}")
    return ok


def main() -> int:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    concurrency = int(sys.argv[2]) if len(sys.argv) > 2 else 50
    import_litellm()
    gc.freeze()  # as maic run does: litellm's import leaves a big heap the collector need not rescan
    proc, base_url = start_server()
    try:
        direct = measure("direct", base_url, runs, concurrency)
        measure("litellm", base_url, runs, concurrency)  # for reference: litellm's own CPU cost per call
    finally:
        proc.terminate()
    print("target met (--client direct)" if direct else "TARGET MISSED")
    return 0 if direct else 1


if __name__ == "__main__":
    sys.exit(main())
