"""Lessons: an ordered list of scenes the class plays, and how far the learner got.

A :class:`Lesson` (a ``lessons/*.yaml`` file, or one ``maic lesson new`` wrote) has a
title, the learner's level, a language and its scenes:

* ``slide`` — a :class:`~maic_cli.engine.models.Slide` (elements with ids) and, optionally, the
  teacher's lecture ``script``: steps that say something or move the spotlight or
  the laser to one of the slide's elements.  A slide without a script is lectured
  by the teacher live.
* ``quiz`` — questions: ``single`` or ``multiple`` choice with the answer key (letters)
  and points, or ``short`` answer with a rubric the model grades against; each may say
  in one sentence why its answer is right (``explanation``, shown after grading).
* ``discussion`` — a topic, a prompt and the agent who opens it, its scripted opening and ``close:``.

Slides and discussions may carry ``faq:`` — the questions a teacher expects (:class:`ExpectedQuestion`:
one or several phrasings ``q``, the answer ``a`` said as written, and who says it, ``by``).

Everything here is data, validated on load: element ids are unique in their slide, a
script points only at its own slide's elements, an answer key names existing options.
A lesson is copied into the session file with :class:`LessonProgress` (scene, position
in the script, quiz answers), so ``--continue`` resumes it without the original file.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from ..engine.models import Slide, SlideElement

LETTERS = "ABCDEFGHIJ"
MAX_SCENES = 60
MAX_OPTIONS = len(LETTERS)
# What a lesson file may hold, checked on load (a file is untrusted: every export and view of it is then bounded).
MAX_ELEMENT_TEXT = 8_000  # characters of an element's content
MAX_ELEMENT_LINES = 400  # its line breaks
MAX_ITEMS = 50  # bullets of a list
MAX_CELLS = 60  # rows of a table, cells of a row
MAX_PIECE = 1_000  # characters of a bullet, a cell, an option
MAX_LESSON_LINES = 10_000  # lines, bullets and cells of all the slides together


def _bounded(element: SlideElement) -> SlideElement:
    """A slide element of a size a lesson holds (``SlideElement`` itself is the engine's, unbounded)."""
    if len(element.content) > MAX_ELEMENT_TEXT:
        raise ValueError(f"content: at most {MAX_ELEMENT_TEXT:,} characters (this one has {len(element.content):,})")
    if element.content.count("\n") > MAX_ELEMENT_LINES:
        raise ValueError(f"content: at most {MAX_ELEMENT_LINES} line breaks (this one has "
                         f"{element.content.count(chr(10)):,})")
    if len(element.items) > MAX_ITEMS:
        raise ValueError(f"items: at most {MAX_ITEMS} (this list has {len(element.items):,})")
    if len(element.rows) > MAX_CELLS or any(len(row) > MAX_CELLS for row in element.rows):
        raise ValueError(f"rows, and the cells of a row: at most {MAX_CELLS} each")
    if any(len(piece) > MAX_PIECE for piece in [*element.items, *(cell for row in element.rows for cell in row)]):
        raise ValueError(f"items and cells: at most {MAX_PIECE:,} characters each")
    if element.language is not None and len(element.language) > 40:
        raise ValueError("language: at most 40 characters")
    return element


BoundedElement = Annotated[SlideElement, AfterValidator(_bounded)]


def _weight(element: SlideElement) -> int:
    return element.content.count("\n") + 1 + len(element.items) + sum(len(row) for row in element.rows)


def first_repeated(ids: list[str]) -> str | None:
    """The first id (in sorted order) that occurs more than once, if any."""
    twice = [i for i, n in Counter(ids).items() if n > 1]
    return min(twice) if twice else None


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ScriptStep(_Strict):
    """One step of a lecture script: exactly one of ``say``, ``spotlight``, ``laser``."""

    say: str | None = Field(default=None, min_length=1, max_length=4000)
    # Who says it: an agent id of the class (a classmate or the assistant), played in that agent's own card.
    # None: the teacher.  Only with ``say``.
    by: str | None = Field(default=None, pattern=r"^[a-z0-9][a-z0-9_-]*$", max_length=40)
    spotlight: str | None = Field(default=None, max_length=64)  # a slide element id
    laser: str | None = Field(default=None, max_length=64)

    @model_validator(mode="after")
    def _one_thing(self) -> ScriptStep:
        given = [name for name in ("say", "spotlight", "laser") if getattr(self, name) is not None]
        if len(given) != 1:
            raise ValueError("a script step is exactly one of say:, spotlight: or laser:"
                             + (f" (this one has {', '.join(given)})" if given else ""))
        if self.by is not None and self.say is None:
            raise ValueError("by: names who says a say: step; a spotlight or laser step has no by:")
        return self

    @property
    def target(self) -> str | None:
        """The element a spotlight or laser step points at."""
        return self.spotlight or self.laser


MAX_FAQ = 40  # expected questions of a scene
MAX_PHRASINGS = 8  # phrasings of one


class ExpectedQuestion(_Strict):
    """A question the teacher expects on a scene: its phrasings (``q``), the answer said as written (``a``), and
    who gives it (``by``: an agent id of the class; None, or one outside the class: the teacher)."""

    q: str | Annotated[list[Annotated[str, Field(max_length=300)]], Field(max_length=MAX_PHRASINGS)]
    a: str = Field(min_length=1, max_length=1200)
    by: str | None = Field(default=None, pattern=r"^[a-z0-9][a-z0-9_-]*$", max_length=40)

    @field_validator("q")
    @classmethod
    def _phrasings(cls, q: str | list[str]) -> str | list[str]:
        if isinstance(q, str) and not 1 <= len(q.strip()) <= 300:
            raise ValueError("q: a question of 1 to 300 characters")
        if isinstance(q, list) and (not q or any(not p.strip() for p in q)):
            raise ValueError("q: at least one phrasing, none empty")
        return q

    @field_validator("a")
    @classmethod
    def _answer(cls, a: str) -> str:
        if not a.strip():
            raise ValueError("a: the answer is empty")
        return a

    @property
    def phrasings(self) -> list[str]:
        """Every phrasing of the question (``q`` as a list)."""
        return [self.q] if isinstance(self.q, str) else list(self.q)


FAQ = Annotated[list[ExpectedQuestion], Field(max_length=MAX_FAQ)]


class SlideScene(_Strict):
    type: Literal["slide"]
    id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
    title: str = Field(min_length=1, max_length=200)
    elements: list[BoundedElement] = Field(default_factory=list, max_length=40)
    script: list[ScriptStep] = Field(default_factory=list, max_length=200)
    faq: FAQ = Field(default_factory=list)

    @field_validator("elements")
    @classmethod
    def _unique_element_ids(cls, elements: list[SlideElement]) -> list[SlideElement]:
        twice = first_repeated([element.id for element in elements])
        if twice:
            raise ValueError(f"element id {twice!r} is used twice on this slide")
        return elements

    @field_validator("script")
    @classmethod
    def _steps_point_at_elements(cls, script: list[ScriptStep], info: ValidationInfo) -> list[ScriptStep]:
        known = {element.id for element in info.data.get("elements", [])}
        for number, step in enumerate(script, 1):
            if step.target is not None and step.target not in known:
                raise ValueError(f"step {number} points at {step.target!r}, which is not an element of "
                                 f"this slide (its elements: {', '.join(sorted(known)) or 'none'})")
        return script

    def slide(self) -> Slide:
        return Slide(id=self.id, title=self.title, elements=[e.model_copy() for e in self.elements])


class QuizQuestion(_Strict):
    id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
    type: Literal["single", "multiple", "short"]
    question: str = Field(min_length=1, max_length=2000)
    options: list[Annotated[str, Field(max_length=MAX_PIECE)]] = Field(default_factory=list, max_length=MAX_OPTIONS)
    # letters of the right options (choice questions)
    answer: list[str] = Field(default_factory=list, max_length=MAX_OPTIONS)
    rubric: str | None = Field(default=None, min_length=1, max_length=2000)  # short answer
    points: int = Field(default=1, ge=1, le=100)
    explanation: str | None = Field(default=None, max_length=1000)  # why the answer is right: after grading

    @field_validator("answer", mode="before")
    @classmethod
    def _letters(cls, value: object) -> object:
        """``answer: B`` or ``answer: [A, C]``, any case."""
        if isinstance(value, str):
            value = [part for part in value.replace(",", " ").split() if part]
        if isinstance(value, list):
            return [v.strip().upper() if isinstance(v, str) else v for v in value]
        return value

    @field_validator("answer")
    @classmethod
    def _key_names_options(cls, answer: list[str], info: ValidationInfo) -> list[str]:
        kind, options = info.data.get("type"), info.data.get("options") or []
        if kind not in ("single", "multiple"):
            return answer
        letters = LETTERS[:len(options)] or "A"
        wrong = [a for a in answer if a not in letters]
        if wrong or not answer:
            raise ValueError(f"the letter(s) of the right option(s), from {letters[0]} to {letters[-1]}"
                             + (f" (not {', '.join(wrong)})" if wrong else ""))
        if len(set(answer)) != len(answer):
            raise ValueError("names an option twice")
        if kind == "single" and len(answer) != 1:
            raise ValueError("a single-choice question has exactly one right answer; use type: multiple")
        return answer

    @model_validator(mode="after")
    def _consistent(self) -> QuizQuestion:
        if self.type == "short":
            if self.rubric is None:
                raise ValueError("a short-answer question needs a rubric: what a good answer says")
            if self.options or self.answer:
                raise ValueError("a short-answer question has no options or answer key; use rubric:")
        elif len(self.options) < 2:
            raise ValueError(f"a {self.type}-choice question needs at least two options")
        return self

    def key(self) -> frozenset[int]:
        """The right options, as indexes."""
        return frozenset(LETTERS.index(a) for a in self.answer)


class QuizScene(_Strict):
    type: Literal["quiz"]
    id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
    title: str = Field(default="Quiz", min_length=1, max_length=200)
    questions: list[QuizQuestion] = Field(min_length=1, max_length=50)

    @field_validator("questions")
    @classmethod
    def _unique_ids(cls, questions: list[QuizQuestion]) -> list[QuizQuestion]:
        twice = first_repeated([q.id for q in questions])
        if twice:
            raise ValueError(f"question id {twice!r} is used twice in this quiz")
        return questions

    @property
    def max_points(self) -> int:
        return sum(q.points for q in self.questions)


class DiscussionScene(_Strict):
    type: Literal["discussion"]
    id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
    title: str | None = Field(default=None, max_length=200)
    topic: str = Field(min_length=1, max_length=500)
    prompt: str | None = Field(default=None, max_length=2000)
    initiator: str | None = Field(default=None, max_length=40)  # an agent id; default: the first student
    # Scripted opening lines (``say`` steps, most with ``by:`` a classmate) played before the class goes live:
    # a question, a wrong idea, a disagreement, each answered by the teacher, then the learner is asked in.
    script: list[ScriptStep] = Field(default_factory=list, max_length=60)
    faq: FAQ = Field(default_factory=list)
    # Closing lines (``say`` steps) played after the learner's reply has had its one answer.
    close: list[ScriptStep] = Field(default_factory=list, max_length=20)

    @field_validator("script", "close")
    @classmethod
    def _only_speech(cls, script: list[ScriptStep]) -> list[ScriptStep]:
        for number, step in enumerate(script, 1):
            if step.say is None:
                raise ValueError(f"step {number}: a discussion has no slide, so its script only says things")
        return script


Scene = Annotated[SlideScene | QuizScene | DiscussionScene, Field(discriminator="type")]
SceneKind = Literal["slide", "quiz", "discussion"]


class Lesson(_Strict):
    title: str = Field(min_length=1, max_length=200)
    level: str = Field(default="beginner", min_length=1, max_length=80)  # the learner's level
    language: str | None = Field(default=None, max_length=40)
    description: str | None = Field(default=None, max_length=2000)
    agents: list[Annotated[str, Field(max_length=40)]] | None = Field(default=None, max_length=20)  # the class to
    # teach it (registry ids); None: the default class
    scenes: list[Scene] = Field(min_length=1, max_length=MAX_SCENES)

    @field_validator("scenes")
    @classmethod
    def _unique_scene_ids(cls, scenes: list[Scene]) -> list[Scene]:
        twice = first_repeated([scene.id for scene in scenes])
        if twice:
            raise ValueError(f"scene id {twice!r} is used twice in this lesson")
        weight = sum(_weight(e) for scene in scenes if isinstance(scene, SlideScene) for e in scene.elements)
        if weight > MAX_LESSON_LINES:
            raise ValueError(f"the slides hold {weight:,} lines, bullets and table cells, more than a lesson may "
                             f"({MAX_LESSON_LINES:,}); split it into several lessons")
        return scenes

    # -- slides -------------------------------------------------------------------------------
    def slide_scenes(self) -> Iterator[tuple[int, SlideScene]]:
        """(scene index, scene) of every slide scene, in order."""
        for index, scene in enumerate(self.scenes):
            if isinstance(scene, SlideScene):
                yield index, scene

    def slides(self) -> list[Slide]:
        """Every slide of the lesson, in order (what the class's slide panel holds)."""
        return [scene.slide() for _, scene in self.slide_scenes()]

    def slide_number(self, scene_index: int) -> int | None:
        """The 0-based position among the slides of the slide scene at ``scene_index``."""
        for number, (index, _) in enumerate(self.slide_scenes()):
            if index == scene_index:
                return number
        return None

    def scene_of_slide(self, slide_number: int) -> int | None:
        """The scene index of the ``slide_number``-th slide (0-based), if there is one."""
        for number, (index, _) in enumerate(self.slide_scenes()):
            if number == slide_number:
                return index
        return None

    @property
    def max_points(self) -> int:
        return sum(scene.max_points for scene in self.scenes if isinstance(scene, QuizScene))


class QuizAnswer(BaseModel):
    """The learner's answer to one question, graded."""

    question_id: str
    answer: str  # what the learner typed
    chosen: list[str] = Field(default_factory=list)  # the letters it was read as (choice questions)
    points: float = Field(default=0.0, ge=0, allow_inf_nan=False)
    max_points: int = Field(default=1, ge=1)
    correct: bool = False
    comment: str | None = None  # the grader's short comment (short answers; or why a choice was wrong)
    graded_by: Literal["key", "model", "rubric", "none"] = "key"  # rubric: the rubric's words decided; none: not graded


LessonState = Literal["lecture", "paused", "quiz", "finished"]


class LessonProgress(BaseModel):
    """How far the learner got: saved in the session when a scene is entered and a lecture ends or stops."""

    scene: int = Field(default=0, ge=0)
    step: int = Field(default=0, ge=0)  # the next script step of the current scene (a slide, a discussion)
    state: LessonState = "lecture"
    answers: dict[str, QuizAnswer] = Field(default_factory=dict)  # "<scene id>/<question id>" → answer
    discussed: list[str] = Field(default_factory=list)  # discussion scenes already opened
    lectured: list[str] = Field(default_factory=list)  # slide scenes lectured to their end
    closed: list[str] = Field(default_factory=list)  # discussion scenes closed (a small model's: close: played)

    def score(self) -> tuple[float, int]:
        """(points earned, points possible) over the quizzes answered so far."""
        earned = sum(a.points for a in self.answers.values())
        possible = sum(a.max_points for a in self.answers.values())
        return earned, possible


class LessonPlay(BaseModel):
    """A lesson as kept in a session: the lesson itself (a copy) and the learner's progress."""

    lesson: Lesson
    progress: LessonProgress = Field(default_factory=LessonProgress)
    source: str | None = None  # the file it was loaded from, for display only (never re-read)

    @model_validator(mode="after")
    def _progress_in_range(self) -> LessonPlay:
        """A damaged or crafted session cannot point past the lesson."""
        last = len(self.lesson.scenes) - 1
        if self.progress.scene > last:
            self.progress.scene, self.progress.step = last, 0
        questions = {f"{scene.id}/{q.id}": q.points for scene in self.lesson.scenes if isinstance(scene, QuizScene)
                     for q in scene.questions}
        kept = {}
        for key, answer in self.progress.answers.items():  # only this lesson's questions, worth what they are
            if key in questions:
                answer.max_points = questions[key]
                answer.points = min(answer.points, float(questions[key]))
                kept[key] = answer
        self.progress.answers = kept
        return self
