"""Tutoring tasks in MathDial's JSONL format, for ``maic run TASKS.jsonl``.

Each line is one task with MathDial's field names: ``qid``, ``question``,
``ground_truth`` (a worked solution whose last line is the answer),
``student_incorrect_solution`` and ``student_profile``; other fields (MathDial's
``conversation``, ``scenario`` …) are ignored.  Each task becomes one scenario: a
tutor (the built-in ``teacher``, or the class ``--tutors`` names) with the problem
on a slide, and a simulated student (engine/learner.py) who opens with the
incorrect solution and believes it.  The run's metrics are evaluation/tutoring.py's.

The file may come from anyone: it is read bounded (:data:`MAX_BYTES`, at most
:data:`MAX_TASKS` lines), every text is cleaned, and a bad line is reported as
``path:line: field: problem``.  The dataset itself is not shipped (its licence is
CC BY-SA); users point at their own copy.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ..engine.learner import LearnerProfile
from ..engine.models import Slide, SlideElement
from ..errors import InputError
from ..files import read_bounded
from ..llm.replay import validation_problem
from ..store.learners import LearnerSeat
from ..untrusted import clean
from .scenarios import MAX_ID, ClassSpec, Scenario, id_from_file_name
from .tutoring import answer_of

MAX_BYTES = 64 * 2**20  # MathDial's test set, conversations included, is a few MB
MAX_TASKS = 20_000
SLIDE_CHARS = 100  # an agent's prompt shows this much of each slide element
QID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
DEFAULT_TUTORS = ("teacher",)


class TutoringTask(BaseModel):
    model_config = ConfigDict(extra="ignore")

    qid: str = Field(min_length=1)
    question: str = Field(min_length=1, max_length=8_000)
    ground_truth: str = Field(min_length=1, max_length=20_000)
    student_incorrect_solution: str = Field(min_length=1, max_length=8_000)
    student_profile: str = Field(default="", max_length=2_000)

    @field_validator("qid", mode="before")
    @classmethod
    def _qid(cls, value: object) -> object:
        if isinstance(value, int) and not isinstance(value, bool):
            value = str(value)
        if isinstance(value, str) and not QID.fullmatch(value):
            raise ValueError("a plain id (letters, digits, _ . -; at most 64)")
        return value

    @field_validator("question", "ground_truth", "student_incorrect_solution", "student_profile")
    @classmethod
    def _clean(cls, value: str) -> str:
        return clean(value).strip()

    @property
    def answer(self) -> str:
        return answer_of(self.ground_truth)

    def learner(self) -> LearnerProfile:
        """The student: named as the profile names them (``Steven is a 7th grade student …``)."""
        first = self.student_profile.split(" ", 1)[0].strip(".,;:")
        name = first if first[:1].isupper() and first.isalpha() and len(first) <= 40 else "Student"
        return LearnerProfile(name=name, persona=self.student_profile,
                              incorrect_solution=self.student_incorrect_solution)


def read_tasks(path: Path) -> list[TutoringTask]:
    """The tasks of a JSONL file, in order; a bad line stops reading with its line and field."""
    try:
        text = read_bounded(path, MAX_BYTES, "tutoring tasks file").decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: cannot read: not UTF-8 text (byte {exc.start})") from None
    tasks: list[TutoringTask] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        if len(tasks) >= MAX_TASKS:
            raise InputError(f"{path}:{number}: more than {MAX_TASKS} tasks in one file; split it")
        try:
            data = json.loads(line)
        except (ValueError, RecursionError):
            raise InputError(f"{path}:{number}: not a JSON line") from None
        if not isinstance(data, dict):
            raise InputError(f"{path}:{number}: a task is a JSON object with qid, question, ground_truth, "
                             "student_incorrect_solution and student_profile")
        try:
            task = TutoringTask.model_validate(data)
        except ValidationError as exc:
            raise InputError(f"{path}:{number}: {validation_problem(exc)}") from None
        if not task.answer:
            raise InputError(f"{path}:{number}: ground_truth: its last line holds no answer")
        if task.qid in seen:
            raise InputError(f"{path}:{number}: qid: {task.qid} is also on line {seen[task.qid]}")
        seen[task.qid] = number
        tasks.append(task)
    if not tasks:
        raise InputError(f"{path}: no tutoring tasks in this file")
    return tasks


def _chunks(text: str, size: int) -> list[str]:
    """``text`` in pieces of at most ``size`` characters, cut between words where it can be."""
    pieces: list[str] = []
    for paragraph in text.replace("\\n", "\n").split("\n"):
        words = paragraph.split()
        current = ""
        for word in words:
            while len(word) > size:
                if current:
                    pieces.append(current)
                    current = ""
                pieces.append(word[:size])
                word = word[size:]
            if current and len(current) + 1 + len(word) > size:
                pieces.append(current)
                current = word
            else:
                current = f"{current} {word}".strip()
        if current:
            pieces.append(current)
    return pieces


def task_id(stem: str, qid: str) -> str:
    """A task's scenario id: ``<file stem>-<qid>``, a plain name of at most :data:`MAX_ID` characters.  A stem
    too long for that is cut and marked with a hash of the whole stem, so two long file names that begin
    alike still give two ids; the qid (unique in its file) is kept whole."""
    plain = re.sub(r"[^A-Za-z0-9_.-]+", "-", f"{stem}-{qid}").lstrip(".-_") or qid
    if len(plain) <= MAX_ID:
        return plain
    digest = hashlib.sha256(stem.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    room = MAX_ID - len(qid) - len(digest) - 2
    prefix = id_from_file_name(stem)[:max(room, 0)].rstrip("-._")
    return f"{prefix}-{digest}-{qid}" if prefix else f"{digest}-{qid}"


def task_scenario(task: TutoringTask, stem: str, tutors: tuple[str, ...] = DEFAULT_TUTORS) -> Scenario:
    """The scenario a task is run as: the tutors, the problem on a slide, the student in the seat."""
    slide = Slide(id="problem", title="The problem", elements=[
        SlideElement(id=f"q{i + 1}", type="text", content=piece) for i, piece in enumerate(_chunks(task.question,
                                                                                              SLIDE_CHARS))])
    return Scenario.model_validate({
        "id": task_id(stem, task.qid), "title": f"tutoring task {task.qid}", "class": ClassSpec(agents=list(tutors)),
        "learner": LearnerSeat(simulated=task.learner()), "slides": [slide]})
