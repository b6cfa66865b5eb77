"""One export of a class or a lesson: its audio, captions, narration script and video, from one timeline.

:func:`export_media` checks every target first (its format, that it can be written), so a bad path costs no
synthesis; then voices every sentence (:mod:`.voicing`), lays out the one :class:`~.timeline.Timeline` and writes
what was asked for from it.  The replay (``maic replay --audio/--captions/--script/--video``), ``maic lesson export
--out lesson.mp4`` and ``maic run --voice`` all call it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InputError
from ..speech.port import SpeechEngine, Voice
from .captions import narration, subrip, webvtt
from .encode import AUDIO_FORMATS, VIDEO_FORMATS, write_audio, write_video
from .output import check_target, write_text
from .script import Item, Said
from .timeline import Timeline, lay_out
from .voicing import MAX_TRACK_SECONDS, Clip, Clips, Progress, SpeechUsage, synthesize_all, track_chunks

CAPTION_FORMATS = (".vtt", ".srt")
SCRIPT_FORMATS = (".md", ".markdown")


@dataclass(frozen=True)
class Targets:
    """Where each export goes (None: not asked for)."""

    audio: Path | None = None
    captions: Path | None = None
    script: Path | None = None
    video: Path | None = None

    def given(self) -> list[Path]:
        return [p for p in (self.audio, self.captions, self.script, self.video) if p is not None]


@dataclass
class Made:
    timeline: Timeline
    usage: SpeechUsage
    written: list[Path] = field(default_factory=list)
    pictures: int = 0  # distinct pictures in the video


def _suffix_problem(path: Path, formats: tuple[str, ...] | list[str], what: str) -> None:
    if path.suffix.lower() not in formats:
        raise InputError(f"{path}: {what} is written as {' or '.join(formats)}, not {path.suffix or 'no suffix'}")


def check_targets(targets: Targets) -> None:
    """Every target has a known format and can be written (one line if not), before anything is synthesized."""
    if targets.audio is not None:
        _suffix_problem(targets.audio, list(AUDIO_FORMATS), "audio")
    if targets.captions is not None:
        _suffix_problem(targets.captions, CAPTION_FORMATS, "captions")
    if targets.script is not None:
        _suffix_problem(targets.script, SCRIPT_FORMATS, "the narration script")
    if targets.video is not None:
        _suffix_problem(targets.video, VIDEO_FORMATS, "video")
    paths = [p.resolve() for p in targets.given()]
    if len(set(paths)) != len(paths):
        raise InputError("two exports name the same file; give each its own")
    for path in targets.given():
        check_target(path)


def export_media(items: list[Item], targets: Targets, *, engine: SpeechEngine, voice_for: Callable[[str], Voice],
                 speakable: Callable[[str], str], title: str, progress: Progress | None = None) -> Made:
    """Voice ``items`` and write each target; returns the timeline and what synthesis was asked for."""
    check_targets(targets)
    usage = SpeechUsage(engine=engine.name)
    with Clips() as spool:
        clips = synthesize_all(items, engine, voice_for, speakable, spool, progress=progress, usage=usage)
        items, clips = _heard(items, clips)
        timeline = lay_out(items, [clip.seconds for clip in clips])
        if timeline.duration > MAX_TRACK_SECONDS:
            raise InputError(f"the voiced track would last {timeline.duration / 3600:.1f} hours, more than "
                             f"{MAX_TRACK_SECONDS / 3600:g}: export a shorter class or lesson")
        return _write(targets, Made(timeline=timeline, usage=usage), clips, spool, title, progress)


def _write(targets: Targets, made: Made, clips: list[Clip], spool: Clips, title: str,
           progress: Progress | None) -> Made:
    timeline, rate = made.timeline, spool.rate

    def track() -> Iterator[bytes]:
        return track_chunks(timeline, clips, spool)

    if targets.audio is not None:
        write_audio(targets.audio, track, rate, timeline.duration)
        made.written.append(targets.audio)
    if targets.captions is not None:
        vtt = targets.captions.suffix.lower() == ".vtt"
        write_text(targets.captions, webvtt(timeline) if vtt else subrip(timeline))
        made.written.append(targets.captions)
    if targets.script is not None:
        write_text(targets.script, narration(timeline, title))
        made.written.append(targets.script)
    if targets.video is not None:
        made.pictures = write_video(targets.video, timeline, track, rate, heading=title, progress=progress)
        made.written.append(targets.video)
    return made


def _heard(items: list[Item], clips: list[Clip]) -> tuple[list[Item], list[Clip]]:
    """The items without the sentences that have nothing to hear (an emoji, a code fence): no caption is shown
    over silence."""
    kept_items: list[Item] = []
    kept_clips: list[Clip] = []
    said = iter(clips)
    for item in items:
        if isinstance(item, Said):
            clip = next(said)
            if not clip.size:
                continue
            kept_clips.append(clip)
        kept_items.append(item)
    return kept_items, kept_clips


def speakers(items: list[Item]) -> dict[str, str]:
    """Every speaker id of ``items`` and the name it speaks under (first seen)."""
    out: dict[str, str] = {}
    for item in items:
        if isinstance(item, Said):
            out.setdefault(item.speaker, item.name)
    return out
