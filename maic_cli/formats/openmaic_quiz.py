"""An OpenMAIC classroom's quiz questions as maic's: choices by their values, short answers with their grading
guidance as the rubric, ids made unique.  What cannot be asked or graded is counted in the import's notes."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any, Literal

from pydantic import ValidationError

from ..lessons.lesson import LETTERS, QuizQuestion
from .common import line, text
from .openmaic_format import scalar


def read_question(raw: Any, index: int, notes: Counter[str]) -> QuizQuestion | None:
    """One quiz question of a classroom (``None``: none maic can ask or grade; counted in ``notes``)."""
    if not isinstance(raw, dict) or not isinstance(raw.get("question"), str) or not raw["question"].strip():
        notes["quiz questions without a question"] += 1
        return None
    raw_id = raw.get("id")
    qid = raw_id if isinstance(raw_id, str) and re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}", raw_id) \
        else f"q{index + 1}"
    points = raw.get("points")
    points = points if isinstance(points, int) and not isinstance(points, bool) and 1 <= points <= 100 else 1
    explanation = text(raw["analysis"], 1000) if isinstance(raw.get("analysis"), str) and raw["analysis"].strip() \
        else None
    question = text(raw["question"], 2000)
    try:
        if raw.get("type") == "short_answer":
            guidance = raw.get("commentPrompt") if isinstance(raw.get("commentPrompt"), str) else None
            rubric = text(guidance or raw.get("analysis") or "", 2000) if (guidance or explanation) else ""
            if not rubric:
                notes["short-answer questions without grading guidance (kept; their rubric says so)"] += 1
                rubric = "No grading guidance came with this question: judge whether the answer addresses it."
            return QuizQuestion(id=qid, type="short", question=question, rubric=rubric, points=points,
                                explanation=explanation)
        listed = raw["options"] if isinstance(raw.get("options"), list) else []
        options = [o for o in listed[:100] if isinstance(o, dict)][:len(LETTERS)]
        values = [o["value"] if isinstance(o.get("value"), str) else LETTERS[n] for n, o in enumerate(options)]
        keys = raw["answer"] if isinstance(raw.get("answer"), list) else []
        answer = [LETTERS[values.index(v)] for v in keys[:100] if isinstance(v, str) and v in values]
        kind: Literal["single", "multiple"] = "multiple" if raw.get("type") == "multiple" else "single"
        return QuizQuestion(id=qid, type=kind, question=question, points=points, explanation=explanation,
                            options=[line(scalar(o.get("label")), 500) or "—" for o in options], answer=answer)
    except ValidationError:
        notes["quiz questions maic cannot grade (no options, or no right answer among them)"] += 1
        return None


def unique_ids(questions: list[QuizQuestion]) -> list[QuizQuestion]:
    """The questions, a repeated id made ``q<n>`` (a number no other question has)."""
    given = {question.id for question in questions}
    seen: set[str] = set()
    out = []
    for number, question in enumerate(questions, 1):
        qid = question.id
        while qid in seen:
            qid = f"q{number}"
            number += 1
            if qid in given:
                qid = question.id
        seen.add(qid)
        out.append(question if qid == question.id else question.model_copy(update={"id": qid}))
    return out
