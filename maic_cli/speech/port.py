"""The speech port: one small Protocol with one call, text to audio.

The class never imports this room.  The chat app, the replay exports and the batch hand an engine what to
say, sentence by sentence, and get :class:`Audio` back.  Engines are named once at the edge by a
:class:`~maic_cli.speech.spec.VoiceSpec` (``--voice local | espeak | openai/tts-1 | … | off``), like a model
by its ``ModelSpec``.  Every engine failure surfaces as :class:`SpeechError`: one line, the class goes on in
text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from ..errors import MaicError
from ..untrusted import clean, redact


class SpeechError(MaicError):
    """A synthesis failed.  ``str()`` is one line: engine, what, what to do (cleaned and redacted here)."""

    def __init__(self, engine: str, detail: str, advice: str = "") -> None:
        self.engine = engine
        self.detail = redact(" ".join(clean(detail).split()))[:300]
        super().__init__(f"{engine}: {self.detail}" + (f" ({advice})" if advice else ""))


@dataclass(frozen=True)
class Voice:
    """One concrete voice of one engine: what an agent sounds like.

    ``id`` is the engine's own voice name (``alloy``, ``en-us``, ``en_US-joe-medium``); ``speed`` is a factor of
    the voice's own pace (1.0); ``pitch`` is in semitones from the voice's own (0.0).
    """

    engine: str
    id: str
    speed: float = 1.0
    pitch: float = 0.0


@dataclass(frozen=True)
class Audio:
    """Mono 16-bit little-endian PCM at ``rate`` samples a second."""

    pcm: bytes
    rate: int

    @property
    def seconds(self) -> float:
        return len(self.pcm) / 2 / self.rate if self.rate else 0.0


@runtime_checkable
class SpeechEngine(Protocol):
    """An engine: its name, its voices, and one synthesis call (blocking; callers run it off the event loop)."""

    name: str

    def voices(self) -> list[str]:
        """The voice ids this engine accepts (may be a short list of known ones for a provider)."""
        ...

    def synthesize(self, text: str, voice: Voice) -> Audio:
        """``text`` (one sentence, already normalised for speech) in ``voice``; raises :class:`SpeechError`."""
        ...
