"""Saying a text: normalised for speech, cut into pieces an engine says quickly, synthesised piece by piece.

:func:`pieces` is what a player hands an engine: the text through :func:`~maic_cli.speech.normalize.for_speech`,
cut at sentence ends, and a long sentence again at its commas, semicolons and colons, so that the first
piece is short (:data:`FIRST_WORDS`) and the listener hears the class within a fraction of a second;
later pieces are longer (:data:`MAX_WORDS`), which sounds more natural.  :func:`say` synthesises them
in turn, one :class:`~maic_cli.speech.port.Audio` each, and :func:`say_all` joins them (with a short
pause between sentences) for a file.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from .normalize import for_speech
from .port import Audio, SpeechEngine, Voice

FIRST_WORDS = 8  # the first piece: said within a fraction of a second
MAX_WORDS = 28  # a later piece is cut at a comma past this many words
PAUSE_SECONDS = 0.25  # between sentences in a joined file
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=\S)")
_CLAUSE = re.compile(r"(?<=[,;:])\s+")


def pieces(text: str) -> list[str]:
    """``text`` as speakable pieces: sentences, a long one (and the first) cut at its clauses."""
    spoken = for_speech(text)
    out: list[str] = []
    for sentence in _SENTENCE.split(spoken):
        limit = FIRST_WORDS if not out else MAX_WORDS
        current: list[str] = []
        for clause in _CLAUSE.split(sentence):
            words = len(clause.split())
            if current and len(" ".join(current).split()) + words > limit:
                out.append(" ".join(current))
                current, limit = [], MAX_WORDS
            current.append(clause)
        if current:
            out.append(" ".join(current))
    return [p for p in out if any(ch.isalnum() for ch in p)]


def say(engine: SpeechEngine, text: str, voice: Voice) -> Iterator[Audio]:
    """Each piece of ``text`` in ``voice``, as soon as it is synthesised (raises SpeechError)."""
    for piece in pieces(text):
        yield engine.synthesize(piece, voice)


def say_all(engine: SpeechEngine, text: str, voice: Voice) -> Audio | None:
    """All of ``text`` as one :class:`Audio` (``None``: nothing to say)."""
    parts = list(say(engine, text, voice))
    if not parts:
        return None
    rate = parts[0].rate
    pause = b"\x00\x00" * int(rate * PAUSE_SECONDS)
    joined = pause.join(part.pcm if part.rate == rate else _resampled(part, rate) for part in parts)
    return Audio(joined, rate)


def _resampled(audio: Audio, rate: int) -> bytes:
    from .audio import change_rate

    return change_rate(audio.pcm, audio.rate / rate)
