"""Turns a person has labelled, for ``maic judge calibrate`` (how far to trust a judge).

A labels file is JSON lines, one labelled agent turn each::

    {"id": "t1", "learner": "Why is the sky blue?", "speaker": "teacher", "role": "teacher",
     "name": "Ms. Rivera", "persona": "", "text": "Air scatters blue light most.",
     "labels": {"on_topic": "yes", "correct": "yes", "in_role": "yes", "brief": "yes", "new": "no"}}

``labels`` holds the judge rubric's criteria (evaluation/judge.py: on_topic, correct, in_role,
brief, new), each ``yes``/``no`` (or ``true``/``false``); a criterion left out is not
compared for that turn.  ``learner`` (the message the turn answers; ``null`` for none),
``name``, ``role`` (teacher, assistant or student) and ``persona`` are optional.  The file
may come from anyone: it is read bounded, its text cleaned, and a bad line is reported as
``path:line: field: problem``.

Under ``--rubric pedagogy`` (evaluation/judge_rubrics.py) ``labels`` holds its dimensions
(mistake_identification, mistake_location, revealing_answer, providing_guidance,
actionability, coherence, tutor_tone, humanlikeness), each ``yes``, ``to some extent`` or
``no`` (written any case, ``To_some_extent`` too; ``tutor_tone``: ``encouraging``,
``neutral`` or ``offensive``), and every turn is a teacher's or an assistant's::

    {"id": "p1", "learner": "3 x 4 = 7, right?", "text": "Close! Count 3 fours: what do you get?",
     "labels": {"mistake_identification": "yes", "mistake_location": "to some extent",
                "revealing_answer": "no", "providing_guidance": "yes", "actionability": "yes",
                "coherence": "yes", "tutor_tone": "encouraging", "humanlikeness": "yes"}}
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator

from ..errors import InputError
from ..files import read_bounded
from ..llm.replay import validation_problem
from ..untrusted import clean
from .judge_rubrics import DEFAULT, Rubric

MAX_BYTES = 16 * 2**20
MAX_ITEMS = 5_000


class LabelledTurn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1, max_length=100)
    learner: str | None = Field(default=None, max_length=4_000)
    speaker: str = Field(default="teacher", min_length=1, max_length=64)
    name: str = Field(default="Teacher", min_length=1, max_length=80)
    role: Literal["teacher", "assistant", "student"] = "teacher"
    persona: str = Field(default="", max_length=2_000)
    text: str = Field(min_length=1, max_length=8_000)
    labels: dict[str, str] = Field(min_length=1)

    @field_validator("id", "learner", "speaker", "name", "persona", "text", mode="before")
    @classmethod
    def _clean(cls, value: object) -> object:
        return clean(value).strip() if isinstance(value, str) else value

    @field_validator("labels", mode="before")
    @classmethod
    def _labels(cls, value: object, info: ValidationInfo) -> object:
        if not isinstance(value, dict):
            return value
        rubric: Rubric = (info.context or {}).get("rubric", DEFAULT)
        unknown = [key for key in value if key not in rubric.names]
        if unknown:
            raise ValueError(f"unknown criterion {clean(str(unknown[0]))[:40]!r} (the {rubric.name} rubric's: "
                             f"{', '.join(rubric.names)})")
        return {key: rubric.read(key, given) or given for key, given in value.items()}  # read_labels checks


def read_labels(path: Path, rubric: Rubric = DEFAULT) -> list[LabelledTurn]:
    try:
        text = read_bounded(path, MAX_BYTES, "labels file").decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: cannot read: not UTF-8 text (byte {exc.start})") from None
    items: list[LabelledTurn] = []
    seen: set[str] = set()
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        if len(items) >= MAX_ITEMS:
            raise InputError(f"{path}:{number}: more than {MAX_ITEMS} labelled turns in one file")
        try:
            data = json.loads(line)
        except (ValueError, RecursionError):
            raise InputError(f"{path}:{number}: not a JSON line") from None
        if not isinstance(data, dict):
            raise InputError(f"{path}:{number}: a labelled turn is a JSON object with id, text and labels")
        try:
            item = LabelledTurn.model_validate(data, context={"rubric": rubric})
        except ValidationError as exc:
            raise InputError(f"{path}:{number}: {validation_problem(exc)}") from None
        for key, label in item.labels.items():
            if label not in rubric.criterion(key).labels:
                raise InputError(f"{path}:{number}: labels.{key}: {clean(label)[:40]!r} is not one of "
                                 f"{', '.join(rubric.criterion(key).labels)}")
        if not rubric.judges(item.role):
            raise InputError(f"{path}:{number}: role: the {rubric.name} rubric judges only "
                             f"{' and '.join(sorted(rubric.roles or ()))} turns, not a {item.role}'s")
        if item.id in seen:
            raise InputError(f"{path}:{number}: id: {item.id} is given twice")
        seen.add(item.id)
        items.append(item)
    if not items:
        raise InputError(f"{path}: no labelled turns in this file")
    return items
