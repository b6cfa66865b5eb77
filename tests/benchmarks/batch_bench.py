"""Benchmark: `maic run` machinery against the loopback server with 200 ms latency per call.

Run:  python tests/benchmarks/batch_bench.py [RUNS] [CONCURRENCY]

200 runs of a one-agent scenario (one model call per run, through real litellm
streaming) at concurrency 50.  The ideal time is the calls' latency divided by
the concurrency (200 × 0.2 s / 50 = 0.8 s).  Prints the wall time, its ratio to
the ideal (target ≤ 1.25) and the growth of resident memory during the batch
(target < 100 MB; measured after litellm is imported and warmed up).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from maic_cli.cli.batch import RunContext, run_all  # noqa: E402
from maic_cli.cli.run_cmd import expand, llm_factory  # noqa: E402
from maic_cli.llm.litellm_client import import_litellm  # noqa: E402
from maic_cli.testing.openai_server import LoopbackOpenAIServer, ServedReply  # noqa: E402

LATENCY = 0.2
REPLY = json.dumps([{"type": "text", "content": "Half of a pizza is more than a third of it."}])
SCENARIO = """id: bench
class: {agents: [teacher]}
messages: ["Why is one half bigger than one third?"]
expect: {first_speaker: teacher, end_reasons: [cue_user]}
"""


def rss_mb() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


async def batch(base_url: str, folder: Path, runs: int, concurrency: int) -> tuple[float, int]:
    folder.mkdir(parents=True, exist_ok=True)
    scenario = folder / "bench.yaml"
    scenario.write_text(SCENARIO)
    specs = expand([scenario], ["openai/loopback"], runs, None, [])
    context = RunContext(out=folder / "out", make_llm=llm_factory(api_base=base_url, router_file=None, seed=None,
                                                                  structured="off", temperature=None))
    start = time.perf_counter()
    results, _ = await run_all(specs, context, concurrency, lambda result: None)
    elapsed = time.perf_counter() - start
    return elapsed, sum(1 for r in results if r.passed)


def main() -> int:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    concurrency = int(sys.argv[2]) if len(sys.argv) > 2 else 50
    import_litellm()
    reply = ServedReply(REPLY, chunk_size=16, latency=LATENCY)
    with LoopbackOpenAIServer(default=reply) as server, tempfile.TemporaryDirectory() as tmp:
        asyncio.run(batch(server.base_url, Path(tmp) / "warm", 5, 5))  # warm-up: imports, first connections
        before = rss_mb()
        elapsed, passed = asyncio.run(batch(server.base_url, Path(tmp), runs, concurrency))
        growth = rss_mb() - before
        calls = len(server.requests) - 5
    ideal = calls * LATENCY / concurrency
    ratio = elapsed / ideal
    print(f"runs {runs} (passed {passed}), model calls {calls}, concurrency {concurrency}, latency {LATENCY}s")
    print(f"wall time {elapsed:.2f} s, ideal {ideal:.2f} s, ratio {ratio:.2f} (target <= 1.25)")
    print(f"resident memory growth {growth:.1f} MB (target < 100)")
    ok = ratio <= 1.25 and growth < 100 and passed == runs
    print("all targets met" if ok else "TARGETS MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
