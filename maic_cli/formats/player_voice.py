"""The web player's voice track: every line of the lesson in its speaker's voice, one Ogg Opus file.

Each line (:func:`.player.lines`) is synthesized by the media room's voicing (:func:`maic_cli.media.voicing.
synthesize_all`: each speaker in the voice the class has in the chat and in a video, the speech cache reused), the
clips are laid one after another with a short pause, and ffmpeg (the one ``maic_cli.media.ffmpeg`` finds, run with
a time limit) encodes the track as Opus in Ogg at a speech bitrate.  The page seeks to a line's span and plays to
its end; the line itself is the caption (the speaker band and the speaker's card show it as it is said).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

from ..media import ffmpeg
from ..media.encode import encode_seconds, write_wav
from ..media.script import Said
from ..media.voicing import Clips, SpeechUsage, clip_audio, synthesize_all
from ..speech.port import SpeechEngine, Voice
from .player import Line, Voiced

GAP_SECONDS = 0.3  # silence after each line
BITRATE = "32k"  # Opus at 32 kbit/s: clear speech, ~4 kB a second
Progress = Callable[[str, int, int], None]


def voice_lines(said: list[Line], engine: SpeechEngine, voice_for: Callable[[str], Voice],
                speakable: Callable[[str], str], *, progress: Progress | None = None,
                usage: SpeechUsage | None = None) -> Voiced:
    """``said`` read aloud: the encoded track and each line's span in it."""
    items = [Said(speaker=line.speaker, name=line.speaker, text=line.text, turn=number)
             for number, line in enumerate(said)]
    spans: list[tuple[float, float]] = []
    with Clips() as spool, tempfile.TemporaryDirectory(prefix="maic-player-") as scratch:
        clips = synthesize_all(list(items), engine, voice_for, speakable, spool, progress=progress, usage=usage)
        rate = spool.rate
        gap = b"\x00\x00" * round(GAP_SECONDS * rate)
        samples = [0]

        def track() -> Iterator[bytes]:  # the lines and their gaps, one clip in memory at a time
            spans.clear()
            samples[0] = 0
            for clip in clips:
                pcm = clip_audio(spool, clip).pcm
                start = samples[0] / rate
                samples[0] += len(pcm) // 2
                spans.append((start, samples[0] / rate))
                samples[0] += len(gap) // 2
                yield pcm
                yield gap

        source, target = Path(scratch) / "track.wav", Path(scratch) / "track.ogg"
        write_wav(source, track, rate)
        seconds = samples[0] / rate
        ffmpeg.run(["-i", str(source), "-ac", "1", "-c:a", "libopus", "-b:a", BITRATE, "-application", "voip",
                    "-f", "ogg", str(target)], seconds=encode_seconds(seconds), what="the player's voice track")
        return Voiced(audio=target.read_bytes(), mime="audio/ogg", spans=spans)
