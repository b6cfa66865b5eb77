"""Turns a person has labelled, for ``maic judge calibrate`` (how far to trust a judge).

A labels file is JSON lines, one labelled agent turn each::

    {"id": "t1", "learner": "Why is the sky blue?", "speaker": "teacher", "role": "teacher",
     "name": "Ms. Rivera", "persona": "", "text": "Air scatters blue light most.",
     "labels": {"on_topic": "yes", "correct": "yes", "in_role": "yes", "brief": "yes", "new": "no"}}

``labels`` holds the judge rubric's criteria (engine/judge.py: on_topic, correct, in_role,
brief, new), each ``yes``/``no`` (or ``true``/``false``); a criterion left out is not
compared for that turn.  ``learner`` (the message the turn answers; ``null`` for none),
``name``, ``role`` (teacher, assistant or student) and ``persona`` are optional.  The file
may come from anyone: it is read bounded, its text cleaned, and a bad line is reported as
``path:line: field: problem``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ..engine.judge import CRITERIA
from ..errors import InputError
from ..files import read_bounded
from ..llm.replay import validation_problem
from ..untrusted import clean

MAX_BYTES = 16 * 2**20
MAX_ITEMS = 5_000
Label = Literal["yes", "no"]


class LabelledTurn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1, max_length=100)
    learner: str | None = Field(default=None, max_length=4_000)
    speaker: str = Field(default="teacher", min_length=1, max_length=64)
    name: str = Field(default="Teacher", min_length=1, max_length=80)
    role: Literal["teacher", "assistant", "student"] = "teacher"
    persona: str = Field(default="", max_length=2_000)
    text: str = Field(min_length=1, max_length=8_000)
    labels: dict[str, Label] = Field(min_length=1)

    @field_validator("id", "learner", "speaker", "name", "persona", "text", mode="before")
    @classmethod
    def _clean(cls, value: object) -> object:
        return clean(value).strip() if isinstance(value, str) else value

    @field_validator("labels", mode="before")
    @classmethod
    def _labels(cls, value: object) -> object:
        if not isinstance(value, dict):
            return value
        unknown = [key for key in value if key not in CRITERIA]
        if unknown:
            raise ValueError(f"unknown criterion {str(unknown[0])[:40]!r} (the rubric's: {', '.join(CRITERIA)})")
        words = {True: "yes", False: "no", "true": "yes", "false": "no"}
        return {key: words.get(v.lower() if isinstance(v, str) else v, v.lower() if isinstance(v, str) else v)
                for key, v in value.items()}


def read_labels(path: Path) -> list[LabelledTurn]:
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
            item = LabelledTurn.model_validate(data)
        except ValidationError as exc:
            raise InputError(f"{path}:{number}: {validation_problem(exc)}") from None
        if item.id in seen:
            raise InputError(f"{path}:{number}: id: {item.id} is given twice")
        seen.add(item.id)
        items.append(item)
    if not items:
        raise InputError(f"{path}: no labelled turns in this file")
    return items
