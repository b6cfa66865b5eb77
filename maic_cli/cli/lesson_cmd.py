"""``maic lesson new "TOPIC"`` (generate a lesson file) and ``maic lesson check FILE`` (validate it).

``new`` resolves the model like ``maic chat`` (``--model``, ``$MAIC_MODEL``, config.yaml, a
provider key, then the built-in offline model), runs the generation pipeline
(``engine/generation.py``) with its progress on stderr, and writes the YAML only at the
end, atomically: Ctrl-C at any point exits 130 and leaves no file.  An existing file is
not overwritten without ``--force``.  stdout gets the path written; everything else
(progress, usage, notes) goes to stderr.

``check`` prints a lesson's outline, or its first problem as ``path:line: field: problem``
(exit 2).  Lesson files may come from anyone: what is printed from them is cleaned.

Like every command module, heavy imports (the engine, the stores, the clients) happen
inside the commands, so ``maic lesson --help`` stays light.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from ..errors import InputError
from ..untrusted import clean, one_line
from .errors import friendly
from .help_option import help_option

if TYPE_CHECKING:
    from ..engine.generation import GeneratedLesson, Initiator, LessonBrief
    from ..engine.lesson import Lesson
    from ..engine.prompt_set import PromptSet
    from ..llm.port import LLMClient
    from .lesson_progress import StepReporter

app = typer.Typer(help="Generate and check lesson files.", no_args_is_help=True)
MAX_TOPIC = 300
OFFLINE_NOTE = ("the small offline model writes a simple lesson; for a good one: "
                "--model openai/gpt-4o-mini, MAIC_MODEL or OPENAI_API_KEY")


@app.callback()
def _lesson(show_help: bool = help_option()) -> None:
    """Generate and check lesson files."""


def default_out(topic: str) -> Path:
    """``<topic slug>.yaml`` in the current folder."""
    from ..engine.generation_fixes import slug
    from ..untrusted import clean

    return Path(f"{slug(clean(topic), 'lesson', limit=60)}.yaml")


def class_initiators(agents_dir: list[Path]) -> tuple[Initiator, ...]:
    """The default class's students: who may open a generated discussion."""
    from ..engine.generation import Initiator
    from ..store.personas import DEFAULT_CLASS, load_registry

    registry = load_registry(agents_dir)
    return tuple(Initiator(a.id, a.name) for i in DEFAULT_CLASS if (a := registry.agents.get(i)) is not None
                 and a.role == "student")


async def generate(brief: LessonBrief, llm: LLMClient, prompts: PromptSet, reporter: StepReporter) -> GeneratedLesson:
    from ..engine.generation import generate_lesson
    from ..llm.port import close_llm

    try:
        with reporter.running():
            return await generate_lesson(brief, llm, prompts=prompts, progress=reporter)
    finally:
        await close_llm(llm)


def _summary(result: GeneratedLesson) -> str:
    kinds = [scene.type for scene in result.lesson.scenes]
    counts = ", ".join(f"{kinds.count(k)} {k}{'s' if kinds.count(k) != 1 else ''}"
                       for k in ("slide", "quiz", "discussion") if k in kinds)
    notes = [f"{result.retries} step{'s' if result.retries != 1 else ''} retried"] if result.retries else []
    notes += [f"{result.repaired} repl{'ies' if result.repaired != 1 else 'y'} repaired"] if result.repaired else []
    notes += [f"fixed: {result.fixes.describe()}"] if result.fixes else []
    return f"{len(kinds)} scenes ({counts})" + (f"; {'; '.join(notes)}" if notes else "")


@app.command("new")
@friendly
def new(
    topic: str = typer.Argument(..., help="What the lesson teaches, e.g. \"photosynthesis\"."),
    level: str = typer.Option("beginner", "--level", help="The learners' level (beginner, high school, …)."),
    language: str = typer.Option("English", "--language", help="The language the lesson is written in."),
    scenes: int = typer.Option(5, "--scenes", min=1, max=20, help="How many scenes (slides, quizzes, discussions)."),
    model: str = typer.Option(None, "--model", "-m", help="A litellm model (openai/gpt-4o-mini, …), local, "
                              "scripted:FILE. Default: as for maic chat. [env: MAIC_MODEL]"),
    api_base: str = typer.Option(None, "--api-base", help="Base URL of an OpenAI-compatible server."),
    out: Path = typer.Option(None, "--out", "-o", help="The file to write (default: <topic>.yaml here)."),
    force: bool = typer.Option(False, "--force", "-f", help="Overwrite --out if it exists."),
    structured: str = typer.Option(None, "--structured", help="Send each step's JSON schema: auto (where litellm "
                                   "reports support), off, json_schema (OpenAI form) or json_object (llama.cpp)."),
    prompts: Path = typer.Option(None, "--prompts", help="A folder of prompt templates overriding the built-in "
                                 "ones (generation/*.j2)."),
) -> None:
    """Generate a lesson file from a topic: outline, slides, lecture scripts, quizzes, discussions."""
    import asyncio

    from ..engine import generation_schemas as limits
    from ..engine.generation import LessonBrief
    from ..llm import make_llm
    from ..llm.spec import ModelSpec
    from ..store.config import load_settings
    from ..store.lesson_writer import check_writable, free_name, write_lesson
    from ..store.prompts import load_prompt_set
    from .chat_cmd import resolve_model
    from .lesson_progress import StepReporter, usage_line

    topic, level, language = (" ".join(text.split()) for text in (topic, level, language))
    for name, value, most in (("TOPIC", topic, MAX_TOPIC), ("--level", level, 80), ("--language", language, 40)):
        if not value or len(value) > most:
            raise InputError(f"{name}: give it in 1 to {most} characters")
    path = out if out is not None else default_out(topic)
    check_writable(path, force)  # before any model call
    prompt_set = load_prompt_set(prompts)
    settings = load_settings({"model": model, "api_base": api_base, "structured": structured})
    chosen = resolve_model(settings, None)
    spec = ModelSpec.parse(chosen)
    if spec.kind == "demo":
        raise InputError("the demo model only plays canned class replies and cannot write a lesson; use "
                         "--model local (the offline model) or a provider's model, e.g. --model openai/gpt-4o-mini")
    brief = LessonBrief(topic=topic, level=level, language=language, scenes=scenes,
                        initiators=class_initiators(settings.agents_dir),
                        limits=limits.COMPACT if spec.compact_prompts else limits.FULL)
    typer.echo(f"maic: generating a lesson on {one_line(topic)!r} with {one_line(chosen)} into {one_line(str(path))}",
               err=True)
    if spec.kind == "local":
        typer.echo(f"maic: note: {OFFLINE_NOTE}", err=True)
    llm = make_llm(chosen, api_base=settings.api_base, temperature=settings.temperature,
                   structured=settings.structured or "auto")
    try:
        result = asyncio.run(generate(brief, llm, prompt_set, StepReporter()))
    except asyncio.CancelledError:  # a cancelled call: the same as Ctrl-C
        raise KeyboardInterrupt from None
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    if not force and (path.exists() or path.is_symlink()):  # created while the lesson was being written
        taken, path = path, free_name(path)
        typer.echo(f"maic: note: {one_line(str(taken))} appeared meanwhile; the lesson goes to "
                   f"{one_line(str(path))} instead", err=True)
    write_lesson(path, result.lesson, [f"A lesson written by maic lesson new on {stamp}", f"topic: {topic}",
                                       f"model: {chosen}", f"check it: maic lesson check {path}"], force=force)
    typer.echo(f"maic: wrote {one_line(str(path))}: {_summary(result)}", err=True)
    typer.echo(f"maic: usage: {usage_line(result.usage, result.calls)}", err=True)
    typer.echo(str(path))


def outline_lines(lesson: Lesson) -> list[str]:
    """The lesson at a glance: its header, then one line per scene (and its questions)."""
    from ..engine.lesson import QuizScene, SlideScene

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
def check(file: Path = typer.Argument(..., help="The lesson file (YAML).")) -> None:
    """Validate a lesson file and print its outline (exit 2 if it is invalid)."""
    from ..store.lessons import load_lesson

    lesson = load_lesson(file)
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
