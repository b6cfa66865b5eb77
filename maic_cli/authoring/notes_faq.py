"""The questions a teacher expects, and a discussion's closing lines, as lines of a teacher's notes.

A slide's or a discussion's ``faq:`` (lessons/lesson.py: ``ExpectedQuestion``) is written in notes as
``Q: …`` lines, one a phrasing, each group followed by its answer ``A: …`` — or ``A (Name): …`` when a
classmate gives it (``by``; the name as the notes name a speaker, ``notes_script.speaker_names``)::

    [faq]
    Q: Are longer days the reason summer is warmer?
    Q: Is it just because the days are longer in summer?
    A: Partly. Longer days do give more hours of heating, …
    Q: What are the two reasons summer is warmer?
    A (Priya): Steeper light, and more hours of it.
    [close]
    Theo: So the distance was never the answer.
    Well reasoned, everyone. Now let's check what you remember.

``maic lesson export`` writes them so, after the script (the ``[faq]`` line and, in a discussion, a
``[close]`` line before its closing lines, one a step as in marked notes).  ``maic lesson import``
reads ``Q:``/``A:`` lines wherever they are — a teacher's own notes need no ``[faq]`` line — and an
answer runs on to the end of its paragraph (the next blank line, ``Q:``/``A:`` line or marker).  A
``Q:`` with no answer, or an ``A:`` with no question, stays a line of the notes; a line that starts
with ``\\`` is never one (how the export writes a script line that would read as one).

Pure; bounded by the lesson's own limits (40 expected questions a scene, 8 phrasings of 300
characters, answers of 1,200, 20 closing lines): what is beyond them is left out, an over-long text
cut with ``…``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from ..lessons.lesson import MAX_FAQ, MAX_PHRASINGS, ExpectedQuestion, ScriptStep
from .notes_script import QA_LINE, Speakers, line_step, step_line

FAQ_MARK = "[faq]"
CLOSE_MARK = "[close]"
MAX_Q = 300  # = ExpectedQuestion.q's limit, a phrasing
MAX_A = 1200  # = ExpectedQuestion.a's limit
MAX_CLOSE = 20  # = DiscussionScene.close's limit
_FAQ = re.compile(r"^\s*\[\s*faq\s*\]\s*$", re.IGNORECASE)
_CLOSE = re.compile(r"^\s*\[\s*close\s*\]\s*$", re.IGNORECASE)
_BY = re.compile(r"^[a-z0-9][a-z0-9_-]{0,39}$")


def _flat(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "…"


def faq_lines(faq: Iterable[ExpectedQuestion], labels: Mapping[str, str] | None = None) -> list[str]:
    """``faq`` as notes lines (after a ``[faq]`` line) that :class:`FaqReader` reads back as the same entries
    (``labels``: how each agent id is written, by default the id itself)."""
    lines: list[str] = []
    for entry in faq:
        lines += [f"Q: {' '.join(phrasing.split())}" for phrasing in entry.phrasings]
        who = f" ({(labels or {}).get(entry.by, entry.by)})" if entry.by else ""
        lines.append(f"A{who}: {' '.join(entry.a.split())}")
    return [FAQ_MARK, *lines] if lines else []


def close_lines(close: Iterable[ScriptStep], labels: Mapping[str, str] | None = None,
                speakers: Speakers | None = None) -> list[str]:
    """A discussion's closing lines as notes lines (after a ``[close]`` line), one a step."""
    lines = [step_line(step, labels, speakers) for step in close]
    return [CLOSE_MARK, *lines] if lines else []


@dataclass
class FaqReader:
    """Reads notes line by line: :meth:`feed` gives back the lines that stay the notes' (none, when the line
    was an expected question's, a marker or a closing line), :meth:`end_paragraph` ends an answer, :meth:`done`
    ends the notes; then :attr:`faq` and :attr:`close`.  ``closing``: a ``[close]`` line starts the closing
    lines (a discussion's notes)."""

    speakers: Speakers = field(default_factory=dict)
    closing: bool = False
    faq: list[ExpectedQuestion] = field(default_factory=list)
    close: list[ScriptStep] = field(default_factory=list)
    _asked: list[str] = field(default_factory=list)  # the phrasings waiting for their answer
    _pending: list[str] = field(default_factory=list)  # ... as written, given back if no answer comes
    _answer: list[str] | None = None
    _by: str | None = None
    _in_close: bool = False

    def _who(self, name: str | None) -> str | None:
        if not name:
            return None
        key = " ".join(name.lower().split())
        found = self.speakers.get(key)
        return found if found is not None else (key if _BY.match(key) else None)

    def end_paragraph(self) -> None:
        """An answer ends with its paragraph (a question waits for its answer in the next one)."""
        if self._answer is None:
            return
        answer = _flat(" ".join(self._answer), MAX_A)
        phrasings = [_flat(q, MAX_Q) for q in self._asked[:MAX_PHRASINGS]]
        if len(self.faq) < MAX_FAQ and answer and phrasings:
            self.faq.append(ExpectedQuestion(q=phrasings[0] if len(phrasings) == 1 else phrasings, a=answer,
                                             by=self._by))
        self._asked, self._pending, self._answer, self._by = [], [], None, None

    def done(self) -> list[str]:
        """The end of the notes: the questions left unanswered, given back."""
        self.end_paragraph()
        left, self._asked, self._pending = self._pending, [], []
        return left

    def feed(self, line: str) -> list[str]:
        """``line`` read: the lines that stay the notes' (see the class)."""
        if _FAQ.match(line) is not None or (self.closing and _CLOSE.match(line) is not None):
            left = self.done()
            self._in_close = _FAQ.match(line) is None
            return left
        if self._in_close:
            step = line_step(line, set(), self.speakers)
            if step is not None and step.say is not None and len(self.close) < MAX_CLOSE:
                self.close.append(step)
            return []
        found = QA_LINE.match(line)
        if found is not None and found.group(1).upper() == "Q":
            self.end_paragraph()
            self._asked.append(found.group(3))
            self._pending.append(line)
            return []
        if found is not None and self._asked and self._answer is None:
            self._answer, self._by = [found.group(3)], self._who(found.group(2))
            return []
        if found is None and self._answer is not None and line.strip() and not line.lstrip().startswith("["):
            self._answer.append(line)  # the answer runs on to the end of its paragraph
            return []
        return [*self.done(), line]


def read_notes(notes: str, speakers: Speakers | None = None, *, closing: bool = False) \
        -> tuple[str, list[ExpectedQuestion], list[ScriptStep]]:
    """``notes`` without their expected questions (and closing lines), the expected questions, the closing
    lines; a blank line ends a paragraph."""
    reader = FaqReader(dict(speakers or {}), closing)
    kept: list[str] = []
    for line in notes.splitlines():
        if not line.strip():
            reader.end_paragraph()
            kept.append(line)
        else:
            kept += reader.feed(line)
    kept += reader.done()
    return "\n".join(kept), reader.faq, reader.close
