"""Benchmark: is a short answer graded the right way round?  The rubric check, and the small model.

Run:  python tests/benchmarks/grading_agreement.py [--model local] [--show] [--set FILE ...]

Grades every answer of the answer sets (``grading_set.yaml``: the sample lessons' rubric questions and
questions of other subjects; ``grading_heldout.yaml``: written after the check was tuned) three ways:

* ``measure``: the deterministic rubric check alone (lessons/rubric.py), no model;
* ``model``: the model alone, as a hosted model is graded (``small=False``: its grade as it gives it);
* ``checked``: the model checked by the rubric, as the built-in model is graded (``small=True``).

A right answer agrees when it earns at least half the points, a wrong one when it earns none; an
inversion is a wrong answer scored above a right answer's floor or a right answer scored 0 (the issue's
0/3 and 0/4); undecided is the measure leaving an answer to the model, or an answer not graded.  Without
``--model`` only the measure runs (instant, no model needed).  ``entries()`` and ``grade_all()`` are
for other benchmarks (offline_quality.py) to call.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import yaml

from maic_cli.lessons.lesson import QuizQuestion
from maic_cli.lessons.quiz import grade_short, measure_answer
from maic_cli.llm.port import LLMClient, LLMRequest, StreamPiece, read_reply
from maic_cli.store.lessons import load_lesson

HERE = Path(__file__).parent
ROOT = HERE.parent.parent
SETS = [HERE / "grading_set.yaml", HERE / "grading_heldout.yaml"]


@dataclass(frozen=True)
class Entry:
    question: QuizQuestion
    answer: str
    right: bool
    set_name: str


def entries(paths: list[Path] | None = None) -> list[Entry]:
    found = []
    for path in paths or SETS:
        for number, item in enumerate(yaml.safe_load(path.read_text(encoding="utf-8"))):
            if "lesson" in item:
                lesson = load_lesson(ROOT / item["lesson"])
                question = next(q for scene in lesson.scenes for q in getattr(scene, "questions", [])
                                if q.id == item["question"])
            else:
                question = QuizQuestion(id=f"g{number}", type="short", question=item["question"],
                                        rubric=item["rubric"], points=item["points"])
            found += [Entry(question, answer, label == "right", path.stem)
                      for label in ("right", "wrong") for answer in item[label]]
    return found


def outcome(entry: Entry, points: float | None) -> str:
    """agrees, inverted or undecided."""
    if points is None:
        return "undecided"
    good = points >= entry.question.points / 2 if entry.right else points == 0
    if good:
        return "agrees"
    return "inverted" if (entry.right and points == 0) or (not entry.right and points > 0) else "short"


class Remembered:
    """The model, each distinct call made once: grading "model" then "checked" asks the same questions."""

    def __init__(self, llm: LLMClient) -> None:
        self.llm = llm
        self.model = llm.model
        self.replies: dict[str, str] = {}

    async def stream(self, request: LLMRequest) -> AsyncIterator[StreamPiece]:
        key = json.dumps(request.messages)
        if key not in self.replies:
            self.replies[key] = await read_reply(self.llm, request, 8000)
        yield StreamPiece(text=self.replies[key])


async def grade_all(items: list[Entry], llm: LLMClient | None,
                    ways: tuple[str, ...] = ("model", "checked")) -> dict[str, list[tuple[str, float | None, str]]]:
    """For each way of grading, (outcome, points, comment) per entry."""
    results: dict[str, list[tuple[str, float | None, str]]] = {"measure": []}
    for entry in items:
        measured = measure_answer(entry.question, entry.answer)
        results["measure"].append((outcome(entry, measured.points), measured.points, measured.comment))
    if llm is None:
        return results
    llm = Remembered(llm)
    for way, small in (("model", False), ("checked", True)):
        if way not in ways:
            continue
        results[way] = []
        for entry in items:
            graded = await grade_short(entry.question, entry.answer, llm, small=small)
            points = None if graded.graded_by == "none" else graded.points
            results[way].append((outcome(entry, points), points, graded.comment or ""))
    return results


def summary(items: list[Entry], rows: list[tuple[str, float | None, str]]) -> str:
    counts = {name: sum(1 for row in rows if row[0] == name) for name in ("agrees", "short", "inverted", "undecided")}
    right = [row for entry, row in zip(items, rows, strict=True) if entry.right]
    wrong = [row for entry, row in zip(items, rows, strict=True) if not entry.right]
    return (f"agree {counts['agrees']}/{len(rows)}, inverted {counts['inverted']}, under half {counts['short']}, "
            f"undecided {counts['undecided']} (right answers agree {sum(r[0] == 'agrees' for r in right)}/"
            f"{len(right)}, wrong {sum(r[0] == 'agrees' for r in wrong)}/{len(wrong)})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", help="also grade with this model (e.g. local)")
    parser.add_argument("--show", action="store_true", help="print every answer's grades")
    parser.add_argument("--set", action="append", type=Path, help="an answer set (default: both)")
    parser.add_argument("--ways", default="model,checked", help="with --model: model, checked or both")
    args = parser.parse_args()
    llm = None
    if args.model:
        from maic_cli.llm.factory import make_llm
        from maic_cli.llm.spec import ModelSpec

        llm = make_llm(ModelSpec.parse(args.model))
    started = time.perf_counter()
    for path in args.set or SETS:
        items = entries([path])
        results = asyncio.run(grade_all(items, llm, tuple(args.ways.split(","))))
        print(f"{path.name}: {len(items)} answers")
        for way, rows in results.items():
            print(f"  {way:8} {summary(items, rows)}")
        if args.show:
            for i, entry in enumerate(items):
                grades = "  ".join(f"{way}={rows[i][1]}({rows[i][0][:3]})" for way, rows in results.items())
                print(f"    {'R' if entry.right else 'W'} {entry.question.points}p {grades} | {entry.answer[:70]}")
    print(f"({time.perf_counter() - started:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
