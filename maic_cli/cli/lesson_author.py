"""``maic lesson import | export | regen``: a teacher's own material in, decks and notes out, one scene again.

* ``import FILE`` reads a deck (.pptx), notes (.md) or a PDF into a lesson file, offline and
  with no model call; with ``--model`` the model writes what the material lacks (lectures
  for slides without notes, a discussion, a quiz).
* ``export LESSON --out deck.pptx | notes.md | lesson.html | lesson.scorm.zip | …`` writes the lesson as a deck,
  notes, a web player in one page, a SCORM 1.2 package (the same player reporting to an LMS), an OpenMAIC
  classroom, a video, its audio or captions.
* ``regen LESSON --scene ID`` writes one scene again with a model; the rest of the file stays
  byte for byte, and the result goes to a new file unless ``--force``.

stdout gets the path written; notes and progress go to stderr.  Heavy imports happen
inside the commands (``maic --help`` stays light).
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from ..errors import InputError
from ..untrusted import one_line
from .errors import friendly
from .help_option import VOICE_HELP

if TYPE_CHECKING:
    from ..authoring.generation import LessonBrief
    from ..engine.models import AgentConfig
    from ..lessons.lesson import Lesson
    from ..media.export import Targets

_MODEL_HELP = ("A litellm model (openai/gpt-4o-mini, …), local (the built-in offline model) or scripted:FILE. "
               "Default: as for maic chat. [env: MAIC_MODEL]")


def _stamp() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")


def _yaml_out(out: Path | None, source: Path) -> Path:
    from ..formats.common import slug

    path = out if out is not None else Path(f"{slug(source.stem, 'lesson')}.yaml")
    if path.suffix.lower() not in (".yaml", ".yml"):
        raise InputError(f"{path}: a lesson file is YAML; give --out a name ending in .yaml")
    return path


def _model_brief(lesson: Lesson, model: str | None, api_base: str | None) -> tuple[str, LessonBrief, object]:
    """The chosen model, a brief for the lesson, and the client (as ``maic lesson new`` chooses them)."""
    from ..authoring import schemas as limits
    from ..authoring.generation import LessonBrief
    from ..chat.setup import resolve_model
    from ..llm.factory import make_llm
    from ..store.config import load_settings
    from .lesson_progress import class_initiators, refuse_model

    settings = load_settings({"model": model, "api_base": api_base})
    spec = resolve_model(settings, None)
    refuse_model(spec)
    brief = LessonBrief(topic=lesson.title, level=lesson.level, language=lesson.language or "English",
                        scenes=len(lesson.scenes), initiators=class_initiators(settings.agents_dir),
                        limits=limits.COMPACT if spec.compact_prompts else limits.FULL)
    llm = make_llm(spec, api_base=settings.api_base, temperature=settings.temperature,
                   structured=settings.structured or "auto")
    return spec.raw, brief, llm


def import_command(
    file: Path = typer.Argument(..., help="A PowerPoint deck (.pptx), Markdown notes (.md) or a PDF (.pdf)."),
    out: Path = typer.Option(None, "--out", "-o", help="The lesson file to write (default: <file name>.yaml here)."),
    model: str = typer.Option(None, "--model", "-m", help="Write what the material lacks (lectures for slides "
                              "without notes, a discussion, a quiz) with this model. " + _MODEL_HELP),
    api_base: str = typer.Option(None, "--api-base", help="Base URL of an OpenAI-compatible server."),
    force: bool = typer.Option(False, "--force", "-f", help="Overwrite --out if it exists."),
    prompts: Path = typer.Option(None, "--prompts", help="A folder of prompt templates overriding the built-in ones."),
) -> None:
    """Turn a teacher's deck, notes or PDF into a lesson file (offline; no model unless --model)."""
    import asyncio

    from ..formats.importer import import_lesson
    from ..llm.port import LLMClient
    from ..store.lesson_writer import check_writable, write_lesson
    from ..store.prompts import load_prompt_set
    from .lesson_progress import StepReporter, result_summary, run_closing, usage_line

    path = _yaml_out(out, file)
    check_writable(path, force)
    imported = import_lesson(file)
    lesson = imported.lesson
    for note in imported.notes:
        typer.echo(f"maic: note: {one_line(note)}", err=True)
    header = [f"Imported from {file.name} by maic lesson import on {_stamp()}", f"check it: maic lesson check {path}"]
    folder = _personas_folder(path, imported.personas, force)
    if folder is not None:
        header[1] += f" --agents-dir {folder}"
        header.insert(1, f"its class's personas: {folder} (maic chat --lesson {path} --agents-dir {folder})")
    if model is not None:
        from ..authoring.scenes import check_prompts, complete_lesson

        prompt_set = load_prompt_set(prompts)
        chosen, brief, llm = _model_brief(lesson, model, api_base)
        assert isinstance(llm, LLMClient)
        check_prompts(prompt_set, brief)
        typer.echo(f"maic: writing what {one_line(file.name)} lacks with {one_line(chosen)}", err=True)
        reporter = StepReporter()
        result = asyncio.run(run_closing(llm, reporter, complete_lesson(lesson, brief, llm, prompts=prompt_set,
                                                                        progress=reporter)))
        lesson = result.lesson
        header.insert(1, f"lectures, quiz and discussion the material lacked written by {chosen}")
        typer.echo(f"maic: usage: {usage_line(result.usage, result.calls)}; {result_summary(result)}", err=True)
    write_lesson(path, lesson, header, force=force)
    if folder is not None:
        _write_personas(folder, imported.personas, file.name)
    kinds = [scene.type for scene in lesson.scenes]
    counts = ", ".join(f"{kinds.count(k)} {k}{'s' if kinds.count(k) != 1 else ''}"
                       for k in ("slide", "quiz", "discussion") if k in kinds)
    typer.echo(f"maic: wrote {one_line(str(path))}: {one_line(lesson.title)!r}, {counts}", err=True)
    typer.echo(str(path))


def _personas_folder(path: Path, personas: list[AgentConfig], force: bool) -> Path | None:
    """Where the personas an imported classroom brings (OpenMAIC's agents) are written: a folder beside the lesson
    (``<lesson>-agents/``), each file refused when it exists unless ``force``; ``None``: none to write."""
    if not personas:
        return None
    from ..store.lesson_writer import check_writable

    folder = path.with_name(f"{path.stem}-agents")
    files = [(folder / f"{agent.id}.yaml", agent) for agent in personas]
    for target, _ in files:
        check_writable(target, force)
    return folder


def _write_personas(folder: Path, personas: list[AgentConfig], source: str) -> None:
    from ..formats.openmaic_class import persona_yaml
    from ..store.paths import private_dir, write_atomic

    private_dir(folder)
    for agent in personas:
        write_atomic(folder / f"{agent.id}.yaml", persona_yaml(agent, source))
    typer.echo(f"maic: wrote {len(personas)} persona file(s) of the classroom's class in {one_line(str(folder))}; "
               f"play it with --agents-dir {one_line(str(folder))}", err=True)


MEDIA_OUT = {".mp4": "video", ".wav": "audio", ".ogg": "audio", ".mp3": "audio", ".vtt": "captions",
             ".srt": "captions"}


def export_command(
    lesson_file: Path = typer.Argument(..., metavar="LESSON", help="The lesson file (YAML)."),
    out: Path = typer.Option(..., "--out", "-o", help="deck.pptx (a PowerPoint deck), notes.md (Markdown notes), "
                             "lesson.html (a web player in one page: slides, the class's lines, the quiz graded in "
                             "the page; voiced with --voice), lesson.scorm.zip (the player as a SCORM 1.2 package "
                             "for an LMS), class.maic.zip (a classroom OpenMAIC imports), lesson.mp4 (a video: the "
                             "scripted lecture voiced over its slides), lesson.wav/.ogg/.mp3 (its voice track) or "
                             "lesson.vtt/.srt (its captions)."),
    force: bool = typer.Option(False, "--force", "-f", help="Overwrite --out if it exists."),
    audio: Path = typer.Option(None, "--audio", help="Also write the voice track (.wav, .ogg or .mp3) of the same "
                               "export."),
    captions: Path = typer.Option(None, "--captions", help="Also write its captions (.vtt or .srt)."),
    script: Path = typer.Option(None, "--script", help="Also write its narration script (.md)."),
    voice: str = typer.Option(None, "--voice", help="A voiced export's engine (and, with class.maic.zip, the "
                              "classroom's voices): " + VOICE_HELP),
    voice_api_base: str = typer.Option(None, "--voice-api-base", help="Base URL of an OpenAI-compatible speech "
                                       "server (with --voice openai-compatible)."),
    agents_dir: list[Path] = typer.Option(None, "--agents-dir", help="A folder of persona files (the class's "
                                          "voices in a voiced export). Repeatable."),
    mastery: int = typer.Option(80, "--mastery", min=0, max=100, help="With --out lesson.scorm.zip: the percent "
                                "of the quiz points that passes (the manifest's adlcp:masteryscore)."),
) -> None:
    """Write a lesson as a deck (script as speaker notes), Markdown notes, a web player (.html), a SCORM 1.2
    package (.scorm.zip), an OpenMAIC classroom (.maic.zip), a video, its voice track or captions."""
    from ..formats.pptx_write import FORMATS, export_lesson
    from ..store.lesson_writer import check_writable
    from ..store.lessons import load_lesson

    kind = MEDIA_OUT.get(out.suffix.lower())
    player = out.suffix.lower() in (".html", ".htm") or out.name.lower().endswith(".scorm.zip")
    if out.suffix.lower() not in (*FORMATS, ".markdown", ".zip", ".html", ".htm") and kind is None:
        raise InputError(f"{out}: export to a deck (.pptx), Markdown notes (.md), a web player (.html), a SCORM "
                         "package (.scorm.zip), an OpenMAIC classroom (.maic.zip), a video (.mp4), audio (.wav, "
                         ".ogg, .mp3) or captions (.vtt, .srt)")
    if kind is None and (audio or captions or script):
        raise InputError("--audio, --captions and --script go with a voiced export (--out lesson.mp4, .wav, .vtt …)")
    lesson = load_lesson(lesson_file)
    for path in (out, audio, captions, script):
        if path is not None:
            check_writable(path, force)
    if kind is not None:
        from ..media.export import Targets

        given: dict[str, Path | None] = {"audio": audio, "captions": captions, "script": script, "video": None}
        given[kind] = out
        _export_media(lesson, Targets(**given), voice, voice_api_base, list(agents_dir or []))
        return
    if player:
        from .player_export import export_player

        export_player(lesson, lesson_file, out, voice=voice, voice_api_base=voice_api_base,
                      agents_dir=list(agents_dir or []), mastery=mastery)
    elif out.suffix.lower() == ".zip":
        _export_classroom(lesson, out, voice, voice_api_base, list(agents_dir or []))
    else:
        export_lesson(lesson, out, lesson_file)
    typer.echo(f"maic: wrote {one_line(str(out))}: {len(lesson.scenes)} scenes", err=True)
    typer.echo(str(out))


def _export_classroom(lesson: Lesson, out: Path, voice: str | None, voice_api_base: str | None,
                      agents_dir: list[Path]) -> None:
    """The lesson as an OpenMAIC classroom; with ``--voice``, each line in its speaker's voice in it."""
    from ..formats.openmaic_voices import Voicing
    from ..formats.openmaic_write import export_classroom
    from ..store.lesson_class import class_agents
    from ..store.personas import load_registry

    agents = class_agents(lesson, load_registry(agents_dir))
    if voice is None:
        notes = export_classroom(lesson, out, agents)
    else:
        from ..lessons.lesson import DiscussionScene, SlideScene
        from ..media.ffmpeg import find_ffmpeg
        from ..media.speakers import voices_for
        from .media_export import export_engine, progress_bar, speakable

        find_ffmpeg()  # (the clips are mp3, as OpenMAIC's own exports hold them): said before any synthesis
        engine = export_engine(voice, voice_api_base)
        by = [step.by for scene in lesson.scenes if isinstance(scene, (SlideScene, DiscussionScene))
              for step in scene.script if step.by is not None]
        with progress_bar("export") as progress:
            voicing = Voicing(engine, voices_for(agents, engine, by), speakable(), progress)
            notes = export_classroom(lesson, out, agents, voicing)
    for note in notes:
        typer.echo(f"maic: note: {one_line(note)}", err=True)


def _export_media(lesson: Lesson, targets: Targets, voice: str | None, voice_api_base: str | None,
                  agents_dir: list[Path]) -> None:
    """The lesson as its scripts play it: voiced by its class, its slides shown."""
    from ..media.export import check_targets, export_media, speakers
    from ..media.script import from_lesson
    from ..media.speakers import voices_for
    from ..store.personas import DEFAULT_CLASS, load_registry
    from .media_export import export_engine, progress_bar, require_ffmpeg, require_video, say_written, speakable

    check_targets(targets)
    if targets.video is not None:
        require_video()
    require_ffmpeg(targets.audio)
    registry = load_registry(agents_dir)
    agents = registry.require(lesson.agents or [i for i in DEFAULT_CLASS if i in registry.agents])
    engine = export_engine(voice, voice_api_base)
    items = from_lesson(lesson, agents)
    with progress_bar("export") as progress:
        made = export_media(items, targets, engine=engine, voice_for=voices_for(agents, engine, speakers(items)),
                            speakable=speakable(), title=lesson.title, progress=progress)
    say_written(made.written, made.timeline.duration, made.usage.sentences, made.pictures)


def regen_command(
    lesson_file: Path = typer.Argument(..., metavar="LESSON", help="The lesson file (YAML)."),
    scene: str = typer.Option(..., "--scene", "-s", help="The id of the scene to write again (maic lesson check "
                              "lists them), or its number from 1."),
    instruction: str = typer.Option(None, "--instruction", "-i", help="What to change, e.g. \"use a cooking "
                                    "example\"."),
    model: str = typer.Option(None, "--model", "-m", help=_MODEL_HELP),
    api_base: str = typer.Option(None, "--api-base", help="Base URL of an OpenAI-compatible server."),
    out: Path = typer.Option(None, "--out", "-o", help="Where to write the result (default: LESSON-2.yaml beside "
                             "it; the old file is kept)."),
    force: bool = typer.Option(False, "--force", "-f", help="Replace the scene in LESSON itself (or overwrite --out)."),
    prompts: Path = typer.Option(None, "--prompts", help="A folder of prompt templates overriding the built-in ones."),
) -> None:
    """Write one scene of a lesson again with a model; every other scene stays byte for byte."""
    import asyncio

    from ..authoring.scenes import check_prompts, regenerate_scene
    from ..files import read_bounded
    from ..llm.port import LLMClient
    from ..store.lesson_splice import check_splice, splice_scene
    from ..store.lesson_writer import check_writable, free_name
    from ..store.lessons import MAX_LESSON_BYTES, load_lesson
    from ..store.paths import write_atomic
    from ..store.prompts import load_prompt_set
    from .lesson_progress import StepReporter, run_closing, usage_line

    lesson = load_lesson(lesson_file)
    ids = [s.id for s in lesson.scenes]
    if scene in ids:
        index = ids.index(scene)
    elif scene.isascii() and scene.isdigit() and 1 <= int(scene) <= len(ids):
        index = int(scene) - 1
    else:
        raise InputError(f"--scene: {one_line(scene)[:64]!r} is not a scene of {lesson_file} (its scenes: "
                         f"{', '.join(ids)})")
    if instruction is not None and not 1 <= len(instruction.strip()) <= 1000:
        raise InputError("--instruction: give it in 1 to 1000 characters")
    text = read_bounded(lesson_file, MAX_LESSON_BYTES, "lesson file").decode("utf-8")
    target = out if out is not None else (lesson_file if force else free_name(lesson_file))
    if target != lesson_file or out is not None:
        check_writable(target, force)
    prompt_set = load_prompt_set(prompts)
    chosen, brief, llm = _model_brief(lesson, model, api_base)
    assert isinstance(llm, LLMClient)
    check_prompts(prompt_set, brief)
    typer.echo(f"maic: writing scene {ids[index]} of {one_line(str(lesson_file))} again with {one_line(chosen)}",
               err=True)
    reporter = StepReporter()
    result = asyncio.run(run_closing(llm, reporter, regenerate_scene(
        lesson, index, brief, llm, instruction=" ".join((instruction or "").split()), prompts=prompt_set,
        progress=reporter)))
    new_text = splice_scene(text, index, result.lesson.scenes[index], lesson_file)
    check_splice(new_text, lesson, index, lesson_file)
    write_atomic(target, new_text)
    typer.echo(f"maic: wrote {one_line(str(target))}: scene {ids[index]} replaced, the others as they were; "
               f"usage: {usage_line(result.usage, result.calls)}", err=True)
    typer.echo(str(target))


def register(app: typer.Typer) -> None:
    """Add ``import``, ``export`` and ``regen`` to ``maic lesson``."""
    app.command("import")(friendly(import_command))
    app.command("export")(friendly(export_command))
    app.command("regen")(friendly(regen_command))
