"""Benchmark: how good is an offline class?  The built-in model, the default class of six.

Run:  python tests/benchmarks/offline_quality.py [--seed N] [--show]   (needs the offline extra)

Plays six ordinary learner questions, one round each, with the default class
(``agents/``) on the built-in offline model (SmolLM2-135M through llama.cpp, compact
prompts, as ``maic chat`` uses it), then prints what a watcher would notice:

* clean prose: speech with no braces, brackets, escapes or JSON fragments;
* stray quotes: speech that opens with a quote mark;
* verbatim repeats: a reply (nearly) identical to an earlier reply of the session, to an
  example reply written in the prompt templates, or to an earlier question; and replies
  with a long sentence copied from an earlier reply;
* cut replies: speech that stops mid-sentence (no final . ! ? …);
* rounds with two or more speakers;
* markup in speech (``**``, backticks, headings, bullets, HTML tags);
* students (and the assistant) clearing or deleting board elements;
* the median and worst time per round.

Targets (issue 12): 100% clean, 0 repeats, 0 cut, >= 2/3 of rounds with two or more
speakers, 0 markdown, 0 student clears, median round <= 30 s.  ``--show`` prints every reply.
"""

from __future__ import annotations

import argparse
import asyncio
import difflib
import re
import statistics
import sys
import time
from dataclasses import dataclass, field

from maic_cli.engine.classroom import Classroom
from maic_cli.engine.models import TurnConfig, UserProfile
from maic_cli.engine.round import run_round
from maic_cli.llm.local import LocalLlamaClient
from maic_cli.llm.recording import CallRecord, RecordingLLM
from maic_cli.store.personas import load_registry

QUESTIONS = [
    "Why do we have seasons?",
    "How does a vaccine teach the body to fight a virus?",
    "What is the difference between weather and climate?",
    "Why does ice float on water?",
    "How do plants make food from sunlight?",
    "What does a fraction like 3/4 actually mean?",
]
PROFILE = UserProfile(nickname="Sam", bio="15 years old, likes football, finds physics hard")
NOT_PROSE = re.compile(r'[{}\[\]]|\\[nut"\\]|"(type|content|name|params)"\s*:')
MARKDOWN = re.compile(r"\*\*|__|`|^\s*#{1,6}\s|^\s*[-*+]\s|^\s*\d+\.\s|</?[a-z][a-z0-9]*>", re.MULTILINE)
SENTENCE_END = re.compile(r"[.!?…]['\")\]]*\s*$")
REPEAT_RATIO = 0.8  # difflib ratio: 0.8 catches a copy with a few words changed
CLEARS = {"wb_clear", "wb_delete"}
EXAMPLE = re.compile(r'"content": ?"([^"]{20,})"')


def prompt_examples() -> list[str]:
    """The example replies written in the built-in prompt templates (a small model may copy them)."""
    try:
        from maic_cli.engine.prompt_set import PromptSet
    except ImportError:  # before the prompts were templates
        return []
    builtin = PromptSet.builtin()
    return [m for name in builtin.names for m in EXAMPLE.findall(builtin.source(name).text)]


@dataclass
class Reply:
    round: int
    agent_id: str
    role: str
    text: str
    actions: list[str] = field(default_factory=list)


def sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?…])\s+", text) if len(s) >= 40]


def copies_a_sentence(text: str, earlier: list[str]) -> bool:
    """A long sentence of ``text`` is (nearly) one of an earlier reply's sentences."""
    theirs = [s for e in earlier for s in sentences(e)]
    return any(is_repeat(mine, theirs) for mine in sentences(text))


def is_repeat(text: str, earlier: list[str]) -> bool:
    norm = " ".join(text.lower().split())
    if len(norm) < 20:
        return False
    return any(difflib.SequenceMatcher(None, norm, " ".join(e.lower().split())).ratio() >= REPEAT_RATIO
               for e in earlier)


def describe_calls(calls: list[CallRecord]) -> str:
    """Where a round's time went: per purpose, calls, seconds, prompt/cached/completion tokens."""
    parts = []
    for purpose in ("director", "agent"):
        mine = [c for c in calls if c.purpose == purpose]
        tokens = [sum(c.usage.get(k, 0) for c in mine) for k in ("prompt_tokens", "cached_tokens", "completion_tokens")]
        parts.append(f"{purpose} {len(mine)} calls {sum(c.duration for c in mine):.1f} s "
                     f"prompt {tokens[0]} cached {tokens[1]} out {tokens[2]}")
    return "; ".join(parts)


async def play(seed: int) -> tuple[list[Reply], list[float], list[list[str]]]:
    registry = load_registry()
    agents = registry.agents
    calls: list[CallRecord] = []
    llm = RecordingLLM(LocalLlamaClient(seed=seed), calls.append)
    classroom = Classroom()
    ids = sorted(agents, key=lambda i: -agents[i].priority)
    config = TurnConfig(agent_ids=ids, compact_prompts=True)
    replies: list[Reply] = []
    times: list[float] = []
    speakers: list[list[str]] = []
    for number, question in enumerate(QUESTIONS, 1):
        classroom.add_learner_message(question)
        before, first_call = len(classroom.messages), len(calls)
        start = time.monotonic()
        result = await run_round(classroom, config, llm, registry=agents, profile=PROFILE)
        times.append(time.monotonic() - start)
        speakers.append(result.speakers)
        for message in classroom.messages[before:]:
            if message.role == "agent" and message.agent_id:
                replies.append(Reply(number, message.agent_id, agents[message.agent_id].role,
                                     message.text.strip(), [a.name for a in message.actions]))
        print(f"round {number}: {times[-1]:.1f} s, {result.reason}, speakers {result.speakers}; "
              f"{describe_calls(calls[first_call:])}", flush=True)
    return replies, times, speakers


def report(replies: list[Reply], times: list[float], speakers: list[list[str]], show: bool) -> None:
    spoken = [r for r in replies if r.text]
    clean = [r for r in spoken if not NOT_PROSE.search(r.text)]
    quotes = [r for r in spoken if r.text[:1] in "\"'“"]
    cut = [r for r in spoken if not SENTENCE_END.search(r.text)]
    markdown = [r for r in spoken if MARKDOWN.search(r.text)]
    repeats = [r for i, r in enumerate(spoken) if is_repeat(r.text, [e.text for e in spoken[:i]])]
    copied = [r for i, r in enumerate(spoken) if copies_a_sentence(r.text, [e.text for e in spoken[:i]])]
    examples = prompt_examples()
    copies = [r for r in spoken if is_repeat(r.text, examples)]
    asked = [r for r in spoken if is_repeat(r.text, QUESTIONS[:r.round - 1])]
    clears = [r for r in replies if r.role != "teacher" and CLEARS & set(r.actions)]
    multi = sum(1 for s in speakers if len(set(s)) >= 2)
    n = len(spoken) or 1
    print()
    print(f"replies with speech:        {len(spoken)} (of {len(replies)} agent turns)")
    print(f"clean prose:                {len(clean)}/{len(spoken)} ({len(clean) / n:.0%})")
    print(f"stray opening quote:        {len(quotes)}")
    print(f"verbatim repeats:           {len(repeats)}")
    print(f"replies copying a sentence: {len(copied)}")
    print(f"copies of a prompt example: {len(copies)}")
    print(f"copies of an earlier question: {len(asked)}")
    print(f"cut mid-sentence:           {len(cut)}")
    print(f"rounds with >= 2 speakers:  {multi}/{len(speakers)}")
    print(f"markdown/markup in speech:  {len(markdown)}")
    print(f"non-teachers clear/delete:  {len(clears)}")
    print(f"time per round:             median {statistics.median(times):.1f} s, max {max(times):.1f} s")
    print(f"speakers per round:         {[len(s) for s in speakers]}")
    unclean = [r for r in spoken if all(r is not c for c in clean)]
    groups = {"NOT-CLEAN": unclean, "CUT": cut, "MARKDOWN": markdown, "REPEAT": repeats,
              "COPIED-SENTENCE": copied, "QUOTE": quotes, "EXAMPLE-COPY": copies, "OLD-QUESTION": asked}
    print()
    for r in replies:
        marks = [name for name, group in groups.items() if any(x is r for x in group)]
        if show or marks:
            actions = f" actions={r.actions}" if r.actions else ""
            print(f"[round {r.round}] {r.agent_id} ({r.role}){actions} {' '.join(marks)}\n  {r.text!r}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--show", action="store_true", help="print every reply, not only the flagged ones")
    args = parser.parse_args()
    replies, times, speakers = asyncio.run(play(args.seed))
    report(replies, times, speakers, args.show)
    return 0


if __name__ == "__main__":
    sys.exit(main())
