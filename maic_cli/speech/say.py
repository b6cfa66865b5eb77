"""Saying a text: normalised for speech, cut into pieces an engine says quickly, synthesised piece by piece.

:func:`pieces` is what a player hands an engine: the text through :func:`~maic_cli.speech.normalize.for_speech`,
cut at sentence ends, and a long sentence again at its commas, semicolons and colons (a clause without
any, every :data:`MAX_WORDS` words), so that the first
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

FIRST_WORDS = 5  # the first piece: said within a fraction of a second
MIN_FIRST_WORDS = 3
MAX_WORDS = 28  # a later piece is cut at a comma past this many words
# Where a long first clause is cut when it has no comma early: before one of these words, a natural breath.
_BREAKS = frozenset("and but or so because which that when where while if then to of in on at with for from "
                    "about into is are was were".split())
PAUSE_SECONDS = 0.25  # between sentences in a joined file
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=\S)")
_CLAUSE = re.compile(r"(?<=[,;:])\s+")


def pieces(text: str) -> list[str]:
    """``text`` as speakable pieces: sentences, a long one cut at its clauses, and the first piece short."""
    spoken = for_speech(text)
    out: list[str] = []
    for sentence in _SENTENCE.split(spoken):
        current: list[str] = []
        for clause in _short_clauses(sentence):
            words = len(clause.split())
            if current and len(" ".join(current).split()) + words > MAX_WORDS:
                out.append(" ".join(current))
                current = []
            current.append(clause)
        if current:
            out.append(" ".join(current))
    out = [p for p in out if any(ch.isalnum() for ch in p)]
    if out:
        out[:1] = _first_cut(out[0])
    return out


def _short_clauses(sentence: str) -> Iterator[str]:
    """The sentence's clauses, one without a comma cut every :data:`MAX_WORDS` words (an engine's memory grows
    with what it is given at once)."""
    for clause in _CLAUSE.split(sentence):
        words = clause.split()
        for start in range(0, max(1, len(words)), MAX_WORDS):
            yield " ".join(words[start:start + MAX_WORDS])


def _first_cut(piece: str) -> list[str]:
    """The first piece split so that its head is at most :data:`FIRST_WORDS` words: at its first comma, else
    before a conjunction or preposition, else after :data:`FIRST_WORDS` words."""
    words = piece.split()
    if len(words) <= FIRST_WORDS + 2:
        return [piece]
    cut = next((i + 1 for i, w in enumerate(words[:FIRST_WORDS]) if i + 1 >= MIN_FIRST_WORDS and w[-1] in ",;:"),
               None)
    if cut is None:
        cut = next((i for i in range(FIRST_WORDS, MIN_FIRST_WORDS - 1, -1) if words[i].lower() in _BREAKS),
                   FIRST_WORDS)
    return [" ".join(words[:cut]), " ".join(words[cut:])]


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
