"""Every sentence of an export synthesized in its speaker's voice, and the one track they make.

:func:`synthesize_all` asks the engine for each :class:`~.script.Said` sentence (the same sentence in the same voice
once), in the speaker's voice (``voice_for``: the speech room's per-agent assignment), and counts what it asked
for (:class:`SpeechUsage`: sentences, characters, seconds).  Each clip is spooled to a temporary file as it
arrives (:class:`Clips`), and the sentences together may last at most :data:`MAX_TRACK_SECONDS` whatever rates
a provider answers at (refused in one line past it).  :func:`track_chunks` lays the clips where the timeline
puts them, silence between, at one rate (the most common, at most :data:`MAX_TRACK_RATE`), as blocks of mono
16-bit PCM written straight to a file: memory holds one clip, never the track.
"""

from __future__ import annotations

import tempfile
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass

from ..errors import InputError
from ..speech.port import Audio, SpeechEngine, SpeechError, Voice
from .script import Item, Said
from .timeline import Timeline

Progress = Callable[[str, int, int], None]  # (what, done, total)
MAX_CLIP_SECONDS = 120.0  # one sentence's audio longer than this is cut (an engine that never stops)
MAX_TRACK_SECONDS = 4 * 3600.0  # all the sentences of one export: past this, refused in one line
MAX_TRACK_RATE = 48_000  # a track's rate: speech needs no more (a provider's 192 kHz clip is brought down)
SILENCE_BLOCK = 1 << 19  # samples of silence written at once
RESAMPLE_BLOCK = 1 << 18  # samples resampled at once


@dataclass
class SpeechUsage:
    """What one export (or one batch run) asked the speech engine for."""

    engine: str = ""
    model: str = ""
    sentences: int = 0  # synthesis calls made
    characters: int = 0  # characters sent
    seconds: float = 0.0  # seconds of audio received

    def add(self, other: SpeechUsage) -> None:
        self.engine = self.engine or other.engine
        self.model = self.model or other.model
        self.sentences += other.sentences
        self.characters += other.characters
        self.seconds += other.seconds


class CountingEngine:
    """An engine that counts what it synthesizes into ``usage`` (put under a cache, it counts only what the cache
    did not have: what a provider is paid for).  ``lock``: one sentence at a time, for an engine shared by
    threads (a batch voices several runs at once)."""

    def __init__(self, engine: SpeechEngine, usage: SpeechUsage, lock: AbstractContextManager[object] | None = None):
        self.engine = engine
        self.usage = usage
        self.name = engine.name
        self.accepts_any_voice = bool(getattr(engine, "accepts_any_voice", False))
        self.shifts_pitch = bool(getattr(engine, "shifts_pitch", False))
        self._lock = lock or nullcontext()

    def voices(self) -> list[str]:
        return self.engine.voices()

    def synthesize(self, text: str, voice: Voice) -> Audio:
        with self._lock:
            audio = self.engine.synthesize(text, voice)
        self.usage.sentences += 1
        self.usage.characters += len(text)
        self.usage.seconds += audio.seconds if isinstance(audio, Audio) else 0.0
        return audio


def resample(audio: Audio, rate: int) -> Audio:
    """``audio`` at ``rate`` samples a second (linear interpolation: speech, not music), a block at a time: a
    two-minute clip at 192 kHz costs a few MB beyond itself, not hundreds."""
    if audio.rate == rate or not audio.pcm:
        return Audio(audio.pcm, rate) if not audio.pcm else audio
    import numpy as np

    samples = np.frombuffer(audio.pcm[: len(audio.pcm) // 2 * 2], dtype="<i2")
    count = max(1, round(len(samples) * rate / audio.rate))
    step = (len(samples) - 1) / (count - 1) if count > 1 else 0.0
    out = np.empty(count, dtype="<i2")
    for first in range(0, count, RESAMPLE_BLOCK):
        at = np.arange(first, min(count, first + RESAMPLE_BLOCK), dtype=np.float64) * step
        low = np.minimum(at.astype(np.int64), len(samples) - 1)
        high = np.minimum(low + 1, len(samples) - 1)
        part = at - low
        mixed = samples[low] * (1.0 - part) + samples[high] * part
        out[first:first + len(at)] = np.clip(np.rint(mixed), -32768, 32767)
    return Audio(out.tobytes(), rate)


@dataclass(frozen=True)
class Clip:
    """One sentence's audio, kept in a :class:`Clips` spool: where, how many bytes, at what rate."""

    offset: int
    size: int
    rate: int

    @property
    def seconds(self) -> float:
        return self.size / 2 / self.rate if self.rate else 0.0


class Clips:
    """The clips of an export, spooled to an unnamed temporary file as they are synthesized: memory holds one
    clip at a time, never the track.  A context manager (the file goes when it closes)."""

    def __init__(self) -> None:
        self._file = tempfile.TemporaryFile(prefix="maic-clips-")
        self._end = 0
        self.rate = 0  # the track's rate, once synthesize_all has chosen it

    def add(self, audio: Audio) -> Clip:
        self._file.seek(self._end)
        self._file.write(audio.pcm)
        clip = Clip(self._end, len(audio.pcm), audio.rate)
        self._end += len(audio.pcm)
        return clip

    def read(self, clip: Clip) -> bytes:
        self._file.seek(clip.offset)
        return self._file.read(clip.size)

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> Clips:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def synthesize_all(items: list[Item], engine: SpeechEngine, voice_for: Callable[[str], Voice],
                   speakable: Callable[[str], str], clips: Clips, *, progress: Progress | None = None,
                   usage: SpeechUsage | None = None) -> list[Clip]:
    """One clip per :class:`Said` item, in order, spooled into ``clips``; ``clips.rate`` is set to the track's
    rate (the clips' most common, at most :data:`MAX_TRACK_RATE`).

    ``voice_for`` gives a speaker id's voice; ``speakable`` turns a shown sentence into what is spoken (numbers,
    symbols, formulas read out).  A sentence with nothing to speak is silence.  Raises :class:`SpeechError`, and
    :class:`~maic_cli.errors.InputError` (one line) once the clips would last more than :data:`MAX_TRACK_SECONDS`.
    """
    said = [item for item in items if isinstance(item, Said)]
    done: dict[tuple[str, Voice], Clip] = {}
    out: list[Clip] = []
    rates: Counter[int] = Counter()
    heard = 0.0
    for number, item in enumerate(said):
        voice = voice_for(item.speaker)
        text = speakable(item.text).strip()
        key = (text, voice)
        if not text:
            clip = Clip(0, 0, 0)
        elif key in done:
            clip = done[key]
        else:
            audio = engine.synthesize(text, voice)
            if not isinstance(audio, Audio) or audio.rate <= 0 or audio.rate > 192_000:
                raise SpeechError(engine.name, f"the engine gave no usable audio for {text[:40]!r}")
            limit = int(MAX_CLIP_SECONDS * audio.rate) * 2
            clip = clips.add(Audio(audio.pcm[:limit], audio.rate))
            del audio
            done[key] = clip
            if usage is not None:
                usage.sentences += 1
                usage.characters += len(text)
                usage.seconds += clip.seconds
        if clip.size:
            rates[clip.rate] += 1
            heard += clip.seconds
            if heard > MAX_TRACK_SECONDS:
                raise InputError(f"the voiced track would last more than {MAX_TRACK_SECONDS / 3600:g} hours "
                                 f"(at sentence {number + 1} of {len(said)}): export a shorter class or lesson")
        out.append(clip)
        if progress is not None:
            progress("voices", number + 1, len(said))
    clips.rate = min(MAX_TRACK_RATE, rates.most_common(1)[0][0]) if rates else 22050
    return out


def clip_audio(spool: Clips, clip: Clip) -> Audio:
    """One clip read back from its spool at the track's rate (what a page or a classroom stores per line)."""
    return resample(Audio(spool.read(clip), clip.rate), spool.rate) if clip.size else Audio(b"", spool.rate)


def track_chunks(timeline: Timeline, clips: list[Clip], spool: Clips) -> Iterator[bytes]:
    """The whole track as it is written, a block at a time: each clip (at the track's rate) from its utterance's
    start, silence elsewhere, ``timeline.duration`` long.  Holds one clip at a time."""
    rate = spool.rate
    total = round(timeline.duration * rate)  # samples
    at = 0
    for utterance, clip in sorted(zip(timeline.utterances, clips, strict=True), key=lambda pair: pair[0].start):
        start = min(total, round(utterance.start * rate))
        yield from _silence(start - at)
        at = max(at, start)
        if not clip.size or at >= total:
            continue
        pcm = resample(Audio(spool.read(clip), clip.rate), rate).pcm
        pcm = pcm[(at - start) * 2: (total - start) * 2]  # what an earlier clip already covers; past the end
        if pcm:
            yield pcm
            at += len(pcm) // 2
    yield from _silence(total - at)


def _silence(samples: int) -> Iterator[bytes]:
    block = bytes(2 * SILENCE_BLOCK)
    while samples > 0:
        count = min(samples, SILENCE_BLOCK)
        yield block if count == SILENCE_BLOCK else bytes(2 * count)
        samples -= count


def clip_seconds(clips: list[Clip]) -> list[float]:
    return [clip.seconds for clip in clips]
