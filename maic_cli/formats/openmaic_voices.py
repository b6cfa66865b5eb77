"""The class's voices in an OpenMAIC classroom (``maic lesson export L --out class.maic.zip --voice ENGINE``).

Every ``speech`` action of the classroom is said in its speaker's voice (the teacher's for a lecture line, a
classmate's for a line said ``by:`` them; the voices cast as every voiced export casts them,
``media/speakers.py``), with what is spoken made from what is shown as the other exports make it (formulas read
out).  Each clip goes in the zip as OpenMAIC's own export writes audio: ``audio/<action id>.mp3`` (encoded by
ffmpeg), listed in the manifest's ``mediaIndex`` as ``{type: "audio", format: "mp3", duration, voice}``, and named by
the action's ``audioRef``.  OpenMAIC's importer stores each listed file and points the action's ``audioId`` at it,
so its player plays the class in these voices instead of its own.  The same line in the same voice is one file.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..media import ffmpeg
from ..media.encode import encode_seconds, write_wav
from ..media.script import Item, Said
from ..media.voicing import Clips, Progress, SpeechUsage, clip_audio, synthesize_all
from ..speech.port import SpeechEngine, Voice


@dataclass
class Voicing:
    """How the classroom is voiced: the engine, each speaker's voice, what is spoken of a shown line."""

    engine: SpeechEngine
    voice_for: Callable[[str], Voice]
    speakable: Callable[[str], str]
    progress: Progress | None = None


def mp3_bytes(pcm: bytes, rate: int) -> bytes:
    """Mono 16-bit PCM at ``rate`` as an mp3 (ffmpeg, bounded in time)."""
    with tempfile.TemporaryDirectory(prefix="maic-classroom-") as scratch:
        source, target = Path(scratch) / "line.wav", Path(scratch) / "line.mp3"
        write_wav(source, lambda: [pcm], rate)
        ffmpeg.run(["-i", str(source), "-ac", "1", "-c:a", "libmp3lame", "-q:a", "5", "-f", "mp3", str(target)],
                   seconds=encode_seconds(len(pcm) / 2 / max(rate, 1)), what="a line of the classroom")
        return target.read_bytes()


def voice_speech(speeches: list[tuple[dict[str, Any], str]], names: dict[str, str],
                 voicing: Voicing) -> tuple[dict[str, bytes], dict[str, dict[str, Any]], SpeechUsage]:
    """Say each ``(speech action, speaker id)``; set each action's ``audioRef``.  The zip's audio files by path,
    their ``mediaIndex`` entries, and what was asked of the engine."""
    usage = SpeechUsage(engine=voicing.engine.name)
    items: list[Item] = [Said(speaker, names.get(speaker, speaker), str(action.get("text", "")), number)
             for number, (action, speaker) in enumerate(speeches)]
    files: dict[str, bytes] = {}
    index: dict[str, dict[str, Any]] = {}
    made: dict[tuple[str, Voice], str] = {}
    with Clips() as spool:  # the clips wait on disk, one in memory at a time
        clips = synthesize_all(items, voicing.engine, voicing.voice_for, voicing.speakable, spool,
                               progress=voicing.progress, usage=usage)
        for (action, speaker), clip in zip(speeches, clips, strict=True):
            if not clip.size:
                continue  # nothing to speak (a line of symbols only): OpenMAIC times it as it reads
            voice = voicing.voice_for(speaker)
            key = (voicing.speakable(str(action.get("text", ""))).strip(), voice)
            path = made.get(key)
            if path is None:
                path = made[key] = f"audio/{action['id']}.mp3"
                files[path] = mp3_bytes(clip_audio(spool, clip).pcm, spool.rate)
                index[path] = {"type": "audio", "format": "mp3", "duration": round(clip.seconds, 3),
                               "voice": f"{voicing.engine.name}:{voice.id}", "size": len(files[path])}
            action["audioRef"] = path
    return files, index, usage
