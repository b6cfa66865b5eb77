"""Benchmark: `maic run` against the loopback server with 200 ms latency per call.

Run:  python tests/benchmarks/batch_bench.py [RUNS] [CONCURRENCY] [--phases] [--machinery]

First, the command as a user types it, with default flags: ``maic run bench.yaml --model
openai/loopback --api-base URL --repeat RUNS -j CONCURRENCY --out DIR`` in its own process, timed
from start to exit (start-up, the batch, the report).  The default client follows the
server (an ``openai/`` model with ``--api-base``: the direct client, llm/spec.py).  Target: at
most 1.5× the ideal for 1,000 runs at -j 50.

Each run is a two-agent class (director → teacher → director, three streamed model
calls) against the loopback server (aiohttp, asynchronous like a real inference server)
in its own process.  The ideal time is the calls' latency divided by the concurrency
(1,000 × 3 × 0.2 s / 50 = 12 s).

``--phases`` runs the same command once more through a small wrapper that reports the CPU seconds
of its start-up, its batch and its report apart (the wrapper patches ``asyncio.run`` and
``save_reports`` to take the time; nothing else changes).

``--machinery`` also times the batch machinery in this process (no start-up, no report)
for ``--client direct`` (target ≤ 1.25, memory growth < 100 MB) and, for reference,
litellm, whose own CPU cost per call (about 18 ms here) bounds a batch at about 50
calls a second.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from maic_cli.cli.batch_plan import client_pool, expand
from maic_cli.evaluation.batch import RunContext, run_all
from maic_cli.llm.litellm_client import import_litellm
from maic_cli.report.chart_worker import prepare
from maic_cli.testing.openai_server import LoopbackOpenAIServer, ServedReply

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
    specs = expand([folder / "bench.yaml"], ["openai/loopback"], runs, None, [], client=client, api_base=base_url)
    context = RunContext(out=folder / "out", clients=client_pool(api_base=base_url, router_file=None, seed=None,
                                                                 structured="json_schema", temperature=None))
    start = time.perf_counter()
    prepare(len(specs))  # as `maic run` does: the report's charts get ready while the runs play
    results, _ = await run_all(specs, context, concurrency, lambda result: None)
    elapsed = time.perf_counter() - start
    return elapsed, sum(1 for r in results if r.passed)


def classroom_by_prompt(body: dict[str, Any]) -> ServedReply:
    """The loopback class without a reply schema (``maic run``'s default flags send none to a server it
    cannot ask): a director call (its prompt's first words) picks the teacher until the teacher's reply is
    in what it was shown, then the learner; an agent says ``REPLY``."""
    messages = body.get("messages") or [{}]
    text = "\n".join(str(m.get("content", "")) for m in messages if isinstance(m, dict))
    if not str(messages[0].get("content", "")).startswith("You are the director"):
        return ServedReply(REPLY, chunk_size=16, latency=LATENCY)
    pick = "USER" if "Half of a pizza" in text else "teacher"
    return ServedReply(json.dumps({"next_agent": pick}), chunk_size=16, latency=LATENCY)


def serve() -> None:
    """``batch_bench.py --serve``: the loopback server in this process until it is terminated."""
    import threading

    server = LoopbackOpenAIServer(responder=classroom_by_prompt)
    server.record = False
    server.start()
    print(server.base_url, flush=True)
    threading.Event().wait()


def start_server() -> tuple[subprocess.Popen[str], str]:
    """The loopback server in its own process, so it does not share this one's GIL."""
    proc = subprocess.Popen([sys.executable, __file__, "--serve"], stdout=subprocess.PIPE, text=True)
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


def measure_command(base_url: str, runs: int, concurrency: int) -> bool:
    """``maic run`` with default flags, as its own process: start-up, the batch and the report."""
    with tempfile.TemporaryDirectory() as tmp:
        scenario = write_scenario(Path(tmp))
        command = [sys.executable, "-m", "maic_cli", "run", str(scenario), "--model", "openai/loopback",
                   "--api-base", base_url, "--repeat", str(runs), "-j", str(concurrency),
                   "--out", str(Path(tmp) / "out")]
        env = {**os.environ, "MAIC_HOME": str(Path(tmp) / "home")}
        cpu_before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600)
        elapsed = time.perf_counter() - start
        cpu_after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (cpu_after.ru_utime - cpu_before.ru_utime) + (cpu_after.ru_stime - cpu_before.ru_stime)
        report = json.loads((Path(tmp) / "out" / "report.json").read_text()) if done.returncode == 0 else {}
        passed = report.get("overall", {}).get("passed", 0) if done.returncode == 0 else 0
    ideal = runs * CALLS_PER_RUN * LATENCY / concurrency
    ratio = elapsed / ideal
    ok = done.returncode == 0 and ratio <= 1.5
    print(f"maic run (default flags) runs {runs} (exit {done.returncode}, passed {passed}) at -j {concurrency}: "
          f"wall {elapsed:.2f} s including start-up and report, ideal {ideal:.2f} s, ratio {ratio:.2f} "
          f"(target <= 1.5)  {'ok' if ok else 'MISSED'}; CPU time of maic run {cpu:.2f} s "
          f"(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")
    if done.returncode != 0:
        print(done.stderr[-2000:])
    return ok


PHASES = """
import asyncio, os, resource, runpy, sys, time
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
marks = {}
walls = {"start": time.perf_counter()}
import gc
collecting = {"since": 0.0, "total": 0.0, "count": 0}
def on_gc(phase, info):
    if phase == "start":
        collecting["since"] = time.perf_counter()
    else:
        collecting["total"] += time.perf_counter() - collecting["since"]
        collecting["count"] += 1
gc.callbacks.append(on_gc)
real_run = asyncio.run
def timed_run(coro, **kw):
    marks["batch"], walls["batch"] = cpu(), time.perf_counter()
    try:
        return real_run(coro, **kw)
    finally:
        marks["batch_end"], walls["batch_end"] = cpu(), time.perf_counter()
asyncio.run = timed_run
import maic_cli.report.batch_summary as summary
real_save = summary.save_reports
def timed_save(*a, **k):
    marks["report"], walls["report"] = cpu(), time.perf_counter()
    try:
        return real_save(*a, **k)
    finally:
        marks["report_end"], walls["report_end"] = cpu(), time.perf_counter()
        line = (f"PHASES start-up {marks['batch']:.2f} s, batch {marks['batch_end'] - marks['batch']:.2f} s, "
                f"report {marks['report_end'] - marks['report']:.2f} s CPU; wall: start-up "
                f"{walls['batch'] - walls['start']:.2f} s (after the interpreter's own), batch "
                f"{walls['batch_end'] - walls['batch']:.2f} s, report {walls['report_end'] - walls['report']:.2f} s; "
                f"garbage collection {collecting['total']:.2f} s in {collecting['count']} passes\\n")
        os.write(2, line.encode())  # past whatever maic made of sys.stderr
summary.save_reports = timed_save
sys.argv = ["maic", *sys.argv[1:]]
runpy.run_module("maic_cli", run_name="__main__")
"""


def measure_phases(base_url: str, runs: int, concurrency: int) -> None:
    """CPU seconds of ``maic run``'s start-up (imports, planning), batch and report, each apart."""
    with tempfile.TemporaryDirectory() as tmp:
        scenario = write_scenario(Path(tmp))
        command = [sys.executable, "-c", PHASES, "run", str(scenario), "--model", "openai/loopback",
                   "--api-base", base_url, "--repeat", str(runs), "-j", str(concurrency),
                   "--out", str(Path(tmp) / "out")]
        env = {**os.environ, "MAIC_HOME": str(Path(tmp) / "home")}
        done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600)
    phases = [line for line in done.stderr.splitlines() if line.startswith("PHASES ")]
    print(f"maic run phases: {phases[-1][7:] if phases else 'not measured (exit ' + str(done.returncode) + ')'} "
          f"(load average {os.getloadavg()[0]:.1f})")


def main() -> int:
    if "--serve" in sys.argv:
        serve()
        return 0
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    runs = int(args[0]) if args else 1000
    concurrency = int(args[1]) if len(args) > 1 else 50
    proc, base_url = start_server()
    try:
        ok = measure_command(base_url, runs, concurrency)
        if "--phases" in sys.argv:
            measure_phases(base_url, runs, concurrency)
        if "--machinery" in sys.argv:
            import_litellm()
            gc.freeze()  # as maic run does: litellm's import leaves a big heap the collector need not rescan
            ok = measure("direct", base_url, runs, concurrency) and ok
            measure("litellm", base_url, runs, concurrency)  # for reference: litellm's own CPU cost per call
    finally:
        proc.terminate()
    print("target met" if ok else "TARGET MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
