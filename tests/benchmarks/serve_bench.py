"""Benchmark: turns through one ``maic serve`` instance against a loopback model with 200 ms per call.

Run:  python tests/benchmarks/serve_bench.py [--turns 1000] [--clients 100] [--latency 0.2] [--hold 100]
                                            [--probe 100]

The model is the loopback OpenAI-compatible server in its own process (asynchronous, like vLLM); the
server is a real ``maic serve`` process (``--model openai/loopback --api-base URL --director rules``: one
model call per turn, the direct client); the clients are ``--clients`` aiohttp tasks in this process,
each sending one ``POST /v1/turn`` at a time (a one-question class) until ``--turns`` are done.

It reports:

* wall time against the ideal (turns × latency / clients; goal ≤ 1.2×);
* the server's CPU per turn (utime + stime of its process, /proc) against the same turns played in
  process (``generate_turn`` on the same client, at the same concurrency, this process's CPU);
* the first-event latency: from sending a request to its first ``data:`` line (the turn's first event
  comes before its model call, so this is what the server adds; goal ≤ 5 ms median), beside the same
  in process (from calling ``generate_turn`` to its first event), and with ``--probe`` turns sent one
  at a time (what the server adds without queueing behind the other clients' turns);
* memory per open stream: the server's RSS with ``--hold`` turns held open (the model answering after
  3 s) against its RSS before, divided by ``--hold``.

The machine is shared: run it when it is quiet, and read the numbers as an upper bound.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import aiohttp

from maic_cli.engine.models import Message, MessagePart, TurnConfig, TurnRequest
from maic_cli.serve.wire import encode_request
from maic_cli.testing.openai_server import LoopbackOpenAIServer, ServedReply
from maic_cli.testing.serve_process import ServeProcess

REPLY = json.dumps([{"type": "text", "content": "Half of a pizza is more than a third of it."}])
REQUEST = TurnRequest(messages=[Message(role="user", parts=[MessagePart(kind="text", text="Why is 1/2 > 1/3?")])],
                      config=TurnConfig(agent_ids=["teacher", "curious_student"], director="rules"))


def serve_model(latency: float) -> None:
    """``serve_bench.py --model-server LATENCY``: the loopback model in this process until terminated."""
    import threading

    server = LoopbackOpenAIServer(default=ServedReply(REPLY, chunk_size=16, latency=latency))
    server.record = False
    server.start()
    print(server.base_url, flush=True)
    threading.Event().wait()


def start_model(latency: float) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen([sys.executable, __file__, "--model-server", str(latency)], stdout=subprocess.PIPE,
                            text=True)
    assert proc.stdout is not None
    return proc, proc.stdout.readline().strip()


def cpu_of(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


async def one_turn(session: aiohttp.ClientSession, url: str, body: bytes) -> float:
    """Send one turn; the seconds to its first event (the stream is read to its done)."""
    start = time.perf_counter()
    first = None
    async with session.post(url + "/v1/turn", data=body, headers={"Content-Type": "application/json"}) as answer:
        assert answer.status == 200, answer.status
        async for line in answer.content:
            if line.startswith(b"data:"):
                if first is None:
                    first = time.perf_counter() - start
                if b'"type":"done"' in line:
                    break
    assert first is not None
    return first


async def drive(url: str, turns: int, clients: int) -> tuple[float, list[float]]:
    body = encode_request(REQUEST)
    left = turns
    firsts: list[float] = []

    async def client(session: aiohttp.ClientSession) -> None:
        nonlocal left
        while left > 0:
            left -= 1
            firsts.append(await one_turn(session, url, body))

    connector = aiohttp.TCPConnector(limit=clients)
    async with aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=600)) as session:
        await one_turn(session, url, body)  # warm: templates compiled, a connection open
        start = time.perf_counter()
        await asyncio.gather(*(client(session) for _ in range(clients)))
        return time.perf_counter() - start, firsts


async def in_process(base_url: str, turns: int, clients: int) -> tuple[float, float, list[float]]:
    """The same turns through ``generate_turn`` here: wall, CPU seconds, first-event latencies."""
    from maic_cli.engine.policies import builtin_policy
    from maic_cli.engine.turn import generate_turn
    from maic_cli.llm.factory import make_llm
    from maic_cli.llm.spec import ModelSpec
    from maic_cli.store.personas import load_registry

    llm = make_llm(ModelSpec.parse("openai/loopback", client="auto", api_base=base_url), api_base=base_url)
    registry = load_registry().agents
    policy = builtin_policy("rules")
    left = turns
    firsts: list[float] = []

    async def turn() -> None:
        start = time.perf_counter()
        first = None
        async for _event in generate_turn(REQUEST, llm, registry, policy=policy):
            if first is None:
                first = time.perf_counter() - start
        assert first is not None
        firsts.append(first)

    async def client() -> None:
        nonlocal left
        while left > 0:
            left -= 1
            await turn()

    await turn()
    firsts.clear()
    usage = resource.getrusage(resource.RUSAGE_SELF)
    cpu = usage.ru_utime + usage.ru_stime
    start = time.perf_counter()
    await asyncio.gather(*(client() for _ in range(clients)))
    wall = time.perf_counter() - start
    usage = resource.getrusage(resource.RUSAGE_SELF)
    close = getattr(llm, "aclose", None)
    if close is not None:
        await close()
    return wall, usage.ru_utime + usage.ru_stime - cpu, firsts


async def hold_open(url: str, server: ServeProcess, count: int) -> float:
    """The server's RSS growth per open turn, with ``count`` turns waiting on a slow model."""
    assert server.process is not None
    body = encode_request(REQUEST)
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=count + 1)) as session:
        await one_turn(session, url, body)  # warm: templates compiled
        before = rss_mb(server.process.pid)
        tasks = [asyncio.create_task(one_turn(session, url, body)) for _ in range(count)]
        peak = before
        while not all(task.done() for task in tasks):
            async with session.get(url + "/metrics") as answer:
                text = await answer.text()
            if f"maic_turns_in_flight {count}" in text:
                peak = max(peak, rss_mb(server.process.pid))
            await asyncio.sleep(0.05)
        await asyncio.gather(*tasks)
    return (peak - before) / count * 1024


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=1000)
    parser.add_argument("--clients", type=int, default=100)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--hold", type=int, default=100, help="turns held open for the memory per stream (0: skip)")
    parser.add_argument("--probe", type=int, default=100, help="turns one at a time: the latency the server adds "
                        "without queueing (0: skip)")
    parser.add_argument("--model-server", type=float, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.model_server is not None:
        serve_model(args.model_server)
        return
    model, base_url = start_model(args.latency)
    slow, slow_url = start_model(3.0) if args.hold else (None, "")
    try:
        with ServeProcess("--model", "openai/loopback", "--api-base", base_url, "--director", "rules",
                          env={"LITELLM_LOCAL_MODEL_COST_MAP": "True"}) as server:
            assert server.process is not None
            pid = server.process.pid
            asyncio.run(drive(server.url, 1, 1))  # warm the server
            cpu_before = cpu_of(pid)
            wall, firsts = asyncio.run(drive(server.url, args.turns, args.clients))
            server_cpu = cpu_of(pid) - cpu_before
            _, alone = asyncio.run(drive(server.url, args.probe, 1)) if args.probe else (0.0, [])
        ideal = args.turns * args.latency / args.clients
        local_wall, local_cpu, local_firsts = asyncio.run(in_process(base_url, args.turns, args.clients))
        print(f"{args.turns} turns, {args.clients} clients, {args.latency * 1000:.0f} ms model, one instance "
              f"({os.cpu_count()} cores, load {os.getloadavg()[0]:.1f})")
        print(f"  wall {wall:.2f} s, ideal {ideal:.2f} s: {wall / ideal:.2f}x (goal <= 1.2x); in process "
              f"{local_wall:.2f} s ({local_wall / ideal:.2f}x)")
        print(f"  CPU per turn: server {server_cpu / args.turns * 1000:.2f} ms, in process "
              f"{local_cpu / args.turns * 1000:.2f} ms")
        p95 = percentile(firsts, 0.95) * 1000
        print(f"  first event: median {statistics.median(firsts) * 1000:.2f} ms, p95 {p95:.2f} ms through the server "
              f"(goal <= 5 ms median); in process median "
              f"{statistics.median(local_firsts) * 1000:.3f} ms")
        if alone:
            print(f"  first event, one client at a time ({args.probe} turns): median "
                  f"{statistics.median(alone) * 1000:.2f} ms, p95 {percentile(alone, 0.95) * 1000:.2f} ms")
        if slow is not None:
            with ServeProcess("--model", "openai/loopback", "--api-base", slow_url, "--director", "rules") as held:
                per_stream = asyncio.run(hold_open(held.url, held, args.hold))
            print(f"  memory per open stream: {per_stream:.0f} KB ({args.hold} held open)")
    finally:
        for proc in (model, slow):
            if proc is not None:
                proc.terminate()
                proc.wait(10)


if __name__ == "__main__":
    main()
