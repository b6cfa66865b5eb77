"""Benchmark: would the offline model (SmolLM2-135M) help choose among close faq candidates?  (issue 37 item 1)

Run:  python tests/benchmarks/faq_chooser.py   (needs the offline extra; tune sets only, never faq_heldout.yaml)

For each tuning question whose best two faqs (different answers) are close — the best near or over the
threshold, leading the next by less than the margin, so lessons/faq.py's :func:`match` says none — the model
is shown the learner's question and the two faqs' first phrasings, and picks one or "none" (constrained to a
letter).  It counts right, wrong and missed against what ``match`` does without it (always missed there).
Measured: 4 right, 3 wrong, 1 missed of 8, against 1 right (a none), 0 wrong, 7 missed: the model picks the
first option offered most of the time, and a wrong match is the worst outcome, so no chooser is used.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import yaml

from maic_cli.engine.addressing import without_call
from maic_cli.engine.models import AgentConfig
from maic_cli.lessons import faq
from maic_cli.lessons.lesson import Lesson
from maic_cli.llm.local import LocalLlamaClient
from maic_cli.llm.port import LLMRequest
from tests.benchmarks.faq_match import lesson_of, verdict

HERE = Path(__file__).resolve().parent
TUNE = [HERE / "faq_tune.yaml", HERE / "faq_tune_magnets.yaml"]
NEAR = 0.1  # how far under the threshold a best faq still counts as close


async def choose(llm: LocalLlamaClient, question: str, options: list[str]) -> str | None:
    letters = "ABC"[:len(options)]
    prompt = (f'A student asks: "{question}"\nWhich of these questions asks the same thing?\n'
              + "\n".join(f"{letter}: {option}" for letter, option in zip(letters, options, strict=True))
              + "\nN: none of them\nAnswer with one letter.")
    schema = {"type": "object", "properties": {"answer": {"type": "string", "enum": [*letters, "N"]}},
              "required": ["answer"]}
    said = ""
    async for piece in llm.stream(LLMRequest(messages=[{"role": "user", "content": prompt}], purpose="judge",
                                             response_schema=schema, temperature=0, max_tokens=20)):
        said += piece.text or ""
    try:
        letter = json.loads(said)["answer"]
    except (ValueError, KeyError, TypeError):
        return None
    return None if letter == "N" else options[letters.index(letter)]


async def main() -> None:
    llm = LocalLlamaClient(name="local")
    cache: dict[str, tuple[Lesson, list[AgentConfig]]] = {}
    chosen = {"right": 0, "wrong": 0, "missed": 0}
    alone = dict(chosen)
    for path in TUNE:
        items: list[dict[str, Any]] = yaml.safe_load(path.read_text(encoding="utf-8"))
        for item in items:
            lesson, members = lesson_of(item["lesson"], cache)
            about = without_call(item["question"], members)
            ranked = faq.scores(lesson, about, item["scene"], [a.name for a in members])
            if not ranked:
                continue
            best, score = ranked[0]
            others = [(e, s) for e, s in ranked[1:] if e.faq.a.strip() != best.faq.a.strip()]
            if not others or score < faq.THRESHOLD - NEAR or score - others[0][1] >= faq.MARGIN:
                continue
            got = await choose(llm, about, [best.faq.phrasings[0], others[0][0].faq.phrasings[0]])
            chosen[verdict(item, got)] += 1
            alone[verdict(item, None)] += 1
            print(f"{verdict(item, got)}: {about!r} -> {got!r}", flush=True)
    print(f"close cases: the model choosing {chosen}; match alone {alone}")


if __name__ == "__main__":
    asyncio.run(main())
