"""Benchmark: what the reply checks (junk, a learner's voice, a prompt's examples) hold back on the built-in
offline model.

Run:  python tests/benchmarks/hygiene_bench.py [--seed N] [--show]   (needs the offline extra)

Plays ordinary learner questions, one round each, with the default class on SmolLM2-135M as
``maic chat --model local`` runs it (compact prompts, the ``rules`` director), and compares what
the model wrote (every agent call's raw reply, retries included) with what the class showed:

* junk: addresses, URLs, paths, hashes and random tokens (replies/junk.py) in speech and board text;
* learner voice: sentences in which an agent speaks as the learner (replies/speech.py);
* example echoes: five words in a row of the prompt's own example sentences;
* dropped replies (no turn) and shown empty turns (must be 0), and calls asked again.

``--show`` prints every shown reply.
"""

from __future__ import annotations

import argparse
import asyncio

from maic_cli.engine.classroom import Classroom
from maic_cli.engine.events import Event
from maic_cli.engine.models import TurnConfig, UserProfile
from maic_cli.engine.policies import builtin_policy
from maic_cli.engine.round import run_round
from maic_cli.llm.local import LocalLlamaClient
from maic_cli.llm.recording import CallRecord, RecordingLLM
from maic_cli.replies.junk import drawn_text, find_junk
from maic_cli.replies.parser import StructuredStreamParser
from maic_cli.replies.parser_items import ActionItem, TextItem
from maic_cli.replies.speech import echoes_example, example_sentences, speaks_as_learner, split_sentences
from maic_cli.store.personas import load_registry

QUESTIONS = [
    "Why does it rain?",
    "How does a for loop work in Python?",
    "Is zero even?",
    "What is a fraction?",
    "Can you draw the water cycle on the board?",
    "Where can I read more about volcanoes?",
]
PROFILE = UserProfile(nickname="Ana", bio="Python beginner, 14 years old")


def raw_items(raw: str) -> tuple[str, list[dict[str, object]]]:
    parser = StructuredStreamParser()
    items = parser.feed(raw) + parser.finish()
    speech = " ".join(i.content for i in items if isinstance(i, TextItem))
    return speech, [i.params for i in items if isinstance(i, ActionItem)]


def count(speech: str, boards: list[dict[str, object]], role: str, name: str, examples: list[str]) -> list[int]:
    sentences = split_sentences(speech)
    board = "\n".join(drawn_text(p) for p in boards)
    return [len(find_junk(speech)) + len(find_junk(board)),
            sum(speaks_as_learner(s, role, name, PROFILE.nickname, PROFILE.bio) for s in sentences),
            sum(echoes_example(s, examples) for s in sentences)]


async def play(seed: int, show: bool) -> None:
    registry = load_registry()
    agents = registry.agents
    calls: list[CallRecord] = []
    llm = RecordingLLM(LocalLlamaClient(seed=seed), calls.append)
    classroom = Classroom()
    config = TurnConfig(agent_ids=sorted(agents, key=lambda i: -agents[i].priority), compact_prompts=True)
    events: list[Event] = []
    raw_totals, shown_totals = [0, 0, 0], [0, 0, 0]
    for question in QUESTIONS:
        classroom.add_learner_message(question)
        before, first_call = len(classroom.messages), len(calls)
        await run_round(classroom, config, llm, registry=agents, profile=PROFILE,
                        policy=builtin_policy("rules"), on_event=events.append)
        for call in calls[first_call:]:
            if call.purpose != "agent" or not call.agent_id:
                continue
            agent = agents[call.agent_id]
            examples = example_sentences(call.messages[0]["content"])
            speech, params = raw_items(call.reply)
            if show:
                for junk in find_junk(speech + "\n" + "\n".join(drawn_text(p) for p in params)):
                    print(f"  written by {agent.name}, held back ({junk.kind}): {junk.text}")
                for sentence in split_sentences(speech):
                    if speaks_as_learner(sentence, agent.role, agent.name, PROFILE.nickname, PROFILE.bio):
                        print(f"  written by {agent.name}, held back (learner voice): {sentence.strip()}")
                    elif echoes_example(sentence, examples):
                        print(f"  written by {agent.name}, held back (example echo): {sentence.strip()}")
            raw_totals = [a + b for a, b in zip(raw_totals, count(speech, params, agent.role, agent.name, examples),
                                                strict=True)]
        for message in classroom.messages[before:]:
            if message.role != "agent" or not message.agent_id:
                continue
            agent = agents[message.agent_id]
            system = next((c.messages[0]["content"] for c in calls[first_call:] if c.agent_id == agent.id), "")
            shown = count(message.text, [a.params for a in message.actions], agent.role, agent.name,
                          example_sentences(system))
            shown_totals = [a + b for a, b in zip(shown_totals, shown, strict=True)]
            if show:
                print(f"  {agent.name}: {message.text} {[a.name for a in message.actions]}")
    done = [e for e in events if e.type == "done" and e.outcome is not None and e.outcome.kind == "agent"]
    empty_cards = sum(1 for m in classroom.messages if m.role == "agent" and not m.text.strip() and not m.actions)
    agent_calls = sum(1 for c in calls if c.purpose == "agent")
    turns = sum(1 for e in done if not e.reply_dropped)
    print(f"seed {seed}: {len(QUESTIONS)} rounds, {turns} turns, {agent_calls} agent calls "
          f"({agent_calls - len(done)} asked again), {sum(e.reply_dropped for e in done)} replies dropped whole, "
          f"{empty_cards} empty cards shown")
    for label, written, kept in zip(("junk spans", "learner-voice sentences", "example echoes"),
                                    raw_totals, shown_totals, strict=True):
        print(f"  {label}: written {written}, shown {kept}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--show", action="store_true")
    args = parser.parse_args()
    asyncio.run(play(args.seed, args.show))


if __name__ == "__main__":
    main()
