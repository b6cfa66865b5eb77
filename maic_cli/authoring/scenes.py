"""Authoring with a model, one piece at a time: the outline on its own, one scene again, what an import lacks.

* :class:`LessonOutline` is what ``maic lesson new --outline-only`` writes for the teacher to
  edit (title, objectives, and each scene's kind, title, goal and key points) and what
  ``--from-outline`` builds the lesson from: :func:`plan_outline`, :func:`lesson_from_outline`.
* :func:`regenerate_scene` writes one scene of a lesson again (``maic lesson regen``): the
  model sees the outline of the whole lesson, the scenes around it and the teacher's
  instruction; it returns the new scene with the old one's id.
* :func:`complete_lesson` adds what an imported lesson lacks (``maic lesson import --model``):
  a lecture for every slide without one, in the voice of the teacher's own notes, then a
  discussion and a quiz when the lesson has none.
* :func:`check_prompts` renders every generation template with sample data, so a broken
  ``--prompts`` override is found before the first (paid) model call.

Pure and async like ``generation``: no files, no terminal.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..engine.prompt_set import PromptSet, resolve
from ..lessons.lesson import DiscussionScene, Lesson, QuizScene, Scene, SlideScene
from ..llm.port import LLMClient
from . import schemas as schema
from .fixes import unique
from .generation import (
    GeneratedLesson,
    GenerationError,
    LessonBrief,
    Pipeline,
    Progress,
    last_sentence,
    place,
    slide_summary,
)

TEMPLATES = ("system", "requirements", "outline", "slide", "script", "quiz", "discussion", "retry")


class OutlineScene(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    kind: Literal["slide", "quiz", "discussion"]
    title: str = Field(min_length=1, max_length=200)
    goal: str = Field(default="", max_length=500)
    points: list[str] = Field(default_factory=list, max_length=6)


class LessonOutline(BaseModel):
    """An outline a teacher may edit before the lesson is built from it."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    title: str = Field(min_length=1, max_length=200)
    description: str = Field(default="", max_length=2000)
    level: str = Field(default="beginner", min_length=1, max_length=80)
    language: str = Field(default="English", min_length=1, max_length=40)
    objectives: list[str] = Field(default_factory=list, max_length=10)
    scenes: list[OutlineScene] = Field(min_length=1, max_length=20)


def _pipeline(brief: LessonBrief, llm: LLMClient, prompts: PromptSet | None,
              progress: Callable[[Progress], None] | None, retries: int) -> Pipeline:
    return Pipeline(brief, llm, resolve(prompts), progress or (lambda _: None), retries)


def _result(pipeline: Pipeline, lesson: Lesson) -> GeneratedLesson:
    return GeneratedLesson(lesson=lesson, usage=pipeline.result_usage, fixes=pipeline.fixes, calls=pipeline.calls,
                           retries=pipeline.retried, repaired=pipeline.repaired)


async def plan_outline(brief: LessonBrief, llm: LLMClient, *, prompts: PromptSet | None = None,
                       progress: Callable[[Progress], None] | None = None, retries: int = 2) -> LessonOutline:
    """The requirements and outline steps only: an outline to edit."""
    pipeline = _pipeline(brief, llm, prompts, progress, retries)
    pipeline.total = 2
    requirements, planned = await pipeline.plan()
    return LessonOutline(title=requirements.title, description=requirements.description, level=brief.level,
                         language=brief.language, objectives=list(requirements.objectives),
                         scenes=[OutlineScene(kind=s.kind, title=s.title, goal=s.goal, points=list(s.points))
                                 for s in planned])


async def lesson_from_outline(outline: LessonOutline, brief: LessonBrief, llm: LLMClient, *,
                              prompts: PromptSet | None = None, progress: Callable[[Progress], None] | None = None,
                              retries: int = 2) -> GeneratedLesson:
    """The lesson built from an outline (a teacher's edit of one): every scene, no planning step."""
    pipeline = _pipeline(brief, llm, prompts, progress, retries)
    requirements = schema.RequirementsReply(title=outline.title, description=outline.description,
                                            objectives=outline.objectives)
    planned = [schema.OutlineScene(kind=s.kind, title=s.title, goal=s.goal, points=s.points) for s in outline.scenes]
    return _result(pipeline, await pipeline.build(requirements, planned))


def scene_outline(scene: Scene) -> schema.OutlineScene:
    """What a scene of an existing lesson stands for in an outline (its key points read off its content)."""
    if isinstance(scene, SlideScene):
        points = [e.plain_text()[:200] for e in scene.elements if e.type in ("text", "bullets", "formula")][:4]
        return schema.OutlineScene(kind="slide", title=scene.title, goal="", points=points)
    if isinstance(scene, QuizScene):
        return schema.OutlineScene(kind="quiz", title=scene.title, goal="check what the slides taught",
                                   points=[q.question[:200] for q in scene.questions][:4])
    return schema.OutlineScene(kind="discussion", title=scene.title or scene.topic[:200], goal=scene.topic[:500])


def describe(scene: Scene) -> str:
    """One line for the model: a neighbouring scene."""
    if isinstance(scene, SlideScene):
        said = " ".join(step.say for step in scene.script if step.say)
        return f"slide {scene.title!r}: {'; '.join(e.plain_text()[:120] for e in scene.elements)}" + (
            f" (the teacher ends: {last_sentence(scene.script)})" if said else "")
    if isinstance(scene, QuizScene):
        return f"quiz {scene.title!r}: " + "; ".join(q.question[:120] for q in scene.questions)
    return f"discussion: {scene.topic[:200]}"


def _lesson_facts(pipeline: Pipeline, lesson: Lesson) -> list[schema.OutlineScene]:
    planned = [scene_outline(scene) for scene in lesson.scenes]
    objectives = [lesson.description] if lesson.description else []
    requirements = schema.RequirementsReply(title=lesson.title, description=lesson.description or "",
                                            objectives=objectives)
    pipeline.use_plan(requirements, planned)
    return planned


async def regenerate_scene(lesson: Lesson, index: int, brief: LessonBrief, llm: LLMClient, *,
                           instruction: str = "", prompts: PromptSet | None = None,
                           progress: Callable[[Progress], None] | None = None, retries: int = 2) -> GeneratedLesson:
    """``lesson`` with scene ``index`` written again (its id kept); every other scene is the same object."""
    pipeline = _pipeline(brief, llm, prompts, progress, retries)
    planned = _lesson_facts(pipeline, lesson)
    old = lesson.scenes[index]
    pipeline.facts["instruction"] = instruction
    pipeline.facts["neighbours"] = [describe(lesson.scenes[i]) for i in (index - 1, index + 1)
                                    if 0 <= i < len(lesson.scenes)]
    target = planned[index]
    label = f"scene {index + 1}/{len(lesson.scenes)} ({old.type})"
    pipeline.total = 2 if old.type == "slide" else 1
    taught = [slide_summary(s) for s in lesson.scenes if isinstance(s, SlideScene) and s is not old]
    new: Scene
    if isinstance(old, SlideScene):
        slides = [i for i, s in enumerate(lesson.scenes) if isinstance(s, SlideScene)]
        before = [s for s in lesson.scenes[:index] if isinstance(s, SlideScene) and s.script]
        new = await pipeline.slide(label, old.id, target,
                                   place(slides, index, last_sentence(before[-1].script) if before else ""))
    elif isinstance(old, QuizScene):
        new = await pipeline.quiz(label, old.id, target, taught)
    else:
        new = await pipeline.discussion(label, old.id, target, taught)
        new = new.model_copy(update={"title": old.title})
    scenes = [new if i == index else scene for i, scene in enumerate(lesson.scenes)]
    return _result(pipeline, lesson.model_copy(update={"scenes": scenes}))


def _voice(lesson: Lesson) -> str:
    """A few sentences of the teacher's own notes, for the model to speak like them."""
    said = [step.say for _, scene in lesson.slide_scenes() for step in scene.script if step.say]
    return " ".join(said)[:400]


async def complete_lesson(lesson: Lesson, brief: LessonBrief, llm: LLMClient, *, prompts: PromptSet | None = None,
                          progress: Callable[[Progress], None] | None = None, retries: int = 2) -> GeneratedLesson:
    """``lesson`` with a lecture for each slide that has none, a discussion and a quiz if it has none."""
    pipeline = _pipeline(brief, llm, prompts, progress, retries)
    planned = _lesson_facts(pipeline, lesson)
    pipeline.facts["voice"] = _voice(lesson)
    scenes: list[Scene] = list(lesson.scenes)
    slides = [i for i, s in enumerate(scenes) if isinstance(s, SlideScene)]
    silent = [i for i in slides if not scenes[i].script]  # type: ignore[union-attr]
    wants_discussion = not any(isinstance(s, DiscussionScene) for s in scenes) and len(slides) >= 2
    wants_quiz = not any(isinstance(s, QuizScene) for s in scenes)
    pipeline.total = len(silent) + wants_discussion + wants_quiz
    previous_end = ""
    for index in slides:
        scene = scenes[index]
        assert isinstance(scene, SlideScene)
        if not scene.script:
            script = await pipeline.script(f"slide {index + 1}/{len(scenes)}", planned[index], scene.elements,
                                           place(slides, index, previous_end))
            scene = scene.model_copy(update={"script": script, "faq": scene.faq or pipeline.last_faq})
            scenes[index] = scene
        previous_end = last_sentence(scene.script)
    taught = [slide_summary(s) for s in scenes if isinstance(s, SlideScene)]
    taken = {scene.id for scene in scenes}
    if wants_discussion and len(scenes) < 60:
        goal = schema.OutlineScene(kind="discussion", title="Discussion",
                                   goal="the class debates what the slides taught")
        scenes.append(await pipeline.discussion("discussion", unique("discussion", taken), goal, taught))
    if wants_quiz and len(scenes) < 60:
        goal = schema.OutlineScene(kind="quiz", title="Check your understanding", goal="check what the slides taught",
                                   points=[p for summary in taught for p in summary["points"][:1]][:4])
        scenes.append(await pipeline.quiz("quiz", unique("quiz", taken), goal, taught))
    try:
        completed = lesson.model_copy(update={"scenes": scenes})
        return _result(pipeline, Lesson.model_validate(completed.model_dump()))
    except ValueError as exc:
        raise GenerationError(f"the completed lesson is invalid: {exc}") from None


def sample_facts(brief: LessonBrief) -> dict[str, Any]:
    """Data shaped like every step's, to render the templates once before any call."""
    scene = {"kind": "slide", "title": "A scene", "goal": "a goal", "points": ["a point", "another point"]}
    element = {"id": "idea", "type": "text", "text": "a sentence"}
    return {"topic": brief.topic, "level": brief.level, "language": brief.language, "scenes": brief.scenes,
            "compact": brief.limits.fixed_shapes, "title": brief.topic, "objectives": ["an objective"],
            "outline": [scene], "instruction": "", "neighbours": [], "voice": "", "scene": scene,
            "elements": [element], "position": "first", "previous_end": "", "kinds": None,
            "taught": [{"title": "A slide", "points": ["a point"], "said": "a sentence"}], "questions": 2,
            "options": 3, "students": [{"id": "student", "name": "Mia"}], "problem": "a problem"}


def check_prompts(prompts: PromptSet | None, brief: LessonBrief) -> None:
    """Render each generation template with :func:`sample_facts` (raises the template's ``PromptError``)."""
    chosen, data = resolve(prompts), sample_facts(brief)
    for name in TEMPLATES:
        chosen.render(f"generation/{name}.j2", data)
        if name == "outline" and brief.limits.fixed_shapes:
            chosen.render("generation/outline.j2", {**data, "kinds": ["slide", "quiz"]})
