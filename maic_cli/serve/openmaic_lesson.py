"""The lesson an OpenMAIC request is in: its ``storeState`` (stage, scenes, current scene) as maic's lesson context.

OpenMAIC's client sends its whole classroom with every chat request: the stage and its scenes, in the shape its
classroom export holds them.  They are read with the reader ``maic lesson import`` uses on a classroom zip
(store/openmaic_read.py: each scene checked as OpenMAIC's importer checks it, then read as maic's slides,
quizzes and discussions, every text cleaned and cut), so a lesson reads the same from a zip and from a request.
A scene the reader cannot use is skipped; a classroom with none it can use is no lesson (the class answers
without one), never an error.

What the turn gets: the :class:`~maic_cli.engine.models.LessonContext` of the current scene (title, kind,
position, the lesson's sentences) and the slides, with the current one on screen, so that a spotlight or a
laser lands on an element the learner sees.  Pure: nothing is fetched or written.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter, OrderedDict
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from ..engine.models import LessonContext, Slide, SlideElement
from ..formats.common import SCENE_ID, line, slug, text
from ..formats.openmaic_class import ClassroomClass
from ..formats.openmaic_format import scene_order, scene_problems
from ..formats.openmaic_read import SlideReader, read_scene
from ..formats.openmaic_read import element_box as position
from ..lessons.context import LessonTask, lesson_context
from ..lessons.lesson import (
    MAX_SCENES,
    Lesson,
    LessonPlay,
    LessonProgress,
    QuizAnswer,
    QuizScene,
    Scene,
    SlideScene,
)
from .openmaic_request import QuizResults

UNTITLED = "OpenMAIC classroom"


@dataclass(frozen=True)
class RequestLesson:
    """The lesson read from a request, and where the client is in it."""

    lesson: Lesson
    scene: int  # the current scene's index in ``lesson.scenes``
    memo: dict[tuple[int, str], LessonContext] = field(default_factory=dict)  # (scene, task) → context, unanswered

    def context(self, task: LessonTask, quiz: QuizResults | None = None) -> LessonContext:
        """Where the class is, with the learner's graded answers when the current scene is the quiz they are for."""
        answers = self._answers(quiz)
        if not answers and (self.scene, task) in self.memo:
            return self.memo[self.scene, task].model_copy()
        made = lesson_context(LessonPlay(lesson=self.lesson, progress=LessonProgress(scene=self.scene,
                                                                                     answers=answers)), task)
        if not answers:
            self.memo[self.scene, task] = made
        return made.model_copy()

    def _answers(self, quiz: QuizResults | None) -> dict[str, QuizAnswer]:
        scene = self.lesson.scenes[self.scene]
        if quiz is None or not isinstance(scene, QuizScene):
            return {}
        graded = {result.questionId: result for result in quiz.results}
        answers = {}
        for question in scene.questions:
            result, given = graded.get(question.id), quiz.answers.get(question.id)
            if result is None or given is None:
                continue
            said = ", ".join(given) if isinstance(given, list) else given
            comment = text(result.aiComment, 500) if result.aiComment else None
            answers[f"{scene.id}/{question.id}"] = QuizAnswer(
                question_id=question.id, answer=text(said, 500), points=min(float(result.earned), question.points),
                max_points=question.points, correct=bool(result.correct), comment=comment or None,
                graded_by="model" if comment else "key")
        return answers

    def slide_on_screen(self) -> int:
        """The index among the slides of the one on screen (the current scene's, else the last before it)."""
        before = [n for n, (index, _) in enumerate(self.lesson.slide_scenes()) if index <= self.scene]
        return before[-1] if before else 0


class _Ids:
    """Scene ids as the classroom reader gives them: the id maic wrote when it is free, else a slug of the title."""

    def __init__(self) -> None:
        self.taken: set[str] = set()

    def __call__(self, base: str, given: Any = None) -> str:
        if isinstance(given, str) and SCENE_ID.fullmatch(given) and given not in self.taken:
            self.taken.add(given)
            return given
        word, number = slug(base, "scene")[:56], 1
        candidate = word
        while candidate in self.taken:
            number += 1
            candidate = f"{word}-{number}"
        self.taken.add(candidate)
        return candidate


def _title(stage: dict[str, Any] | None) -> str:
    name = stage.get("name") if stage else None
    return (line(name) if isinstance(name, str) else "") or UNTITLED


@dataclass(frozen=True)
class _Read:
    """A classroom read once: its lesson (``None``: nothing maic can play), its slides, and where each of the
    client's scene ids landed among the lesson's scenes."""

    lesson: Lesson | None
    slides: list[Slide]
    places: dict[str, int]
    contexts: dict[tuple[int, str], LessonContext] = field(default_factory=dict)


_READ: OrderedDict[bytes, _Read] = OrderedDict()
READ_CACHE = 16  # classrooms kept read (a class's loop sends the same one with every request)


def _read(title: str, description: str | None, raw_scenes: list[Any]) -> _Read:
    usable = [(scene_order(raw.get("order"), n), n, raw) for n, raw in enumerate(raw_scenes)
              if not scene_problems(raw, f"scenes[{n}]")]
    scenes: list[Scene] = []
    ids, notes = _Ids(), Counter[str]()
    places: dict[str, int] = {}
    for _, _, raw in sorted(usable, key=lambda item: (item[0], item[1])):
        if len(scenes) >= MAX_SCENES:
            break
        start = len(scenes)
        try:
            read_scene(raw, scenes, ids, notes, {}, ClassroomClass())
        except ValidationError:  # a scene the reader's cleaning did not make fit: skipped, as the importer says
            del scenes[start:]
            continue
        if isinstance(raw.get("id"), str) and len(scenes) > start:
            made = scenes[start:]
            places.setdefault(raw["id"], start + next(
                (n for n, s in enumerate(made) if isinstance(s, (SlideScene, QuizScene))), 0))
    scenes = scenes[:MAX_SCENES]
    try:
        lesson = Lesson(title=title, scenes=scenes, description=description) if scenes else None
    except ValidationError:  # too much on the slides for one lesson: answered without it
        lesson = None
    return _Read(lesson, lesson.slides() if lesson is not None else [], places)


def read_request_lesson(stage: dict[str, Any] | None, raw_scenes: list[Any],
                        current_id: str | None) -> tuple[RequestLesson, list[Slide]] | None:
    """The lesson of ``raw_scenes`` (OpenMAIC's ``Scene[]``) and the scene ``current_id`` names (``None``: the
    first), with its slides; ``None`` when no scene is one maic can play.

    A pure function of the request, remembered for the last few classrooms (keyed by a digest of the title,
    description and scenes): a client's loop sends the same classroom with every turn, and reading its slides'
    HTML again each time would cost more than the turn's own work."""
    raw_description = stage.get("description") if stage else None
    description = (text(raw_description, 2000) or None) if isinstance(raw_description, str) else None
    title = _title(stage)
    key = hashlib.sha256(json.dumps([title, description, raw_scenes], separators=(",", ":"),
                                    ensure_ascii=False).encode("utf-8", "surrogatepass")).digest()
    found = _READ.get(key)
    if found is None:
        found = _READ[key] = _read(title, description, raw_scenes)
        if len(_READ) > READ_CACHE:
            _READ.popitem(last=False)
    else:
        _READ.move_to_end(key)
    if found.lesson is None:
        return None
    current = found.places.get(current_id, 0) if current_id is not None else 0
    return RequestLesson(lesson=found.lesson, scene=current, memo=found.contexts), list(found.slides)


MAX_BOARD = 60  # elements read from the stage's whiteboard


def _draw(element: SlideElement, where: tuple[float, float] | None) -> tuple[str, dict[str, Any]] | None:
    """A slide element as the whiteboard action that draws it (``None``: nothing maic's board shows)."""
    place = {"x": where[1], "y": where[0]} if where is not None else {}
    if element.type in ("text", "bullets", "image"):
        content = element.content or "\n".join(f"• {item}" for item in element.items)
        return ("wb_draw_text", {"content": content, **place}) if content.strip() else None
    if element.type == "formula":
        return "wb_draw_latex", {"latex": element.content, **place}
    if element.type == "table":
        return "wb_draw_table", {"data": element.rows}
    if element.type == "code":
        return "wb_draw_code", {"code": element.content, "language": element.language}
    return None


def read_stage_board(stage: dict[str, Any] | None) -> list[tuple[str, dict[str, Any]]]:
    """What the stage's whiteboard shows (OpenMAIC keeps it in ``stage.whiteboard``, the last one current),
    as the actions that draw it on maic's board, each with the element's own id where maic can keep it."""
    boards = stage.get("whiteboard") if stage else None
    last = boards[-1] if isinstance(boards, list) and boards else None
    listed = last.get("elements") if isinstance(last, dict) else None
    if not isinstance(listed, list):
        return []
    raw = [e for e in listed[:MAX_BOARD] if isinstance(e, dict)]
    reader = SlideReader(Counter(), {})
    for source in raw:
        reader.element(source, "")
    places = {reader.ids[e["id"]]: position(e) for e in raw if isinstance(e.get("id"), str) and e["id"] in reader.ids}
    draws = []
    for kept in reader.elements:
        if (drawn := _draw(kept, places.get(kept.id))) is not None:
            name, params = drawn
            draws.append((name, {**params, "elementId": kept.id}))
    return draws
