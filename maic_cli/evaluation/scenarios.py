"""Scenario files (``scenarios/<id>.yaml``) for ``maic run``.

A scenario names the class (registry ids and/or inline personas), the mode
(``qa`` or ``discussion`` with topic, prompt and initiator), the learner, an
optional language, slides, model and turn limit, the learner's messages in
order (one round each) — or a simulated learner in the seat (``learner: {simulated:
FILE}``, store/learners.py) — and what every round is expected to do.  A bad file is
reported as ``path:line: field: problem``.

A scenario may name a prompt set (``prompts: FOLDER``, relative to the scenario
file: a folder of its own below the scenario's folder, never that folder itself), used when
``maic run`` is given no ``--prompts``; its ``lesson.file`` is confined the same way (inside the
scenario's folder, a link may not lead out).  A scenario's id names files (transcripts, results):
an ``id:`` is a plain name of at most :data:`MAX_ID` characters, and a file name that is not one
(``my scenario (copy).yaml``, ``física.yaml``) gives a plain id derived from it
(:func:`id_from_file_name`), so a run is never played and then refused at save.  It
names templates (data, rendered in Jinja2's sandbox), never code: no field names a
Python module or function — a director hook stays a flag the user types — and an
unknown field is refused.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path, PurePath
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ..engine.models import (
    DEFAULT_MAX_TURNS,
    AgentConfig,
    ClassSettings,
    Slide,
    StoreState,
    default_initiator,
)
from ..errors import InputError
from ..lessons.lesson import Lesson
from ..lessons.quiz import AnswerNotUnderstood, parse_choice
from ..store.learners import LearnerSeat
from ..store.lessons import load_lesson, named_lessons
from ..store.personas import Registry
from ..yamlfile import load_model, yaml_files
from .expectations import Expectations
from .lesson_expect import LessonExpectations

MAX_ID = 80  # a run id adds the model (60) and the repeat; a file name holds 255


def id_from_file_name(stem: str) -> str:
    """A plain scenario id from a file name: accents dropped, other characters as ``-``, at most
    :data:`MAX_ID` characters (``my scenario (copy)`` → ``my-scenario-copy``, ``física`` → ``fisica``)."""
    ascii_name = unicodedata.normalize("NFKD", stem).encode("ascii", "ignore").decode("ascii")
    plain = re.sub(r"[^A-Za-z0-9_.-]+", "-", ascii_name).strip("-._")[:MAX_ID].rstrip("-._")
    return plain or "scenario"


def _inside(path: Path, field: str, value: str) -> Path:
    """``value`` resolved beside the scenario file ``path``, refused if it leads out of its folder."""
    base = path.parent.resolve()
    target = (base / value).resolve()
    if not target.is_relative_to(base):
        raise InputError(f"{path}: {field}: {value} leads outside the scenario's folder")
    return target


def _relative_inside(value: str, what: str) -> str:
    if PurePath(value).is_absolute() or ".." in PurePath(value).parts:
        raise ValueError(f"{what} relative to the scenario file, inside its folder (no absolute path, no ..)")
    return value


class LearnerTurn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str = Field(min_length=1)
    expect: Expectations | None = None


class ClassSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    agents: list[str] = Field(default_factory=list)
    inline: list[AgentConfig] = Field(default_factory=list)


class Discussion(BaseModel):
    model_config = ConfigDict(extra="forbid")

    topic: str = Field(min_length=1)
    prompt: str | None = None
    initiator: str | None = None


class LessonQuestion(BaseModel):
    """The learner interrupts the lecture: after ``after_step`` script steps of scene ``scene``."""

    model_config = ConfigDict(extra="forbid")

    scene: str = Field(min_length=1)  # a scene id of the lesson
    after_step: int = Field(default=0, ge=0)
    text: str = Field(min_length=1)
    expect: Expectations | None = None


class LessonRun(BaseModel):
    """A lesson the scenario plays: a named lesson (``name``: a built-in one or the user's own, as
    ``maic lesson list`` shows them) or a file beside the scenario (``file``), the learner's part
    in it (questions that interrupt the lecture, quiz answers by question id) and what it must do.
    A quiz is answered in full or not at all (then the learner skips it)."""

    model_config = ConfigDict(extra="forbid")

    name: str | None = Field(default=None, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,79}$")
    file: str | None = Field(default=None, min_length=1)
    questions: list[LessonQuestion] = Field(default_factory=list)
    answers: dict[str, str] = Field(default_factory=dict)  # question id (or quiz/question) → what is typed
    expect: LessonExpectations = Field(default_factory=LessonExpectations)
    pre_post: bool = False  # a simulated learner takes the lesson's quizzes before and after it (learning gain)

    def answer(self, scene_id: str, question_id: str) -> str | None:
        """What the learner types for this question (``None``: the scenario skips its quiz)."""
        return _answer_for(self, scene_id, question_id)

    @field_validator("file")
    @classmethod
    def _relative(cls, value: str | None) -> str | None:
        return None if value is None else _relative_inside(value, "a lesson file")

    @model_validator(mode="after")
    def _name_or_file(self) -> LessonRun:
        if (self.name is None) == (self.file is None):
            raise ValueError("name a lesson (name: photosynthesis, as maic lesson list shows) or give its file "
                             "(file: lessons/mine.yaml, beside the scenario), one of the two")
        return self

    @field_validator("answers", mode="before")
    @classmethod
    def _answers_are_text(cls, value: object) -> object:
        """``q1: C`` and ``q2: [A, C]`` both read as what the learner would type."""
        if isinstance(value, dict):
            return {k: ", ".join(map(str, v)) if isinstance(v, list) else str(v) for k, v in value.items()}
        return value


class Scenario(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str | None = Field(default=None, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$", max_length=MAX_ID)
    title: str | None = None
    class_: ClassSpec = Field(alias="class")
    mode: Literal["qa", "discussion"] = "qa"
    discussion: Discussion | None = None
    learner: LearnerSeat = Field(default_factory=LearnerSeat)  # simulated: a model plays the learner
    language: str | None = None
    slides: list[Slide] = Field(default_factory=list)
    model: str | None = None
    prompts: str | None = Field(default=None, min_length=1)  # a prompt-set folder beside this file
    max_turns: int | None = Field(default=None, ge=1, le=50)
    messages: list[LearnerTurn] = Field(default_factory=list)
    expect: Expectations = Field(default_factory=Expectations)
    opening_expect: Expectations | None = None  # for a discussion's opening round
    lesson: LessonRun | None = None  # play a lesson (its learner questions are rounds like messages)

    @field_validator("messages", mode="before")
    @classmethod
    def _strings_are_turns(cls, value: object) -> object:
        if isinstance(value, list):
            return [{"text": v} if isinstance(v, str) else v for v in value]
        return value

    @field_validator("prompts")
    @classmethod
    def _prompts_beside_the_file(cls, value: str | None) -> str | None:
        if value is not None and (PurePath(value).is_absolute() or ".." in PurePath(value).parts
                                  or not PurePath(value).parts):
            raise ValueError("a prompt-set folder relative to the scenario file: a folder of its own below "
                             "the scenario's folder (no absolute path, no .., not the folder itself)")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> Scenario:
        if not self.class_.agents and not self.class_.inline:
            raise ValueError("class: name at least one agent (agents: [...] or inline: [...])")
        if self.mode == "discussion" and self.discussion is None:
            raise ValueError("mode is discussion but there is no discussion: {topic: ...}")
        if self.lesson is not None and (self.messages or self.mode == "discussion"):
            raise ValueError("a scenario that plays a lesson asks its questions in lesson.questions (not "
                             "messages:) and has its discussions in the lesson (not mode: discussion)")
        if self.learner.simulated is not None and self.messages:
            raise ValueError("a simulated learner (learner.simulated) speaks for itself: leave out messages:")
        if self.lesson is not None and self.learner.simulated is not None and (self.lesson.questions
                                                                               or self.lesson.answers):
            raise ValueError("a simulated learner asks its own questions and answers the quizzes itself: leave "
                             "out lesson.questions and lesson.answers")
        if self.lesson is not None and self.lesson.pre_post and self.learner.simulated is None:
            raise ValueError("lesson.pre_post: the quizzes before and after the lesson are taken by a simulated "
                             "learner (learner: {simulated: FILE})")
        if self.mode == "qa" and not self.messages and self.lesson is None and self.learner.simulated is None:
            raise ValueError("a Q&A scenario needs at least one learner message (messages: [...]), "
                             "a simulated learner (learner: {simulated: FILE}) or a lesson (lesson: {file: ...})")
        return self


def load_scenario(path: Path) -> Scenario:
    scenario = load_model(path, Scenario)
    if scenario.id is None:
        scenario.id = id_from_file_name(path.stem)
    return scenario


def prompts_folder(scenario: Scenario, path: Path) -> Path | None:
    """The prompt-set folder the scenario names (``None``: it names none), checked to be a folder
    inside the scenario file's own folder (a symlink may not lead out of it)."""
    if scenario.prompts is None:
        return None
    folder = _inside(path, "prompts", scenario.prompts)
    if folder == path.parent.resolve():
        raise InputError(f"{path}: prompts: {scenario.prompts} is the scenario's own folder; a prompt set is a "
                         "folder of its own below it")
    if not folder.is_dir():
        raise InputError(f"{path}: prompts: {scenario.prompts}: no such folder beside the scenario")
    return folder


def scenario_lesson(scenario: Scenario, path: Path) -> Lesson | None:
    """The lesson the scenario plays (``None``: none), loaded and checked against what the scenario
    says of it (scene and question ids that exist)."""
    if scenario.lesson is None:
        return None
    spec = scenario.lesson
    if spec.name is not None:
        named = named_lessons()
        if spec.name not in named:
            raise InputError(f"{path}: lesson.name: no lesson named {spec.name!r} "
                             f"(lessons: {', '.join(sorted(named)) or 'none installed'})")
        lesson_path = named[spec.name]
    else:
        assert spec.file is not None  # one of the two (the model's validator)
        lesson_path = _inside(path, "lesson.file", spec.file)
        if not lesson_path.is_file():
            raise InputError(f"{path}: lesson.file: {spec.file}: no such lesson file beside the scenario")
    lesson = load_lesson(lesson_path)
    problems = spec.expect.problems_with(lesson)
    scenes = {scene.id: scene for scene in lesson.scenes}
    for asked in spec.questions:
        scene = scenes.get(asked.scene)
        if scene is None:
            problems.append(f"lesson.questions: no scene {asked.scene!r} in the lesson")
        elif asked.after_step and (scene.type != "slide" or asked.after_step > max(1, len(scene.script))):
            steps = max(1, len(scene.script)) if scene.type == "slide" else 0
            problems.append(f"lesson.questions: after_step {asked.after_step} of scene {asked.scene!r}, which has "
                            f"{steps} step{'s' if steps != 1 else ''}")
    question_ids = {key for scene in lesson.scenes if scene.type == "quiz" for q in scene.questions
                    for key in (q.id, f"{scene.id}/{q.id}")}
    problems.extend(f"lesson.answers: no question {qid!r} in the lesson's quizzes" for qid in spec.answers
                    if qid not in question_ids)
    for scene in lesson.scenes:  # a quiz is answered in full, or skipped (no answers at all)
        if scene.type == "quiz":
            given = [q.id for q in scene.questions if _answer_for(spec, scene.id, q.id) is not None]
            for q in scene.questions:
                typed = _answer_for(spec, scene.id, q.id)
                if typed is not None and q.type != "short":
                    try:
                        parse_choice(q, typed)
                    except AnswerNotUnderstood as exc:
                        problems.append(f"lesson.answers: {q.id}: {exc}")
            missing = [q.id for q in scene.questions if q.id not in given]
            if given and missing:
                problems.append(f"lesson.answers: quiz {scene.id!r} is answered in part; answer "
                                f"{', '.join(missing)} too (or none of it, to skip the quiz)")
    if problems:
        raise InputError(f"{path}: " + problems[0] + (f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""))
    return lesson


def _answer_for(spec: LessonRun, scene_id: str, question_id: str) -> str | None:
    return spec.answers.get(f"{scene_id}/{question_id}", spec.answers.get(question_id))


def scenario_files(paths: list[Path]) -> list[Path]:
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found.extend(yaml_files(path))
        elif path.is_file():
            found.append(path)
        else:
            raise InputError(f"{path}: no such scenario file or folder")
    if not found:
        raise InputError("no scenario files found in " + ", ".join(map(str, paths)))
    return found


def resolve_class(scenario: Scenario, registry: Registry, path: Path) -> list[AgentConfig]:
    inline = {a.id: a for a in scenario.class_.inline}
    ids = list(dict.fromkeys([*scenario.class_.agents, *inline]))
    missing = [i for i in ids if i not in inline and registry.get(i) is None]
    if missing:
        raise InputError(f"{path}: class: unknown agent id(s) {', '.join(missing)} "
                         f"(known: {', '.join(sorted(registry.agents))})")
    agents = [inline.get(i) or registry.agents[i] for i in ids]
    if scenario.discussion and scenario.discussion.initiator and scenario.discussion.initiator not in ids:
        raise InputError(f"{path}: discussion.initiator: {scenario.discussion.initiator} is not in the class")
    return agents


def turn_config(scenario: Scenario, agents: list[AgentConfig], max_turns: int | None) -> ClassSettings:
    discussion = scenario.discussion if scenario.mode == "discussion" else None
    initiator = None
    if discussion is not None:
        initiator = discussion.initiator or default_initiator(agents)
    return ClassSettings(agent_ids=[a.id for a in agents], initiator_id=initiator,
                      discussion_topic=discussion.topic if discussion else None,
                      discussion_prompt=discussion.prompt if discussion else None,
                      agent_configs={a.id: a for a in agents},
                      max_turns=max_turns or scenario.max_turns or DEFAULT_MAX_TURNS, language=scenario.language)


def initial_store(scenario: Scenario) -> StoreState:
    return StoreState(slides=[slide.model_copy(deep=True) for slide in scenario.slides])
