"""Tutoring metrics: success@k and telling@k, as MathDial's evaluation defines them.

A tutoring run is a conversation between a student (the simulated learner) and
its tutors (every teacher-side agent: the ``teacher`` and ``assistant`` roles).
Given the task's ``ground_truth``:

* the **answer** is the number on the last line of ``ground_truth`` (a line break
  is a real newline or the two characters ``\\n``, as MathDial's files hold it);
* an utterance **states** the answer when any number in it (``[0-9]+(\\.[0-9]+)?``,
  commas removed first) equals it as a float (within 1e-7); an answer that is
  not a number is stated when it is one of the numbers, as text;
* a role's **index** is how many of that role's utterances came before its first
  utterance that states the answer (0-based; ``None`` — infinity — if none does);
  the student's opening presentation of their solution is its utterance 0;
* **success@k** is ``student ≤ k``; **telling@k** is ``teacher ≤ min(student, k)``.

An utterance is a message with some text (an agent turn that only acted on the
board says nothing).  Pure: no I/O, no model.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel

Side = Literal["student", "teacher"]
TEACHER_ROLES = frozenset({"teacher", "assistant"})
DEFAULT_K = 7
NUMBER = re.compile(r"[0-9]+(?:\.[0-9]+)?")


def answer_of(ground_truth: str) -> str:
    """The number on the last line of ``ground_truth`` (``\\n`` as two characters is a line break too)."""
    last = ground_truth.split("\n")[-1].strip()
    return last.split("\\n")[-1].strip()


def _as_float(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def states(text: str, answer: str) -> bool:
    """Whether ``text`` states ``answer``: one of its numbers (commas removed) equals it."""
    numbers = NUMBER.findall(text.replace(",", ""))
    wanted = answer.replace(",", "")
    target = _as_float(wanted)
    if target is None:
        return wanted in numbers
    return any(abs(target - value) < 1e-7 for value in map(_as_float, numbers) if value is not None)


@dataclass(frozen=True)
class Utterance:
    side: Side
    text: str


def first_index(utterances: Iterable[Utterance], side: Side, answer: str) -> int | None:
    """How many of ``side``'s utterances came before its first that states ``answer`` (``None``: never)."""
    count = 0
    for utterance in utterances:
        if utterance.side != side:
            continue
        if states(utterance.text, answer):
            return count
        count += 1
    return None


def _le(index: int | None, bound: float) -> bool:
    return index is not None and index <= bound


def success_at(student: int | None, k: int) -> bool:
    return _le(student, k)


def telling_at(teacher: int | None, student: int | None, k: int) -> bool:
    return _le(teacher, min(math.inf if student is None else student, k))


class TutoringOutcome(BaseModel):
    """One tutoring run, as its result file keeps it: the task, the answer and both indexes."""

    qid: str
    answer: str
    student: int | None  # the student's index (None: never stated the answer)
    teacher: int | None  # the tutors' index
    student_utterances: int = 0
    teacher_utterances: int = 0
    k: int = DEFAULT_K  # the largest k the run was played for (the student spoke k + 1 times at most)

    def success(self, k: int) -> bool:
        return success_at(self.student, k)

    def telling(self, k: int) -> bool:
        return telling_at(self.teacher, self.student, k)


def outcome(qid: str, ground_truth: str, utterances: Sequence[Utterance], k: int = DEFAULT_K) -> TutoringOutcome:
    answer = answer_of(ground_truth)
    return TutoringOutcome(qid=qid, answer=answer, k=k, student=first_index(utterances, "student", answer),
                           teacher=first_index(utterances, "teacher", answer),
                           student_utterances=sum(u.side == "student" for u in utterances),
                           teacher_utterances=sum(u.side == "teacher" for u in utterances))
