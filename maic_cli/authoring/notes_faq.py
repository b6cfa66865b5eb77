"""The questions a teacher expects, in notes: ``Q: … / A: …`` paragraphs in and out (pure).

In a Markdown slide's paragraphs, a deck's speaker notes or a discussion section, a line
``Q: question`` (one or several, one phrasing each) followed by a line ``A: answer`` (or
``A (agent_id): answer``, said by that agent) is an expected question of the scene
(``faq:``); the answer runs on over the lines that follow it up to a blank line or the next
``Q:``.  :func:`split_faq` takes them out of the notes (the rest is the script as before);
:func:`faq_notes` writes them back the same way, so ``maic lesson export`` then ``import`` keeps
them.  A ``Q:`` with no ``A:`` is left in the notes; an entry beyond the lesson's limits
(:data:`~maic_cli.lessons.lesson.MAX_FAQ`, a phrasing of more than 300 characters, an answer of
more than 1,200) is left out and counted.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pydantic import ValidationError

from ..lessons.lesson import MAX_FAQ, MAX_PHRASINGS, ExpectedQuestion

_Q = re.compile(r"^\s*Q\s*:\s*(.*)$")
_A = re.compile(r"^\s*A\s*(?:\(\s*([a-z0-9][a-z0-9_-]{0,39})\s*\))?\s*:\s*(.*)$")


def _past_blank(lines: list[str], index: int) -> int:
    """``index``, or past the blank lines there when a ``Q:`` or ``A:`` line follows them (Markdown paragraphs)."""
    ahead = index
    while ahead < len(lines) and not lines[ahead].strip():
        ahead += 1
    if ahead > index and ahead < len(lines) and (_Q.match(lines[ahead]) or _A.match(lines[ahead])):
        return ahead
    return index


def split_faq(notes: str) -> tuple[str, list[ExpectedQuestion], int]:
    """``notes`` without their ``Q:``/``A:`` entries, the entries, and how many were left out (see the module)."""
    kept: list[str] = []
    found: list[ExpectedQuestion] = []
    dropped = 0
    lines = notes.splitlines()
    index = 0
    while index < len(lines):
        if _Q.match(lines[index]) is None:
            kept.append(lines[index])
            index += 1
            continue
        start, asked = index, []
        while index < len(lines) and (q := _Q.match(lines[index])) is not None:
            asked.append(" ".join(q.group(1).split()))
            index = _past_blank(lines, index + 1)
        answer = _A.match(lines[index]) if index < len(lines) else None
        if answer is None:  # a Q: with no A: stays in the notes
            kept += lines[start:index]
            continue
        said = [answer.group(2)]
        index += 1
        while index < len(lines) and lines[index].strip() and not _Q.match(lines[index]):
            said.append(lines[index])
            index += 1
        phrasings = [q for q in asked if q]
        try:
            if len(found) >= MAX_FAQ or not phrasings:
                raise ValueError("beyond the limits")
            found.append(ExpectedQuestion(q=phrasings[0] if len(phrasings) == 1 else phrasings[:MAX_PHRASINGS],
                                          a=" ".join(" ".join(said).split()), by=answer.group(1)))
        except (ValidationError, ValueError):
            dropped += 1
    return "\n".join(kept).strip("\n"), found, dropped


def faq_notes(faq: Sequence[ExpectedQuestion]) -> str:
    """``faq`` as notes: each entry its ``Q:`` lines and its ``A:`` line, a blank line between entries."""
    blocks = []
    for entry in faq:
        said = " ".join(entry.a.split())
        blocks.append("\n".join([*(f"Q: {' '.join(q.split())}" for q in entry.phrasings),
                                 f"A ({entry.by}): {said}" if entry.by else f"A: {said}"]))
    return "\n\n".join(blocks)
