"""``maic lesson export L --out lesson.html | lesson.scorm.zip``: the web player, and the SCORM package of it.

The lesson is cleaned as every export cleans it (``formats.pptx_write.clean_lesson``); its class is the
lesson's ``agents:`` (else maic's default class, ``--agents-dir`` adding persona folders).  With ``--voice`` each
line is voiced in its speaker's voice (the export's engine, ``media_export``) and the track is embedded; ffmpeg is
checked before anything is synthesized.  The file is written atomically.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..lessons.lesson import Lesson


def export_player(lesson: Lesson, source: Path, out: Path, *, voice: str | None, voice_api_base: str | None,
                  agents_dir: list[Path], mastery: int) -> None:
    import typer

    from ..authoring.fixes import slug
    from ..formats.player import Voiced, lines, player_html
    from ..formats.pptx_write import clean_lesson
    from ..formats.scorm import package_bytes
    from ..store.paths import write_atomic
    from ..store.personas import DEFAULT_CLASS, load_registry

    lesson = clean_lesson(lesson, source)
    registry = load_registry(agents_dir)
    agents = registry.require(lesson.agents or [i for i in DEFAULT_CLASS if i in registry.agents])
    voiced: Voiced | None = None
    if voice is not None:
        from ..formats.player_voice import voice_lines
        from ..media.ffmpeg import find_ffmpeg
        from ..media.speakers import voices_for
        from ..media.voicing import SpeechUsage
        from .media_export import export_engine, progress_bar, speakable

        find_ffmpeg()
        engine = export_engine(voice, voice_api_base)
        said = lines(lesson, agents)
        usage = SpeechUsage()
        with progress_bar("voices") as progress:
            voiced = voice_lines(said, engine, voices_for(agents, engine, [line.speaker for line in said]),
                                 speakable(), progress=progress, usage=usage)
        typer.echo(f"maic: voiced {len(said)} lines ({usage.sentences} synthesized, "
                   f"{voiced.spans[-1][1] if voiced.spans else 0:.1f} s, {len(voiced.audio) / 1e6:.1f} MB)",
                   err=True)
    scorm = out.name.lower().endswith(".scorm.zip")
    page = player_html(lesson, agents, voiced=voiced, scorm=scorm, mastery=mastery)
    if scorm:
        identifier = "maic-" + slug(lesson.title, "lesson", limit=60)
        write_atomic(out, package_bytes(page, title=lesson.title, identifier=identifier, mastery=mastery))
    else:
        write_atomic(out, page)
