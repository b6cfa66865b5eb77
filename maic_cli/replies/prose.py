"""Speech that reads as prose: whole sentences, each said once, no stray marks (pure, no maic imports).

What the class says on a small model is put together from the lesson's own pieces (a bullet, a table
row, a script line) and from what the gate let through of the model's reply; this module makes each
piece a sentence and the whole an answer that reads well:

* :func:`as_prose` — one piece as a sentence: a leading list word (``Second,``, ``Also,``) and stray
  marks (``;`` ``,`` a dash) off, a capital first, an end mark last; a piece cut short (``lea…``)
  is cut back to its last whole sentence, or is nothing;
* :func:`compose` — pieces as one answer: each sentence once (a sentence another one already holds,
  word for word, is left out), joined by spaces;
* :func:`tidy` — a gated reply's sentences made prose, the ones said before in the message left out;
* :func:`is_question` — whether the learner asks or states;
* :func:`problems` — what does not read well in ``text`` (the benchmark's "reads well" column and the
  tests' check): a title glued in front, a sentence said twice, a stray mark, a list word, no capital
  first or no end mark last, a word cut short.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

LIST_WORDS = ("first", "second", "third", "fourth", "fifth", "next", "then", "finally", "lastly", "also",
              "and", "firstly", "secondly", "thirdly", "plus", "besides")
_LEAD = re.compile(r"^(?:[\s;:,.\-–—•*…!?]+|(?:\(?\d{1,2}[.)]\s+))+")
_LOOSE = re.compile(r"\s+([;:,])")  # "sun ; sun": a mark with a space before it
_AFTER_END = re.compile(r"([.!?])[;:,]+")  # "tasks.; The output": a small model's stray mark
_BEFORE_END = re.compile(r"[\s;:,\-–—]+(?=[.!?]+$)")  # "tasks;." at the end
# A list's place word at a sentence's start ("Second, …"): cut off a bullet, it reads as a list read out.
_ORDINAL = re.compile(r"^(?:second|third|fourth|fifth|secondly|thirdly)\s*,", re.IGNORECASE)
_LIST_WORD = re.compile(r"^(?:" + "|".join(LIST_WORDS) + r")\s*,\s*", re.IGNORECASE)
_TRAIL = re.compile(r"[\s;:,\-–—]+$")
_END = ".!?"
_SPLIT = re.compile(r"(?<=[.!?])[\"')\]”’]*\s+")
_CUT = re.compile(r"\w(?:…|\.\.\.)")  # a word cut short
_WORD = re.compile(r"[^\W_]+", re.UNICODE)


def sentences(text: str) -> list[str]:
    """``text`` cut into sentences (after ``. ! ?`` and closing quotes, before whitespace)."""
    return [s.strip() for s in _SPLIT.split(" ".join(text.split())) if s.strip()]


def _norm(text: str) -> str:
    return " ".join(_WORD.findall(text.casefold()))


_CODE_START = re.compile(r"^[a-z_][\w]*(?:[(._=\[]|\s*=)")  # "range(1, 5) gives …": code keeps its case


def as_prose(piece: str, titles: Sequence[str] = ()) -> str:
    """``piece`` as a sentence (see the module); ``""`` when nothing whole is left of it; ``titles``: slide titles
    that may stand glued in front of it ("The tilted axis: …"), taken off."""
    parts = sentences(piece)
    if len(parts) > 1:
        return " ".join(made for part in parts if (made := as_prose(part, titles)))
    text = " ".join(piece.split())
    if _CUT.search(text):  # cut short: nothing whole is left of this sentence
        return ""
    for title in titles:
        if title.strip() and text.casefold().startswith(title.strip().casefold() + ":"):
            text = text[len(title.strip()) + 1:]
            if len(text.split()) < 3:  # "Your first for loop: Theo.": no sentence is left
                return ""
    text = _AFTER_END.sub(r"\1", _LOOSE.sub(r"\1", text.rstrip("…").rstrip()))
    for _ in range(3):
        before = text
        text = _LIST_WORD.sub("", _LEAD.sub("", text))
        if text == before:
            break
    text = _TRAIL.sub("", _BEFORE_END.sub("", text))
    if not _WORD.search(text):
        return ""
    if not _CODE_START.match(text):
        text = text[0].upper() + text[1:]
    if text[-1] not in _END and not (text[-1] in "\"')”’" and text[-2:-1] in tuple(_END)):
        text += "."
    return text


def _held(sentence: str, said: Iterable[str]) -> bool:
    """Whether ``sentence`` is already said, word for word, in one of ``said`` (or is one of them)."""
    words = _norm(sentence)
    return not words or any(words == other or f" {words} " in f" {other} " for other in said)


def compose(pieces: Iterable[str], said: Iterable[str] = (), titles: Sequence[str] = ()) -> str:
    """``pieces`` as one answer: each made prose, each sentence once; ``said``: text the answer follows,
    whose sentences are not said again; ``titles``: slide titles taken off a sentence's front."""
    kept: list[str] = []
    seen = [_norm(s) for text in said for s in sentences(text)]
    for piece in pieces:
        for sentence in sentences(as_prose(piece, titles)):
            if sentence and not _held(sentence, seen):
                kept.append(sentence)
                seen.append(_norm(sentence))
    # A sentence a later one holds whole says nothing new: "Summer days are longer." before "Summer days
    # are longer, so …".
    return " ".join(s for n, s in enumerate(kept) if not _held(s, [_norm(t) for t in kept[n + 1:]]))


def tidy(text: str, before: str = "", titles: Sequence[str] = ()) -> str:
    """A reply's ``text`` (one or more sentences, as it streams) as prose, without the sentences ``before``
    (the message so far) holds and without a slide title glued in front; its leading space kept."""
    lead = " " if text[:1].isspace() else ""
    made = compose([text], [before] if before else [], titles)
    return lead + made if made else ""


QUESTION_WORDS = frozenset("""
    what why how when where who whom whose which is are was were am do does did can could would will should
    shall may might must isn't aren't wasn't weren't don't doesn't didn't can't couldn't wouldn't won't
    shouldn't haven't hasn't have has had if so explain tell
""".split())


def is_question(text: str) -> bool:
    """Whether the learner's ``text`` asks (a question mark, or a question word first) rather than states."""
    text = text.strip()
    if "?" in text:
        return True
    words = _WORD.findall(text.casefold().replace("’", "'"))
    first = re.match(r"[\w']+", text.casefold().replace("’", "'"))
    return bool(words) and (first.group(0) if first else words[0]) in QUESTION_WORDS


def problems(text: str, titles: Iterable[str] = ()) -> list[str]:
    """What does not read well in ``text`` (empty: it reads well); ``titles``: the lesson's slide titles."""
    found: list[str] = []
    text = " ".join(text.split())
    if not text:
        return found
    said = sentences(text)
    for title in titles:
        if title.strip() and re.search(r"(^|[.!?]\s)" + re.escape(title.strip()) + r"\s*:", text):
            found.append(f"a title glued in front: {title!r}")
    seen: list[str] = []
    for sentence in said:
        words = _norm(sentence)
        if words and words in seen:
            found.append(f"said twice: {sentence!r}")
        seen.append(words)
        if _ORDINAL.match(sentence):
            found.append(f"a list word: {sentence[:30]!r}")
        if not sentence[0].isupper() and not sentence[0].isdigit() and sentence[0] not in "\"'“‘(" \
                and not _CODE_START.match(sentence):
            found.append(f"no capital first: {sentence[:30]!r}")
    if re.search(r"(^|\s)[;,:]|[;,]\s*[.!?]?$|\.\s*;", text):
        found.append("a stray mark")
    if _CUT.search(text):
        found.append("a word cut short")
    if text[-1] not in _END and not (text[-1] in "\"')”’" and text[-2:-1] in tuple(_END)):
        found.append(f"no end mark: {text[-30:]!r}")
    return found
