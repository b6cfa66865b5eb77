"""Benchmark: how a learner's question is matched to a lesson's expected questions (``faq:``), quickly.

Run:  python tests/benchmarks/faq_match.py [FILE ...] [--show]   (default: faq_tune.yaml; pure, no model)

Each entry ``{lesson, scene, question, expect, also}`` (faq_tune.yaml's format) is asked as ``lessons/ask.py``
asks it — a classmate's call taken off (``without_call``), the class's names ignored, at its scene — and
scored: right (the faq named in ``expect:`` or in ``also:``), wrong (another faq, or any where ``expect:`` is
null), missed (none where one was expected).  Tune on faq_tune.yaml; report faq_heldout.yaml rarely.
``lesson:`` is a built-in lesson's name or a path to a lesson file.  It prints the time per question too.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import yaml

from maic_cli.engine.addressing import without_call
from maic_cli.engine.models import AgentConfig
from maic_cli.lessons.faq import match, scores
from maic_cli.lessons.lesson import Lesson
from maic_cli.store.lessons import load_lesson
from maic_cli.store.personas import DEFAULT_CLASS, load_registry

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent


def lesson_of(name: str, cache: dict[str, tuple[Lesson, list[AgentConfig]]]) -> tuple[Lesson, list[AgentConfig]]:
    if name not in cache:
        path = Path(name) if name.endswith((".yaml", ".yml")) else ROOT / "lessons" / f"{name}.yaml"
        lesson = load_lesson(path if path.is_absolute() else ROOT / path)
        registry = load_registry()
        ids = list(lesson.agents or [i for i in DEFAULT_CLASS if i in registry.agents])
        cache[name] = (lesson, registry.require(ids))
        match(lesson, "warm up")  # the lesson's index is built once a process: not timed
    return cache[name]


def verdict(item: dict[str, Any], got: str | None) -> str:
    right = {item["expect"], *(item.get("also") or [])} - {None}
    if got is None:
        return "missed" if right else "right"
    return "right" if got in right else "wrong"


def run(path: Path, show: bool) -> dict[str, int]:
    items = yaml.safe_load(path.read_text(encoding="utf-8"))
    cache: dict[str, tuple[Lesson, list[AgentConfig]]] = {}
    tally = {"right": 0, "wrong": 0, "missed": 0}
    spent = 0.0
    for item in items:
        lesson, members = lesson_of(item["lesson"], cache)
        about = without_call(item["question"], members)
        began = time.perf_counter()
        found = match(lesson, about, current=item["scene"], ignore=[a.name for a in members])
        spent += time.perf_counter() - began
        got = found.expected.faq.phrasings[0] if found is not None else None
        said = verdict(item, got)
        tally[said] += 1
        if show and said != "right":
            ranked = scores(lesson, about, item["scene"], [a.name for a in members])[:3]
            print(f"  {said}: {item['question']!r}\n      expect {item['expect']!r}\n      got    {got!r}")
            for expected, score in ranked:
                print(f"      {score:.3f} {expected.faq.phrasings[0]}")
    print(f"{path.name}: right {tally['right']}, wrong {tally['wrong']}, missed {tally['missed']} of {len(items)}"
          f"  ({1000 * spent / max(len(items), 1):.1f} ms a question)")
    return tally


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("files", nargs="*", type=Path, default=[HERE / "faq_tune.yaml"])
    parser.add_argument("--show", action="store_true", help="print every question not right, with the best three")
    args = parser.parse_args()
    for file in args.files:
        run(file, args.show)
    sys.exit(0)
