"""``maic replay FILE``: watch a recorded class again, export it, or check it still runs the same.

Never imports litellm: a transcript replays from its own events.  ``maic replay --help``
imports only Typer: the transcript store, the engine and the views are imported when a
transcript is actually read (the playback is :mod:`maic_cli.chat.replay`).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from ..errors import InputError
from ..untrusted import clean
from .errors import friendly
from .help_option import VOICE_HELP
from .xapi_send import LRS_HELP, is_xapi_file

if TYPE_CHECKING:
    from ..store.transcript import Transcript


def _export_media(transcript: Transcript, audio: Path | None, captions: Path | None, script: Path | None,
                  video: Path | None, voice: str | None, voice_api_base: str | None) -> None:
    from ..chat.replay_media import export_class_media
    from ..media.export import Targets, check_targets
    from .media_export import export_engine, progress_bar, require_ffmpeg, require_video, say_written, speakable

    targets = Targets(audio=audio, captions=captions, script=script, video=video)
    check_targets(targets)  # a bad path or format costs no synthesis
    if video is not None:
        require_video()
    require_ffmpeg(audio)
    engine = export_engine(voice, voice_api_base)
    with progress_bar("export") as progress:
        made = export_class_media(transcript, targets, engine, speakable(), progress)
    say_written(made.written, made.timeline.duration, made.usage.sentences, made.pictures)


@friendly
def replay(
    file: Path = typer.Argument(..., help="A transcript (.jsonl) written by maic chat or maic run."),
    speed: float = typer.Option(1.0, "--speed", min=0.01, help="Playback speed: 2 is twice as fast."),
    instant: bool = typer.Option(False, "--instant", help="No pauses: show the whole class at once."),
    step: bool = typer.Option(False, "--step", help="One message per key press (q to stop)."),
    export_to: Path = typer.Option(None, "--export", help="Write the class to FILE.md or FILE.html instead "
                                   "(a lesson's slides, pointers, quiz answers and score included), or its "
                                   "learning records to FILE.xapi.jsonl (xAPI statements)."),
    lrs: str = typer.Option(None, "--lrs", help=LRS_HELP),
    check: bool = typer.Option(False, "--check", help="Re-run the orchestration on the recorded replies and "
                               "report the first event that differs (exit 1)."),
    plain: bool = typer.Option(False, "--plain", help="Line-oriented output even on a terminal."),
    audio: Path = typer.Option(None, "--audio", help="Write the class as one voice track: FILE.wav, .ogg or .mp3 "
                               "(each agent in its own voice)."),
    captions: Path = typer.Option(None, "--captions", help="Write captions that follow that track: FILE.vtt or "
                                  ".srt (speaker names in the cues)."),
    script: Path = typer.Option(None, "--script", help="Write the narration script: FILE.md (speaker, time, "
                                "text)."),
    video: Path = typer.Option(None, "--video", help="Write a video: FILE.mp4 (the slides and whiteboard, "
                               "spotlight and laser, the voice track, captions as subtitles)."),
    voice: str = typer.Option(None, "--voice", help=VOICE_HELP),
    voice_api_base: str = typer.Option(None, "--voice-api-base", help="Base URL of an OpenAI-compatible speech "
                                       "server (with --voice openai-compatible)."),
) -> None:
    """Replay a recorded class in the chat layout, export it, or check it."""
    import asyncio  # not at the top: ~30 ms that --help does not need

    from ..store.transcript import read_transcript

    transcript = read_transcript(file)
    for warning in transcript.warnings:
        typer.echo(f"maic: warning: {clean(warning)}", err=True)
    if audio or captions or script or video:
        if check or export_to is not None or lrs is not None:
            raise InputError("--audio, --captions, --script and --video export the class; give them without "
                             "--check, --export or --lrs")
        _export_media(transcript, audio, captions, script, video, voice, voice_api_base)
        return
    if check:
        from ..evaluation.replay_check import check_transcript

        result = asyncio.run(check_transcript(transcript))
        if not result.ok:
            typer.echo(f"{file}: {result.difference}")
            raise typer.Exit(1)
        typer.echo(f"{file}: the same {result.compared} events")
        return
    records = export_to if export_to is not None and is_xapi_file(export_to) else None
    if records is not None or lrs is not None:
        from .xapi_send import all_statements, write_and_send

        write_and_send(all_statements([transcript]), to_file=records, lrs=lrs)
        if records is not None or export_to is None:
            return
    from ..chat.replay import Player, export

    if export_to is not None:
        export(transcript, export_to)
        typer.echo(f"Exported to {export_to}")
        return
    from rich.console import Console

    interactive = sys.stdout.isatty() and not plain
    console = Console() if interactive else None
    player = Player(transcript, speed=None if instant or not interactive else speed, step=step and interactive,
                    console=console)
    asyncio.run(player.play())
