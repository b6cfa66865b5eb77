"""What the export commands share: the speech engine of an export, a progress bar, the lines that say what was
written (``maic replay --audio/--captions/--script/--video``, ``maic lesson export --out lesson.mp4``).

An export speaks in ``--voice`` (else ``MAIC_VOICE`` or config.yaml's ``voice:``, else the offline voice): a class
that is silent in the chat is still voiced when it is exported.  A video also needs Pillow and an ffmpeg (the
``video`` extra); each is one line naming what to install, before anything is synthesized.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from ..errors import InputError
from ..untrusted import one_line
from .extras import require

Progress = Callable[[str, int, int], None]

if TYPE_CHECKING:
    from ..speech.port import SpeechEngine
    from ..speech.spec import VoiceSpec


def export_spec(voice: str | None, api_base: str | None) -> VoiceSpec:
    """The voice an export speaks in: ``--voice``, else the configured one, else the offline voice (``off`` is
    refused: an export needs a voice); refused in one line if it cannot speak here."""
    from ..speech.factory import check_ready
    from ..speech.spec import resolve
    from ..store.config import load_settings

    settings = load_settings()
    setting = settings.voice if settings.voice and settings.voice.lower() not in ("off", "none") else None
    spec = resolve(voice, setting, api_base=api_base or settings.voice_api_base)
    if not spec.enabled:
        if voice:
            raise InputError(f"--voice {one_line(voice)[:40]}: an audio or video export needs a voice "
                             "(local, espeak or a provider's)")
        spec = resolve("local", None)
    check_ready(spec)
    return spec


def export_engine(voice: str | None, api_base: str | None) -> SpeechEngine:
    """The engine of :func:`export_spec`, its sentences kept in the speech cache (a second export is quick)."""
    from ..speech.factory import open_engine
    from ..store.paths import speech_cache_dir

    engine = open_engine(export_spec(voice, api_base), speech_cache_dir())
    assert engine is not None  # off was replaced above
    return engine


def speakable() -> Callable[[str], str]:
    """What turns a shown sentence into what is spoken (speech/normalize.py: formulas as words, no markup)."""
    from ..speech.normalize import for_speech

    return for_speech


def require_video() -> None:
    """Pillow draws the pictures; ffmpeg encodes (checked before any synthesis)."""
    require("PIL", "video", "video exports")
    from ..media.ffmpeg import find_ffmpeg

    find_ffmpeg()


def require_ffmpeg(path: Path | None) -> None:
    if path is not None and path.suffix.lower() in (".ogg", ".mp3"):
        from ..media.ffmpeg import find_ffmpeg

        find_ffmpeg()


@contextmanager
def progress_bar(title: str) -> Iterator[Progress | None]:
    """A progress bar on a terminal's stderr (None elsewhere: nothing is drawn into a pipe)."""
    if not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

    bar = Progress(TextColumn(f"{title}: {{task.description}}"), BarColumn(), MofNCompleteColumn(),
                   TimeElapsedColumn(), console=Console(stderr=True), transient=True)
    tasks: dict[str, TaskID] = {}

    def update(what: str, done: int, total: int) -> None:
        if what not in tasks:
            tasks[what] = bar.add_task(what, total=total)
        bar.update(tasks[what], completed=done, total=total)

    with bar:
        yield update


def say_written(written: list[Path], seconds: float, sentences: int, pictures: int) -> None:
    parts = [f"{len(written)} file{'s' if len(written) != 1 else ''}", f"{seconds:.1f} s",
             f"{sentences} sentence{'s' if sentences != 1 else ''} synthesized"]
    if pictures:
        parts.append(f"{pictures} picture{'s' if pictures != 1 else ''}")
    typer.echo(f"maic: exported {', '.join(parts)}", err=True)
    for path in written:
        typer.echo(str(path))
