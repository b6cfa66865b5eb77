"""Every sentence of an export synthesized in its speaker's voice, and the one track they make.

:func:`synthesize_all` asks the engine for each :class:`~.script.Said` sentence (the same sentence in the same voice
once), in the speaker's voice (``voice_for``: the speech room's per-agent assignment), and counts what it asked
for (:class:`SpeechUsage`: sentences, characters, seconds).  Clips of different rates are brought to one rate.
:func:`render_track` lays the clips where the timeline puts them, silence between, into one mono 16-bit PCM track.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass

from ..speech.port import Audio, SpeechEngine, SpeechError, Voice
from .script import Item, Said
from .timeline import Timeline

Progress = Callable[[str, int, int], None]  # (what, done, total)
MAX_CLIP_SECONDS = 120.0  # one sentence's audio longer than this is cut (an engine that never stops)


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
    """``audio`` at ``rate`` samples a second (linear interpolation: speech, not music)."""
    if audio.rate == rate or not audio.pcm:
        return Audio(audio.pcm, rate) if not audio.pcm else audio
    import numpy as np

    samples = np.frombuffer(audio.pcm[: len(audio.pcm) // 2 * 2], dtype="<i2").astype(np.float32)
    count = max(1, round(len(samples) * rate / audio.rate))
    at = np.linspace(0, len(samples) - 1, count, dtype=np.float64)
    out = np.interp(at, np.arange(len(samples)), samples)
    return Audio(np.clip(out, -32768, 32767).astype("<i2").tobytes(), rate)


def synthesize_all(items: list[Item], engine: SpeechEngine, voice_for: Callable[[str], Voice],
                   speakable: Callable[[str], str], *, progress: Progress | None = None,
                   usage: SpeechUsage | None = None) -> tuple[list[Audio], int]:
    """One clip per :class:`Said` item, in order, all at one rate; and that rate.

    ``voice_for`` gives a speaker id's voice; ``speakable`` turns a shown sentence into what is spoken (numbers,
    symbols, formulas read out).  A sentence with nothing to speak is silence.  Raises :class:`SpeechError`.
    """
    said = [item for item in items if isinstance(item, Said)]
    done: dict[tuple[str, Voice], Audio] = {}
    clips: list[Audio] = []
    for number, item in enumerate(said):
        voice = voice_for(item.speaker)
        text = speakable(item.text).strip()
        key = (text, voice)
        if not text:
            clip = Audio(b"", 0)
        elif key in done:
            clip = done[key]
        else:
            clip = engine.synthesize(text, voice)
            if not isinstance(clip, Audio) or clip.rate <= 0 or clip.rate > 192_000:
                raise SpeechError(engine.name, f"the engine gave no usable audio for {text[:40]!r}")
            limit = int(MAX_CLIP_SECONDS * clip.rate) * 2
            clip = Audio(clip.pcm[:limit], clip.rate)
            done[key] = clip
            if usage is not None:
                usage.sentences += 1
                usage.characters += len(text)
                usage.seconds += clip.seconds
        clips.append(clip)
        if progress is not None:
            progress("voices", number + 1, len(said))
    rates = [clip.rate for clip in clips if clip.pcm]
    rate = max(set(rates), key=rates.count) if rates else 22050
    return [resample(clip, rate) if clip.pcm else Audio(b"", rate) for clip in clips], rate


def render_track(timeline: Timeline, clips: list[Audio], rate: int) -> bytes:
    """The whole track: each clip from its utterance's start, silence elsewhere, ``timeline.duration`` long."""
    total = round(timeline.duration * rate)
    track = bytearray(total * 2)
    for utterance, clip in zip(timeline.utterances, clips, strict=True):
        start = round(utterance.start * rate) * 2
        pcm = clip.pcm[: max(0, len(track) - start) // 2 * 2]
        track[start:start + len(pcm)] = pcm
    return bytes(track)


def clip_seconds(clips: list[Audio]) -> list[float]:
    return [clip.seconds for clip in clips]
