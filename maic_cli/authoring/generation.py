"""``maic lesson new``: a lesson generated from a topic, one structured-output call per step.

The pipeline (after OpenMAIC's ``lib/generation``, with our own prompts in
``prompts/generation/``): requirements (title, description, objectives) → outline (the
scenes: kind, title, one-line goal and 2–4 key points) → per slide scene its elements with
ids, written from its key points, then its lecture script (speech and spotlight/laser steps
on those ids), which knows the outline, its place (the first slide greets, the last sums
up) and how the lecture before it ended → per quiz scene its questions, each with a
one-sentence explanation → per discussion scene its topic, prompt and initiator.

Each call carries the step's JSON schema (authoring/schemas.py); the reply is read
like any model reply (the JSON found in it, else repaired by json-repair), checked
against the step's reply model and then against the lesson models themselves.  A reply
that still cannot be used is asked for again (``retries`` times) with the problem told
to the model; after that the step fails with :class:`GenerationError`, one line naming
it.  Safe fix-ups are made and counted (authoring/fixes.py).  Pure and async: no files,
no terminal; progress goes to a callback.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ValidationError

from ..engine.models import SlideElement
from ..engine.prompt_set import PromptSet, resolve
from ..errors import MaicError
from ..lessons.lesson import DiscussionScene, ExpectedQuestion, Lesson, QuizScene, Scene, ScriptStep, SlideScene
from ..llm.port import LLMClient, LLMError, LLMRequest, Usage, read_reply
from ..replies.json_reply import first_json_object
from ..replies.sanitize import replace_surrogates
from ..untrusted import clean
from . import fixes as fix
from . import schemas as schema

R = TypeVar("R", bound=BaseModel)
T = TypeVar("T")
MAX_REPLY_CHARS = 100_000  # a lesson step is a few thousand characters
MAX_REPAIR_CHARS = 30_000  # what json-repair is given (it is slower than json.loads)
MAX_DEPTH = 12  # containers in a step's reply (a table's cells are 5 deep)
MAX_BAD_REPLY_QUOTED = 1_500  # of a failed reply, sent back with the retry


class GenerationError(MaicError):
    """A step whose replies could not be used, or whose provider failed: one line naming the step."""


@dataclass(frozen=True)
class Initiator:
    id: str
    name: str


@dataclass(frozen=True)
class LessonBrief:
    """What the learner asked for."""

    topic: str
    level: str = "beginner"
    language: str = "English"
    scenes: int = 5
    initiators: tuple[Initiator, ...] = ()  # the students who may open a discussion
    limits: schema.Limits = schema.FULL


@dataclass(frozen=True)
class Progress:
    """A step started, was retried (with the problem) or finished."""

    kind: Literal["start", "retry", "done"]
    step: str  # e.g. "outline", "slide 2/3: elements"
    number: int  # 1-based
    total: int | None  # known once the outline is
    problem: str | None = None


@dataclass
class GeneratedLesson:
    lesson: Lesson
    usage: Usage = field(default_factory=Usage)
    fixes: fix.Fixes = field(default_factory=fix.Fixes)
    calls: int = 0
    retries: int = 0
    repaired: int = 0  # replies whose JSON needed repair


def planned_kinds(scenes: int) -> list[str]:
    """The scene kinds a small model gets: slides, a discussion before the end (5+), a quiz last (2+)."""
    if scenes == 1:
        return ["slide"]
    kinds = ["slide"] * (scenes - 1) + ["quiz"]
    if scenes >= 5:
        kinds[-2] = "discussion"
    return kinds


def read_json_object(text: str, keys: frozenset[str] = frozenset()) -> tuple[dict[str, Any] | None, bool]:
    """The first JSON object in ``text`` with one of ``keys`` (any object if none are given; code fences
    and prose around it skipped, not an object inside a broken one), repaired if it must be; and
    whether it was repaired."""
    return first_json_object(text, accept=lambda value: not keys or not keys.isdisjoint(value),
                             max_depth=MAX_DEPTH, max_repair=MAX_REPAIR_CHARS)


@dataclass(frozen=True)
class Place:
    """Where a slide stands among the lesson's slides, and how the lecture before it ended."""

    position: Literal["first", "middle", "last", "only"] = "middle"
    previous_end: str = ""  # the last sentence the teacher said on the slide before


def place(slides: list[int], index: int, previous_end: str) -> Place:
    """The :class:`Place` of the scene at ``index`` given the indexes of every slide scene."""
    if slides == [index]:
        return Place("only", "")
    if slides and index == slides[0]:
        return Place("first", "")
    return Place("last" if slides and index == slides[-1] else "middle", previous_end)


def last_sentence(script: list[ScriptStep]) -> str:
    """The end of a lecture: its last spoken sentence (for the next slide's lecture to carry on from)."""
    said = [step.say for step in script if step.say]
    if not said:
        return ""
    sentences = [part for part in said[-1].replace("! ", "!\n").replace("? ", "?\n").replace(". ", ".\n").split("\n")
                 if part.strip()]
    return sentences[-1].strip()[:300] if sentences else ""


class Pipeline:
    def __init__(self, brief: LessonBrief, llm: LLMClient, prompts: PromptSet,
                 progress: Callable[[Progress], None], retries: int) -> None:
        self.brief, self.llm, self.prompts = brief, llm, prompts
        self.report, self.retries = progress, retries
        self.result_usage, self.fixes = Usage(), fix.Fixes()
        self.number = 0  # steps started
        self.total: int | None = None  # steps in all, once the outline is known
        self.calls = self.retried = self.repaired = 0
        self.last_faq: list[ExpectedQuestion] = []  # the last lecture step's expected questions
        self.facts: dict[str, Any] = {"topic": brief.topic, "level": brief.level, "language": brief.language,
                                      "scenes": brief.scenes, "compact": brief.limits.fixed_shapes,
                                      "title": brief.topic, "objectives": [], "outline": [], "instruction": "",
                                      "neighbours": [], "voice": ""}

    # -- one step ------------------------------------------------------------------------------
    async def ask(self, step: str, template: str, data: dict[str, Any], reply_model: type[R],
                  response_schema: dict[str, Any], build: Callable[[R], T], tokens: float = 1.0) -> T:
        """Call the model for ``step`` until ``build`` accepts its reply (bounded), and return what it built;
        ``tokens`` scales the reply's token limit (the outline holds every scene)."""
        self.number += 1
        self.report(Progress("start", step, self.number, self.total))
        messages = [{"role": "system", "content": self.prompts.render("generation/system.j2", self.facts)},
                    {"role": "user", "content": self.prompts.render(template, {**self.facts, **data})}]
        for attempt in range(self.retries + 1):
            reply = await self._call(step, messages, response_schema, attempt, tokens)
            try:
                built = self._use(reply, reply_model, build)
            except fix.StepProblem as problem:
                if attempt == self.retries:
                    raise GenerationError(f"lesson generation failed at step {step!r}: after {attempt + 1} "
                                          f"replies, still unusable: {problem}") from None
                self.retried += 1
                self.report(Progress("retry", step, self.number, self.total, str(problem)))
                messages = [*messages[:2], {"role": "assistant", "content": reply[:MAX_BAD_REPLY_QUOTED]},
                            {"role": "user", "content": self.prompts.render(
                                "generation/retry.j2", {**self.facts, "problem": str(problem)})}]
                continue
            self.report(Progress("done", step, self.number, self.total))
            return built
        raise AssertionError("unreachable")  # pragma: no cover

    async def _call(self, step: str, messages: list[dict[str, str]], response_schema: dict[str, Any],
                    attempt: int, tokens: float = 1.0) -> str:
        limits = self.brief.limits
        temperature = None if limits.temperature is None else limits.temperature + limits.retry_warmer * attempt
        request = LLMRequest(messages=messages, purpose="generate", max_tokens=int(limits.max_tokens * tokens),
                             response_schema=response_schema, temperature=temperature)
        self.calls += 1
        try:
            reply = await read_reply(self.llm, request, MAX_REPLY_CHARS, self._add_usage)
        except LLMError as exc:
            raise GenerationError(f"lesson generation failed at step {step!r}: {exc}") from None
        return replace_surrogates(reply)

    def _use(self, reply: str, reply_model: type[R], build: Callable[[R], T]) -> T:
        found, repaired = read_json_object(reply, frozenset(reply_model.model_fields))
        self.repaired += repaired
        if found is None:
            raise fix.StepProblem("the reply holds no JSON object; reply with the JSON object only")
        try:
            parsed = reply_model.model_validate(_cleaned(found))
        except ValidationError as exc:
            raise fix.StepProblem(fix.first_problem(exc)) from None
        return build(parsed)

    def _add_usage(self, usage: Usage) -> None:
        total = self.result_usage
        total.prompt_tokens += usage.prompt_tokens
        total.completion_tokens += usage.completion_tokens
        total.cached_tokens += usage.cached_tokens
        total.cost += usage.cost

    # -- the steps -------------------------------------------------------------------------------
    async def requirements(self) -> schema.RequirementsReply:
        def build(reply: schema.RequirementsReply) -> schema.RequirementsReply:
            if not reply.objectives:
                raise fix.StepProblem("objectives: give at least one learning objective")
            return reply.model_copy(update={"objectives": reply.objectives[:self.brief.limits.objectives]})

        return await self.ask("requirements", "generation/requirements.j2", {}, schema.RequirementsReply,
                              schema.requirements_schema(self.brief.limits), build)

    async def outline(self) -> list[schema.OutlineScene]:
        wanted = self.brief.scenes
        kinds = planned_kinds(wanted) if self.brief.limits.fixed_shapes else None

        def build(reply: schema.OutlineReply) -> list[schema.OutlineScene]:
            scenes = reply.scenes
            if len(scenes) > wanted:
                self.fixes["outline scenes beyond --scenes dropped"] += len(scenes) - wanted
                scenes = scenes[:wanted]
            if len(scenes) < wanted:
                raise fix.StepProblem(f"scenes: the outline has {len(scenes)} scenes; it needs exactly {wanted}")
            if not any(scene.kind == "slide" for scene in scenes):
                raise fix.StepProblem("scenes: the outline needs at least one slide scene")
            least, most = self.brief.limits.key_points
            for number, scene in enumerate(scenes):
                if scene.kind != "discussion" and len(scene.points) < least:
                    raise fix.StepProblem(f"scenes.{number}.points: give each scene {least} to {most} key points, "
                                          "short facts its slide teaches or its quiz checks")
            return [scene.model_copy(update={"points": scene.points[:most]}) for scene in scenes]

        return await self.ask("outline", "generation/outline.j2", {"kinds": kinds}, schema.OutlineReply,
                              schema.outline_schema(kinds, wanted, self.brief.limits), build,
                              tokens=max(1.0, wanted / 3))

    async def slide(self, label: str, scene_id: str, planned: schema.OutlineScene, place: Place) -> SlideScene:
        elements = await self.ask(
            f"{label}: elements", "generation/slide.j2", {"scene": planned.model_dump()}, schema.ElementsReply,
            schema.elements_schema(self.brief.limits),
            lambda reply: fix.slide_elements(reply.elements, self.brief.limits.elements[1], self.fixes))
        script = await self.script(label, planned, elements, place)
        return fix.slide_scene(scene_id, planned.title, elements, script, self.last_faq)

    async def script(self, label: str, planned: schema.OutlineScene, elements: list[SlideElement],
                     place: Place) -> list[ScriptStep]:
        """The lecture of a slide holding ``elements``, knowing where it stands and how the last one ended."""
        ids = [element.id for element in elements]
        shown = [{"id": e.id, "type": e.type, "text": e.plain_text()[:300]} for e in elements]
        # The class's students may have a line of the lecture (``by``), on models that write free shapes.
        speakers = [] if self.brief.limits.fixed_shapes else [i.id for i in self.brief.initiators]
        students = [{"id": i.id, "name": i.name} for i in self.brief.initiators if i.id in speakers]
        data = {"scene": planned.model_dump(), "elements": shown, "position": place.position,
                "previous_end": place.previous_end, "students": students}
        def build(reply: schema.ScriptReply) -> list[ScriptStep]:
            steps = fix.slide_script(reply.steps, elements, self.fixes, speakers)
            self.last_faq = fix.expected(reply.faq, self.fixes)  # the questions the teacher expects on it
            return steps

        self.last_faq = []
        return await self.ask(f"{label}: lecture", "generation/script.j2", data, schema.ScriptReply,
                              schema.script_schema(ids, self.brief.limits, speakers), build)

    async def quiz(self, label: str, scene_id: str, planned: schema.OutlineScene,
                   taught: list[dict[str, Any]]) -> QuizScene:
        def build(reply: schema.QuizReply) -> QuizScene:
            questions = [fix.quiz_question(q, n, self.fixes) for n, q in enumerate(reply.questions, 1)]
            return fix.quiz_scene(scene_id, planned.title, questions, self.fixes)

        return await self.ask(f"{label}: questions", "generation/quiz.j2",
                              {"scene": planned.model_dump(), "taught": taught,
                               "questions": self.brief.limits.questions[1], "options": self.brief.limits.options[1]},
                              schema.QuizReply, schema.quiz_schema(self.brief.limits), build)

    async def discussion(self, label: str, scene_id: str, planned: schema.OutlineScene,
                         taught: list[dict[str, Any]]) -> DiscussionScene:
        ids = [i.id for i in self.brief.initiators]
        students = [{"id": i.id, "name": i.name} for i in self.brief.initiators]
        return await self.ask(
            f"{label}: prompt", "generation/discussion.j2",
            {"scene": planned.model_dump(), "taught": taught, "students": students},
            schema.DiscussionReply, schema.discussion_schema(ids, self.brief.limits),
            lambda reply: fix.discussion_scene(scene_id, planned.title, reply, ids, self.fixes))

    # -- the whole lesson ----------------------------------------------------------------------
    async def plan(self) -> tuple[schema.RequirementsReply, list[schema.OutlineScene]]:
        """The first two steps: what the lesson is about, and its scenes with their key points."""
        requirements = await self.requirements()
        self.facts.update(title=requirements.title, objectives=list(requirements.objectives))
        return requirements, await self.outline()

    def use_plan(self, requirements: schema.RequirementsReply, planned: list[schema.OutlineScene]) -> None:
        self.facts.update(title=requirements.title, objectives=list(requirements.objectives),
                          outline=[scene.model_dump() for scene in planned])

    async def build(self, requirements: schema.RequirementsReply, planned: list[schema.OutlineScene]) -> Lesson:
        """Every scene of the outline, in order: slides with their lectures, quizzes, discussions."""
        self.use_plan(requirements, planned)
        self.total = self.number + sum(2 if scene.kind == "slide" else 1 for scene in planned)
        slides = [number for number, scene in enumerate(planned) if scene.kind == "slide"]
        taken: set[str] = set()
        scenes: list[Scene] = []
        previous_end = ""
        for number, scene in enumerate(planned, 1):
            label = f"scene {number}/{len(planned)} ({scene.kind})"
            scene_id = fix.unique(fix.slug(scene.title, f"scene-{number}"), taken)
            taught = [slide_summary(s) for s in scenes if isinstance(s, SlideScene)]
            if scene.kind == "slide":
                built = await self.slide(label, scene_id, scene, place(slides, number - 1, previous_end))
                previous_end = last_sentence(built.script)
                scenes.append(built)
            elif scene.kind == "quiz":
                scenes.append(await self.quiz(label, scene_id, scene, taught))
            else:
                scenes.append(await self.discussion(label, scene_id, scene, taught))
        try:
            return Lesson(title=requirements.title, level=self.brief.level, language=self.brief.language,
                          description=requirements.description or None, scenes=scenes)
        except ValidationError as exc:
            raise GenerationError(f"lesson generation produced an invalid lesson: {fix.first_problem(exc)}") from None

    async def run(self) -> Lesson:
        requirements, planned = await self.plan()
        return await self.build(requirements, planned)


def _cleaned(value: Any) -> Any:
    """Model text as the lesson keeps it: no terminal control sequences, invisible characters shown."""
    if isinstance(value, str):
        return clean(value)
    if isinstance(value, dict):
        return {str(key): _cleaned(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_cleaned(item) for item in value]
    return value


def slide_summary(scene: SlideScene) -> dict[str, Any]:
    """What a slide taught, for the quiz and discussion prompts."""
    said = " ".join(step.say for step in scene.script if step.say)
    return {"title": scene.title, "points": [e.plain_text()[:200] for e in scene.elements], "said": said[:600]}


async def generate_lesson(brief: LessonBrief, llm: LLMClient, *, prompts: PromptSet | None = None,
                          progress: Callable[[Progress], None] | None = None, retries: int = 2) -> GeneratedLesson:
    """Generate a whole lesson for ``brief`` with ``llm``; raises :class:`GenerationError` on a step that fails."""
    pipeline = Pipeline(brief, llm, resolve(prompts), progress or (lambda _: None), retries)
    lesson = await pipeline.run()
    return GeneratedLesson(lesson=lesson, usage=pipeline.result_usage, fixes=pipeline.fixes, calls=pipeline.calls,
                           retries=pipeline.retried, repaired=pipeline.repaired)
