"""Files from the track and the timeline: a wav (stdlib ``wave``), an ogg or mp3 and the mp4 (ffmpeg).

The track comes as blocks (:data:`Track`, media/voicing.py ``track_chunks``) and is written to its file block
by block: a long lesson's audio is never held whole in memory.

The video is made of few pictures, one per board shown and sentence said (:mod:`.frames`: the slide and the
speaker's band), fed to ffmpeg by the concat demuxer with
each picture's duration (not 25 rendered pictures a second), with the voice track and the captions as a subtitle
stream (``mov_text``).  Every file is written atomically (:mod:`.output`); every ffmpeg run is bounded in time.
"""

from __future__ import annotations

import tempfile
import wave
from collections.abc import Callable, Iterable
from pathlib import Path

from ..errors import InputError
from . import ffmpeg
from .captions import subrip
from .frames import Speaking, render
from .output import atomic_path
from .script import Board
from .timeline import Timeline
from .typeset import export_budget

AUDIO_FORMATS = {".wav": None, ".ogg": ["-c:a", "libvorbis", "-q:a", "4", "-f", "ogg"],
                 ".mp3": ["-c:a", "libmp3lame", "-q:a", "4", "-f", "mp3"]}
VIDEO_FORMATS = (".mp4",)
FPS = 10  # pictures a second in the file: the pictures change rarely, so this costs little and seeks well
Progress = Callable[[str, int, int], None]


Track = Callable[[], Iterable[bytes]]  # the track's PCM, a block at a time (each call: from the start)


def write_wav(path: Path, track: Track, rate: int) -> None:
    """A mono 16-bit WAV at ``path``, written block by block (the header's length is set when it closes)."""
    with wave.open(str(path), "wb") as handle:
        handle.setnchannels(1)
        handle.setsampwidth(2)
        handle.setframerate(rate)
        for block in track():
            handle.writeframesraw(block)


def encode_seconds(duration: float) -> float:
    """How long one ffmpeg run may take for ``duration`` seconds of output (generous; never endless)."""
    return 60.0 + 3.0 * duration


def write_audio(path: Path, track: Track, rate: int, duration: float) -> None:
    """The track as ``path``'s format: .wav streamed to the file, .ogg (Vorbis) and .mp3 through ffmpeg."""
    suffix = path.suffix.lower()
    if suffix not in AUDIO_FORMATS:
        raise InputError(f"{path}: audio is written as .wav, .ogg or .mp3, not {suffix or 'no suffix'}")
    codec = AUDIO_FORMATS[suffix]
    if codec is None:
        with atomic_path(path) as temp:
            write_wav(temp, track, rate)
        return
    with tempfile.TemporaryDirectory(prefix="maic-audio-") as scratch, atomic_path(path) as temp:
        source = Path(scratch) / "track.wav"
        write_wav(source, track, rate)
        ffmpeg.run(["-i", str(source), "-ac", "1", *codec, str(temp)],
                   seconds=encode_seconds(duration), what=str(path))


def _quote(path: Path) -> str:
    return "'" + str(path).replace("'", "'\\''") + "'"


def frames_of(timeline: Timeline) -> list[tuple[float, float, Board, Speaking | None]]:
    """What the video shows, in order: (start, end, the board, who speaks).  A sentence stays in the band from its
    start to the next sentence's (through the pause), and leaves it when the slide changes under it."""
    cuts = sorted({0.0, *(s.start for s in timeline.scenes), *(u.start for u in timeline.utterances)})
    cuts = [cut for cut in cuts if cut < timeline.duration] or [0.0]
    out: list[tuple[float, float, Board, Speaking | None]] = []
    scene = utterance = 0
    speaking: Speaking | None = None
    slide_of_line: object = None
    for number, start in enumerate(cuts):
        end = cuts[number + 1] if number + 1 < len(cuts) else max(timeline.duration, start + 0.001)
        while scene + 1 < len(timeline.scenes) and timeline.scenes[scene + 1].start <= start:
            scene += 1
        board = timeline.scenes[scene].board if timeline.scenes else Board()
        while utterance < len(timeline.utterances) and timeline.utterances[utterance].start <= start:
            said = timeline.utterances[utterance]
            speaking = Speaking(name=said.name, text=said.text, color=said.color, speaker=said.speaker)
            slide_of_line = (board.slide.id if board.slide else None, board.number)
            utterance += 1
        if speaking is not None and (board.slide.id if board.slide else None, board.number) != slide_of_line:
            speaking = None  # a new slide: the last sentence was said over the one before
        out.append((start, end, board, speaking))
    return out


def write_video(path: Path, timeline: Timeline, track: Track, rate: int, *, heading: str = "",
                progress: Progress | None = None) -> int:
    """The mp4: one picture per board shown and sentence said, the voice track, the captions as a subtitle stream.
    Returns how many distinct pictures were drawn."""
    if path.suffix.lower() not in VIDEO_FORMATS:
        raise InputError(f"{path}: video is written as .mp4, not {path.suffix or 'no suffix'}")
    shots = frames_of(timeline)
    drawn: dict[tuple[str, Speaking | None], Path] = {}
    with tempfile.TemporaryDirectory(prefix="maic-video-") as scratch, atomic_path(path) as temp, export_budget():
        folder = Path(scratch)
        listing = ["ffconcat version 1.0"]
        last: Path | None = None
        for number, (start, end, board, speaking) in enumerate(shots):
            key = (board.key(), speaking)
            if key not in drawn:
                drawn[key] = folder / f"frame{len(drawn):05d}.png"
                drawn[key].write_bytes(render(board, heading=heading, speaking=speaking))
            last = drawn[key]
            listing += [f"file {_quote(last)}", f"duration {max(0.001, end - start):.3f}"]
            if progress is not None:
                progress("pictures", number + 1, len(shots))
        if last is not None:
            listing.append(f"file {_quote(last)}")  # the demuxer's last duration needs it
        (folder / "frames.txt").write_text("\n".join(listing) + "\n", encoding="utf-8")
        write_wav(folder / "track.wav", track, rate)
        (folder / "captions.srt").write_text(subrip(timeline), encoding="utf-8")
        if progress is not None:
            progress("encoding", 0, 1)
        ffmpeg.run(["-f", "concat", "-safe", "0", "-i", str(folder / "frames.txt"),
                    "-i", str(folder / "track.wav"), "-i", str(folder / "captions.srt"),
                    "-map", "0:v", "-map", "1:a", "-map", "2:s",
                    "-c:v", "libx264", "-preset", "veryfast", "-tune", "stillimage", "-pix_fmt", "yuv420p",
                    "-vf", f"fps={FPS}", "-c:a", "aac", "-b:a", "96k", "-c:s", "mov_text",
                    "-metadata:s:s:0", "language=eng", "-t", f"{timeline.duration:.3f}",
                    "-movflags", "+faststart", "-f", "mp4", str(temp)],
                   seconds=encode_seconds(timeline.duration), what=str(path))
        if progress is not None:
            progress("encoding", 1, 1)
    return len(drawn)
