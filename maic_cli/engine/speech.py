"""Speech hygiene for small models: whole sentences only, and no copy of an earlier reply.

Pure functions and one small stateful filter, used by the agent turn when compact
prompts are on (a 135M model ran into its token cap mid-sentence, and once answered
a new question with its previous answer word for word):

* :class:`SentenceGate` ends a streamed reply at its last full sentence: it releases text
  up to the last finished sentence and holds back the unfinished one until the reply
  ends, so a view never shows words that are later taken back;
* :func:`drop_stray_quotes` removes an unpaired ``"`` opening (or closing) the reply;
* :func:`drop_copied_sentences` leaves out a sentence copied from an earlier reply;
* :func:`repeats_earlier` tells whether a reply (or its opening) copies an earlier one.
"""

from __future__ import annotations

import difflib
import re

# A sentence ends with . ! ? or … (then maybe closing quotes/brackets, and a stray ; : or , that
# small models add: "tasks.; The output…"); inside a stream it counts only once the next
# character is whitespace ("3.5", "e.g." stay whole).
_END = r"[.!?…]['\")\]”’]*[;:,]?"
_BOUNDARY = re.compile(_END + r"(?=\s)")
_FINAL = re.compile(_END + r"\s*$")
REPEAT_RATIO = 0.8  # difflib ratio: a copy with a few words changed still counts
MIN_REPEAT_CHARS = 40  # shorter openings ("Good question, Sam.") are common, not copies
MAX_COMPARED_CHARS = 400  # difflib is quadratic: compare bounded texts only


def ends_sentence(text: str) -> bool:
    return bool(_FINAL.search(text))


def _last_boundary(text: str, start: int = 0) -> int:
    """The end of the last finished sentence in ``text[start:]`` (0: none)."""
    last = 0
    for match in _BOUNDARY.finditer(text, start):
        last = match.end()
    return last


class SentenceGate:
    """Releases streamed speech a whole sentence at a time.

    ``feed`` returns what may be shown now; ``finish`` returns the rest at the end of the
    reply: the held tail if it ends a sentence (or if nothing was shown at all: a fragment
    beats silence), else nothing — the unfinished sentence is dropped.
    """

    LOOKBACK = 64  # a sentence end split across deltas: "." then " " (closing quotes in between)

    def __init__(self) -> None:
        self.held = ""
        self._released_any = False  # some speech was shown
        self._released_quotes = 0  # '"' in what was shown (an unpaired closing one is dropped at the end)

    def feed(self, delta: str) -> str:
        start = max(0, len(self.held) - self.LOOKBACK)  # the held text had no boundary: scan only the new end
        self.held += delta
        cut = _last_boundary(self.held, start)
        if not cut:
            return ""
        out, self.held = self.held[:cut], self.held[cut:]
        return self._release(out)

    def _release(self, out: str) -> str:
        if not self._released_any:
            out = drop_stray_quotes(out)
        self._released_any = self._released_any or bool(out.strip())
        self._released_quotes += out.count('"')
        return out

    def flush_sentence(self) -> str:
        """The held text, if it ends a sentence (an item ends here: nothing more will join it)."""
        if not ends_sentence(self.held):
            return ""
        out, self.held = self.held, ""
        return self._release(out)

    def finish(self) -> str:
        tail, self.held = self.held, ""
        if not ends_sentence(tail) and self._released_any:
            return ""
        out = tail.rstrip()
        if out.endswith('"') and (self._released_quotes + out.count('"')) % 2 == 1:
            out = out[:-1]  # an unpaired closing quote
        return self._release(out)


def split_sentences(text: str) -> list[str]:
    """``text`` in finished sentences (each with the whitespace before it) and any unfinished rest."""
    pieces, start = [], 0
    for match in _BOUNDARY.finditer(text):
        pieces.append(text[start:match.end()])
        start = match.end()
    return [*pieces, text[start:]] if text[start:] else pieces


def drop_copied_sentences(text: str, earlier: list[str]) -> tuple[str, int]:
    """``text`` without the sentences that copy one of ``earlier``'s replies, and how many went."""
    kept = [s for s in split_sentences(text) if not repeats_earlier(s, earlier)]
    return "".join(kept), len(split_sentences(text)) - len(kept)


def drop_stray_quotes(text: str) -> str:
    """``text`` without an unpaired ``"`` at its very start or end (a small model's habit)."""
    stripped = text.strip()
    if stripped.count('"') % 2 == 1:
        if stripped.startswith('"'):
            return text.replace('"', "", 1).lstrip()
        if stripped.endswith('"'):
            return text[:text.rindex('"')] + text[text.rindex('"') + 1:]
    return text


def _norm(text: str) -> str:
    return " ".join(text[:MAX_COMPARED_CHARS * 2].lower().split())[:MAX_COMPARED_CHARS]


def _sentences(text: str) -> list[str]:
    return [s for s in (p.strip() for p in _BOUNDARY.split(text + " ")) if s]


def repeats_earlier(text: str, earlier: list[str], ratio: float = REPEAT_RATIO) -> bool:
    """Whether ``text`` (a whole reply or its opening) copies one of ``earlier``'s replies:
    their opening of the same length, or one of their sentences, is at least ``ratio`` alike."""
    norm = _norm(text)
    if len(norm) < MIN_REPEAT_CHARS:
        return False
    opening = _sentences(text)[:1]  # an opening sentence copied whole, the rest new, is a copy too
    first = _norm(opening[0]) if opening else ""
    for other in earlier:
        other_norm = _norm(other)
        sentences = [_norm(s) for s in _sentences(other)]
        pairs = [(norm, c) for c in (other_norm[:len(norm) + 10], *sentences)]
        if len(first) >= MIN_REPEAT_CHARS and first != norm:
            pairs += [(first, c) for c in sentences]
        if any(_alike(a, b, ratio) for a, b in pairs):
            return True
    return False


def _alike(a: str, b: str, ratio: float) -> bool:
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    return matcher.real_quick_ratio() >= ratio and matcher.quick_ratio() >= ratio and matcher.ratio() >= ratio
