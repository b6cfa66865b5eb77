"""Benchmark: one class (3 learner messages) on the built-in offline model (SmolLM2-135M, 1 thread).

Run:  python tests/benchmarks/offline_bench.py      (needs the offline extra)

Prints one line per model call — purpose, agent, prompt tokens, tokens reused
from the llama.cpp prompt cache (and their share), time to first token,
completion tokens per second — then checks the target: from an agent's second
turn on, at least 70% of each of its prompts comes from the cache.
"""

from __future__ import annotations

import asyncio
import sys

from maic_cli.engine.classroom import Classroom
from maic_cli.engine.models import TurnConfig
from maic_cli.engine.round import run_round
from maic_cli.llm.local import LocalLlamaClient
from maic_cli.llm.recording import CallRecord, RecordingLLM
from maic_cli.store.personas import load_registry

LEARNER = ["Why is the sky blue?", "Then why are sunsets red?", "Can you sum it up in one sentence?"]
CLASS = ["teacher", "curious_student", "note_taker"]
TARGET = 0.70


async def main() -> int:
    registry = load_registry()
    calls: list[CallRecord] = []
    llm = RecordingLLM(LocalLlamaClient(seed=7), calls.append)
    classroom = Classroom()
    config = TurnConfig(agent_ids=CLASS, max_turns=3, compact_prompts=True)
    for text in LEARNER:
        classroom.add_learner_message(text)
        await run_round(classroom, config, llm, registry=registry.agents)
    print(f"{'#':>3} {'call':<8} {'agent':<16} {'prompt':>6} {'cached':>6} {'share':>6} {'ttft s':>7} "
          f"{'tok/s':>6}  agent turn")
    seen: dict[str, int] = {}
    shares = []
    for number, call in enumerate(calls, 1):
        prompt = call.usage.prompt_tokens
        cached = call.usage.cached_tokens
        completion = call.usage.completion_tokens
        generating = call.duration - (call.ttft or 0)
        speed = completion / generating if generating > 0 else 0.0
        share = cached / prompt if prompt else 0.0
        turn = ""
        if call.purpose == "agent" and call.agent_id:
            seen[call.agent_id] = seen.get(call.agent_id, 0) + 1
            turn = str(seen[call.agent_id])
            if seen[call.agent_id] >= 2:
                shares.append(share)
        print(f"{number:>3} {call.purpose:<8} {call.agent_id or '':<16} {prompt:>6} {cached:>6} {share:>6.0%} "
              f"{call.ttft or 0:>7.2f} {speed:>6.1f}  {turn}")
    if not shares:
        print("no agent spoke twice: the cache target could not be measured")
        return 1
    worst = min(shares)
    print(f"agent prompts from the 2nd turn on: {len(shares)}; reused from cache: min {worst:.0%}, "
          f"mean {sum(shares) / len(shares):.0%} (target >= {TARGET:.0%})")
    ok = worst >= TARGET
    print("target met" if ok else "TARGET MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
