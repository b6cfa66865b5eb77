"""Where a lesson stands, as the prompts see it: the scene's kind and title, the position line, the quiz's
graded answers, a live lecture's stage, the lesson's sentences a small model's speech may rest on
(``RoundContext.lesson``: the lesson player tells the runner, ``ClassRunner.enter_scene``).  Pure."""

from __future__ import annotations

from typing import Literal

from ..engine.models import LessonContext
from .grounding import lesson_sources
from .lesson import DiscussionScene, LessonPlay, QuizScene, Scene, SceneKind

LessonTask = Literal["question", "lecture", "discuss"]


def scene_kind(scene: Scene) -> SceneKind:
    return scene.type


def scene_title(scene: Scene) -> str:
    if isinstance(scene, DiscussionScene):
        return f"{scene.title}: {scene.topic}" if scene.title else scene.topic
    return scene.title


def scene_position(play: LessonPlay) -> str:
    """``slide 2 of 3``, or ``scene 5 of 5 (quiz)``."""
    lesson, index = play.lesson, play.progress.scene
    slide = lesson.slide_number(index)
    if slide is not None:
        return f"slide {slide + 1} of {len(lesson.slides())}"
    return f"scene {index + 1} of {len(lesson.scenes)} ({scene_kind(lesson.scenes[index])})"


def quiz_lines(play: LessonPlay) -> list[str]:
    """The current quiz's graded answers, one line each (for the prompts)."""
    scene = play.lesson.scenes[play.progress.scene]
    if not isinstance(scene, QuizScene):
        return []
    lines = []
    for question in scene.questions:
        answer = play.progress.answers.get(f"{scene.id}/{question.id}")
        if answer is None:
            continue
        key = f"; the key: {', '.join(question.answer)}" if question.answer else ""
        lines.append(f"{question.question} They answered \"{answer.answer}\": {answer.points:g} of "
                     f"{answer.max_points} points{key}" + (f" ({answer.comment})" if answer.comment else "")
                     + (f" Why: {question.explanation}" if question.explanation else ""))
    return lines


def lesson_context(play: LessonPlay, task: LessonTask = "question") -> LessonContext:
    """Where ``play`` stands, as the prompts see it (``RoundContext.lesson``), for ``task``."""
    lesson = play.lesson
    scene = lesson.scenes[play.progress.scene]
    return LessonContext(title=lesson.title, level=lesson.level, scene=scene_title(scene), kind=scene_kind(scene),
                         position=scene_position(play), task=task, quiz=quiz_lines(play),
                         stage=lecture_stage(play) if task == "lecture" else None,
                         sources=lesson_sources(lesson, play.progress.answers.keys(), scene.id))


def lecture_stage(play: LessonPlay) -> Literal["open", "continue", "close", "only"]:
    """Where a live lecture stands: the first slide opens the lesson, the last closes it."""
    count = len(play.lesson.slides())
    number = play.lesson.slide_number(play.progress.scene) or 0
    if count <= 1:
        return "only"
    return "open" if number == 0 else "close" if number == count - 1 else "continue"
