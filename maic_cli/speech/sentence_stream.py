"""Sentences out of streamed text: what a voice can start saying before the message ends.

An agent's speech arrives as ``text_delta`` pieces cut anywhere (mid-word, mid-number, between a full stop and
the space after it).  :class:`SentenceStream` is fed the pieces and hands back each sentence once it is
complete, so its synthesis can start while the rest still streams.  A sentence ends

* at ``.``, ``!``, ``?`` or ``…`` (and any closing quotes or brackets after them) followed by white space, unless
  the word is a common abbreviation (``e.g.``, ``Dr.``) or a single letter (an initial);
* at a line break (a list item, a paragraph);
* at :data:`LONGEST` characters with no end in sight: cut at the last space before it;
* never inside a code fence (a listing goes whole to the normaliser, which leaves it unread).

What counts as complete depends on the text alone, never on where the pieces were cut: any split of a text
into deltas gives the same sentences (``tests/test_sentence_stream.py`` checks this with hypothesis).  The
remainder is handed out by :meth:`SentenceStream.flush` at the message's end.
"""

from __future__ import annotations

import re

LONGEST = 320  # characters: a sentence longer than this is cut (a voice should not wait for a paragraph)
_FENCE = re.compile(r"```|~~~")
_END = re.compile(r"[.!?…]+[\"'”’»)\]]*(?=\s)|\n")
_ABBREVIATIONS = frozenset({
    "e.g.", "i.e.", "etc.", "vs.", "cf.", "mr.", "mrs.", "ms.", "dr.", "prof.", "st.", "no.", "fig.", "approx.",
})


_CLAUSE = re.compile(r"[,;:](?=\s)|\s[—–-](?=\s)")
SHORTEST_CLAUSE = 24  # characters: a clause said on its own must be worth the pause after it


def _is_abbreviation(text: str, end: int) -> bool:
    """The ``.`` ending at ``end`` closes an abbreviation or an initial, not a sentence."""
    start = end
    while start > 0 and not text[start - 1].isspace():
        start -= 1
    word = text[start:end].lower().lstrip("(\"'“‘")
    if word in _ABBREVIATIONS:
        return True
    return len(word) == 2 and word[0].isalpha() and word[1] == "."  # "J. Smith", "A. thaliana"


def _fences(text: str) -> list[tuple[int, int | None]]:
    """Where code fences (```` ``` ```` or ``~~~``) open and close in ``text``: (start, end after the close or None)."""
    spans: list[tuple[int, int | None]] = []
    at = 0
    while (match := _FENCE.search(text, at)) is not None:
        close = text.find(match.group(), match.end())
        if close < 0:
            spans.append((match.start(), None))
            break
        spans.append((match.start(), close + 3))
        at = close + 3
    return spans


def _inside(spans: list[tuple[int, int | None]], position: int) -> tuple[int, int | None] | None:
    return next((span for span in spans if span[0] < position and (span[1] is None or position < span[1])), None)


def _first_end(window: str, spans: list[tuple[int, int | None]]) -> int | None:
    """Where the first sentence of ``window`` ends (an index into it), or ``None``; never inside a code fence."""
    for match in _END.finditer(window):
        if _inside(spans, match.start()):
            continue
        if match.group() == "\n":
            return match.start()
        if match.group() == "." and _is_abbreviation(window, match.end()):
            continue
        return match.end()
    return None


class SentenceStream:
    """Feed it the deltas of one message; it returns the sentences they complete."""

    def __init__(self) -> None:
        self._buffer = ""

    @property
    def pending(self) -> str:
        """What has been fed and not yet handed out as a sentence."""
        return self._buffer

    def feed(self, delta: str) -> list[str]:
        self._buffer += delta
        sentences: list[str] = []
        while True:
            self._buffer = self._buffer.lstrip()  # white space between sentences belongs to none of them
            # Only the first LONGEST + 1 characters decide (the +1: white space right after a full stop at
            # LONGEST still ends a sentence), so a long text cuts where it would have cut had it come whole.
            window = self._buffer[:LONGEST + 1]
            spans = _fences(self._buffer)
            end = _first_end(window, spans)
            if end is None:  # (an end found always lies inside the window)
                if len(self._buffer) <= LONGEST:
                    break
                fence = _inside(spans, LONGEST)
                if fence is not None:  # a listing is never cut: it goes whole, once it closes
                    if fence[1] is None:
                        break
                    end = fence[1]
                else:
                    end = window.rfind(" ", 0, LONGEST)
                    span = _inside(spans, end) if end > 0 else None
                    end = LONGEST if end <= 0 else span[1] if span is not None and span[1] is not None else end
            sentence, self._buffer = self._buffer[:end].strip(), self._buffer[end:]
            if sentence:
                sentences.append(sentence)
        return sentences

    def clause(self, shortest: int = SHORTEST_CLAUSE) -> str | None:
        """The pending text up to its first clause break (``,`` ``;`` ``:`` or a dash, then a space) at least
        ``shortest`` characters in, handed out now (``None``: no such break yet).  For a voice that is silent: the
        first clause can be heard while the rest of its sentence still streams.  Nothing is lost or said twice:
        the rest of the sentence comes out of :meth:`feed` or :meth:`flush` as usual."""
        text = self._buffer.lstrip()
        spans = _fences(text)
        for match in _CLAUSE.finditer(text, 0, LONGEST):
            if match.start() >= shortest and not _inside(spans, match.start()):
                cut = match.end() if match.group() in ",;:" else match.start()
                piece, self._buffer = text[:cut].strip(), text[cut:]
                return piece or None
        return None

    def flush(self) -> str | None:
        """The message ended: the rest as one last sentence (``None`` if nothing is left)."""
        rest, self._buffer = self._buffer.strip(), ""
        return rest or None


def split_sentences(text: str) -> list[str]:
    """A whole text's sentences, as :class:`SentenceStream` gives them."""
    stream = SentenceStream()
    sentences = stream.feed(text)
    rest = stream.flush()
    return sentences + ([rest] if rest else [])
