"""``maic lesson new "TOPIC"`` (generate a lesson file) and ``maic lesson check FILE`` (validate it).

``new`` resolves the model like ``maic chat`` (``--model``, ``$MAIC_MODEL``, config.yaml, a
provider key, then the built-in offline model), runs the generation pipeline
(``authoring/generation.py``) with its progress on stderr, and writes the YAML only at the
end, atomically: Ctrl-C at any point exits 130 and leaves no file.  An existing file is
not overwritten without ``--force``.  stdout gets the path written; everything else
(progress, usage, notes) goes to stderr.

``check`` prints a lesson's outline, or its first problem as ``path:line: field: problem``
(exit 2).  Lesson files may come from anyone: what is printed from them is cleaned.

Like every command module, heavy imports (the engine, the stores, the clients) happen
inside the commands, so ``maic lesson --help`` stays light.
"""

from __future__ import annotations

from collections.abc import Awaitable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import typer

from ..errors import InputError
from ..untrusted import clean, one_line
from .errors import friendly
from .help_option import LITELLM_MODELS, LOCAL_MODEL, MODEL_DEFAULT, help_option
from .lesson_progress import class_initiators, refuse_model, result_summary, run_closing

if TYPE_CHECKING:
    from ..authoring.generation import GeneratedLesson, LessonBrief
    from ..authoring.scenes import LessonOutline
    from ..engine.prompt_set import PromptSet
    from ..lessons.lesson import Lesson
    from ..llm.port import LLMClient
    from .lesson_progress import StepReporter

app = typer.Typer(help="Generate, import, export and check lesson files.", no_args_is_help=True)
T = TypeVar("T")
MAX_TOPIC = 300
MAX_SCENES = 20


@app.callback()
def _lesson(show_help: bool = help_option()) -> None:
    """Generate and check lesson files."""


def default_out(topic: str, suffix: str = "") -> Path:
    """``<topic slug><suffix>.yaml`` in the current folder."""
    from ..authoring.fixes import slug
    from ..untrusted import clean

    return Path(f"{slug(clean(topic), 'lesson', limit=60)}{suffix}.yaml")


async def generate(brief: LessonBrief, llm: LLMClient, prompts: PromptSet, reporter: StepReporter) -> GeneratedLesson:
    from ..authoring.generation import generate_lesson
    from ..llm.port import close_llm

    try:
        with reporter.running():
            return await generate_lesson(brief, llm, prompts=prompts, progress=reporter)
    finally:
        await close_llm(llm)


@app.command("new")
@friendly
def new(
    topic: str = typer.Argument(None, help="What the lesson teaches, e.g. \"photosynthesis\" (not with "
                                "--from-outline).", show_default=False),
    level: str = typer.Option("beginner", "--level", help="The learners' level (beginner, high school, …)."),
    language: str = typer.Option("English", "--language", help="The language the lesson is written in."),
    scenes: int = typer.Option(5, "--scenes", help=f"How many scenes (slides, quizzes, discussions), 1 to "
                               f"{MAX_SCENES}."),
    model: str = typer.Option(None, "--model", "-m", help=f"The model that writes the lesson: {LOCAL_MODEL}, "
                              f"{LITELLM_MODELS} or scripted:FILE (demo cannot write one). Default: {MODEL_DEFAULT}. "
                              "Also read from MAIC_MODEL."),
    api_base: str = typer.Option(None, "--api-base", help="Base URL of an OpenAI-compatible server."),
    out: Path = typer.Option(None, "--out", "-o", help="The file to write (default: <topic>.yaml here)."),
    force: bool = typer.Option(False, "--force", "-f", help="Overwrite --out if it exists."),
    structured: str = typer.Option(None, "--structured", help="Send each step's JSON schema: auto (where litellm "
                                   "reports support), off, json_schema (OpenAI form) or json_object (llama.cpp)."),
    prompts: Path = typer.Option(None, "--prompts", help="A folder of prompt templates overriding the built-in "
                                 "ones (generation/*.j2)."),
    outline_only: bool = typer.Option(False, "--outline-only", help="Write only the outline (scenes, their goals "
                                      "and key points) to edit, then build it with --from-outline."),
    from_outline: Path = typer.Option(None, "--from-outline", help="Build the lesson from this outline file "
                                      "(one --outline-only wrote, edited or not)."),
) -> None:
    """Generate a lesson file from a topic (or an outline): outline, slides, lecture scripts, quizzes, discussions."""
    import asyncio

    from ..authoring import schemas as limits
    from ..authoring.generation import LessonBrief
    from ..authoring.scenes import LessonOutline, check_prompts
    from ..chat.setup import resolve_model
    from ..llm.factory import make_llm
    from ..llm.keys import check_key
    from ..store.config import load_settings
    from ..store.lesson_writer import check_writable, free_name, outline_yaml, write_lesson
    from ..store.paths import write_atomic
    from ..store.prompts import load_prompt_set
    from ..yamlfile import load_model
    from .lesson_progress import StepReporter, usage_line

    if outline_only and from_outline is not None:
        raise InputError("--outline-only and --from-outline: give one of them (the outline is written, or read)")
    outline: LessonOutline | None = None
    if from_outline is not None:
        if topic is not None:
            raise InputError("TOPIC: not with --from-outline (the outline has the lesson's title)")
        outline = load_model(from_outline, LessonOutline)
        topic, level, language, scenes = outline.title, outline.level, outline.language, len(outline.scenes)
    if topic is None:
        raise InputError("TOPIC: say what the lesson teaches, e.g. maic lesson new \"photosynthesis\" "
                         "(or build one with --from-outline FILE)")
    if not 1 <= scenes <= MAX_SCENES:
        raise InputError(f"--scenes: give 1 to {MAX_SCENES} scenes (not {scenes})")
    topic, level, language = (" ".join(text.split()) for text in (topic, level, language))
    for name, value, most in (("TOPIC", topic, MAX_TOPIC), ("--level", level, 80), ("--language", language, 40)):
        if not value or len(value) > most:
            raise InputError(f"{name}: give it in 1 to {most} characters")
    path = out if out is not None else default_out(topic, "-outline" if outline_only else "")
    check_writable(path, force)  # before any model call
    prompt_set = load_prompt_set(prompts)
    settings = load_settings({"model": model, "api_base": api_base, "structured": structured})
    spec = resolve_model(settings, None)
    chosen = spec.raw
    refuse_model(spec)
    check_key(spec, api_base=settings.api_base)  # a hosted model without its key: one line, before any call
    brief = LessonBrief(topic=topic, level=level, language=language, scenes=scenes,
                        initiators=class_initiators(settings.agents_dir),
                        limits=limits.COMPACT if spec.compact_prompts else limits.FULL)
    check_prompts(prompt_set, brief)  # a broken override fails now, before the first (paid) step
    what = "an outline" if outline_only else "a lesson"
    typer.echo(f"maic: generating {what} on {one_line(topic)!r} with {one_line(chosen)} into {one_line(str(path))}",
               err=True)
    llm = make_llm(spec, api_base=settings.api_base, temperature=settings.temperature,
                   structured=settings.structured or "auto")
    reporter = StepReporter()
    try:
        if outline_only:
            planned = asyncio.run(run_closing(llm, reporter, plan_outline_call(brief, llm, prompt_set, reporter)))
            header = [f"An outline written by maic lesson new --outline-only; model: {chosen}",
                      f"edit it, then: maic lesson new --from-outline {path}"]
            write_atomic(path, outline_yaml(planned, header))
            typer.echo(f"maic: wrote the outline {one_line(str(path))}: {len(planned.scenes)} scenes", err=True)
            typer.echo(str(path))
            return
        if outline is not None:
            result = asyncio.run(run_closing(llm, reporter, from_outline_call(outline, brief, llm, prompt_set,
                                                                              reporter)))
        else:
            result = asyncio.run(generate(brief, llm, prompt_set, reporter))
    except asyncio.CancelledError:  # a cancelled call: the same as Ctrl-C
        raise KeyboardInterrupt from None
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    if not force and (path.exists() or path.is_symlink()):  # created while the lesson was being written
        taken, path = path, free_name(path)
        typer.echo(f"maic: note: {one_line(str(taken))} appeared meanwhile; the lesson goes to "
                   f"{one_line(str(path))} instead", err=True)
    write_lesson(path, result.lesson, [f"A lesson written by maic lesson new on {stamp}", f"topic: {topic}",
                                       f"model: {chosen}", f"check it: maic lesson check {path}"], force=force)
    typer.echo(f"maic: wrote {one_line(str(path))}: {result_summary(result)}", err=True)
    typer.echo(f"maic: usage: {usage_line(result.usage, result.calls)}", err=True)
    typer.echo(str(path))


def plan_outline_call(brief: LessonBrief, llm: LLMClient, prompts: PromptSet,
                      reporter: StepReporter) -> Awaitable[LessonOutline]:
    from ..authoring.scenes import plan_outline

    return plan_outline(brief, llm, prompts=prompts, progress=reporter)


def from_outline_call(outline: LessonOutline, brief: LessonBrief, llm: LLMClient, prompts: PromptSet,
                      reporter: StepReporter) -> Awaitable[GeneratedLesson]:
    from ..authoring.scenes import lesson_from_outline

    return lesson_from_outline(outline, brief, llm, prompts=prompts, progress=reporter)


def outline_lines(lesson: Lesson) -> list[str]:
    """The lesson at a glance: its header, then one line per scene (and its questions)."""
    from ..lessons.lesson import QuizScene, SlideScene

    lines = [lesson.title, f"level: {lesson.level}" + (f" · language: {lesson.language}" if lesson.language else "")]
    if lesson.description:
        lines.append(lesson.description)
    for number, scene in enumerate(lesson.scenes, 1):
        if isinstance(scene, SlideScene):
            ids = ", ".join(e.id for e in scene.elements) or "no elements"
            script = f"{len(scene.script)} script steps" if scene.script else "no script (lectured live)"
            lines.append(f"{number:>2}. slide {scene.id}: {scene.title} [{ids}] ({script})")
        elif isinstance(scene, QuizScene):
            lines.append(f"{number:>2}. quiz {scene.id}: {scene.title} ({len(scene.questions)} questions, "
                         f"{scene.max_points} points)")
            lines += [f"      {q.id} ({q.type}): {q.question}" for q in scene.questions]
        else:
            who = f", opened by {scene.initiator}" if scene.initiator else ""
            lines.append(f"{number:>2}. discussion {scene.id}: {scene.topic}{who}")
    return lines


@app.command("check")
@friendly
def check(file: Path = typer.Argument(..., help="The lesson file (YAML)."),
          agents_dir: list[Path] = typer.Option(None, "--agents-dir", help="A folder of persona files the lesson's "
                                                "class comes from (as for maic chat). Repeatable.")) -> None:
    """Validate a lesson file and print its outline (exit 2 if it is invalid)."""
    from ..store.config import load_settings
    from ..store.lesson_class import class_problems, speaker_warnings
    from ..store.lessons import load_lesson
    from ..store.personas import load_registry

    lesson = load_lesson(file)
    registry = load_registry(load_settings({"agents_dir": agents_dir or None}).agents_dir)
    problems = class_problems(lesson, file, registry)
    if problems:  # what maic chat --lesson would refuse, said now
        raise InputError(problems[0] + (f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""))
    for warning in speaker_warnings(lesson, file, registry):  # played, by the teacher: a warning only
        typer.echo("warning: " + clean(warning).replace("\n", " "), err=True)
    for line in outline_lines(lesson):
        typer.echo(clean(line).replace("\n", " "))


@app.command("list")
@friendly
def list_cmd() -> None:
    """The lessons you can play by name: maic chat --lesson NAME (built-in, and $MAIC_HOME/lessons)."""
    from ..store.lessons import list_lessons

    entries = list_lessons()
    if not entries:
        typer.echo("no lessons found (a lesson is a .yaml file: maic chat --lesson FILE)")
        return
    width = max(len(entry.name) for entry in entries)
    for entry in entries:
        if entry.lesson is None:
            typer.echo(f"{entry.name:<{width}}  (cannot be read: {one_line(entry.problem or '')[:200]})")
            continue
        lesson = entry.lesson
        kinds = [scene.type for scene in lesson.scenes]
        scenes = ", ".join(f"{kinds.count(k)} {k}{'s' if kinds.count(k) != 1 else ''}"
                           for k in ("slide", "discussion", "quiz") if k in kinds)
        typer.echo(f"{entry.name:<{width}}  {one_line(lesson.title)[:80]} · {one_line(lesson.level)[:40]} · "
                   f"{len(kinds)} scenes ({scenes})")
    typer.echo("play one: maic chat --lesson NAME")


from .lesson_author import register as _register_authoring  # noqa: E402 - after this module's own commands

_register_authoring(app)
