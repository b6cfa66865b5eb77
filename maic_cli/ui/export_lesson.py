"""A lesson in the Markdown export: scene rules, slides as slides (a heading, paragraphs, bullets, formulas,
tables, code, a picture's description; no element id or type), where the teacher pointed (in the element's own
words), quiz questions with their options, the learner's answers and the score.

Everything is escaped by the export's own rules (:func:`~.export._md_escape`: no links, no
HTML, no code span); table cells also escape ``|``; code sits in a fence longer than any
backtick run inside it.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ..engine.events import QuizAnswerEvent
from ..engine.models import Slide, SlideElement
from .latex import latex_to_unicode
from .lesson_notes import (
    MAX_COLUMNS,
    MAX_ITEMS,
    LessonNotes,
    Note,
    element_lines,
    option_lines,
    pointer_text,
    shown,
    slide_heading,
    verdict_lines,
)

_NOT_LANGUAGE = re.compile(r"[^\w+#.-]")
_BACKTICKS = re.compile(r"`+")
Escape = Callable[[str], str]


def code_fence(lines: list[str]) -> str:
    """A backtick fence longer than any backtick run in ``lines`` (at least three)."""
    longest = max((len(run) for line in lines for run in _BACKTICKS.findall(line)), default=0)
    return "`" * max(3, longest + 1)


def table_markdown(rows: list[list[str]], esc: Escape) -> list[str]:
    cells = [[esc(shown(c, 80)).replace("|", "\\|").replace("\n", " ") for c in row[:MAX_COLUMNS]]
             for row in rows[:MAX_ITEMS]]
    if not cells:
        return ["  *(empty table)*"]
    count = max(len(row) for row in cells)
    cells = [row + [""] * (count - len(row)) for row in cells]
    out = ["| " + " | ".join(row) + " |" for row in cells]
    out.insert(1, "|" + " --- |" * count)
    return ["", *(f"  {line}" for line in out)]


def element_markdown(element: SlideElement, esc: Escape) -> list[str]:
    """One slide element as a slide sets it: a paragraph, bullets, a formula in italics, a table, a code block, a
    picture's description as a captioned picture (no id, no type)."""
    if element.type == "bullets":
        return [*(f"- {esc(shown(item, 400))}" for item in element.items[:MAX_ITEMS]), ""]
    if element.type == "table":
        return [*(line[2:] for line in table_markdown(element.rows, esc)), ""]
    if element.type == "code":
        lines = element_lines(element)
        fence = code_fence(lines)
        language = _NOT_LANGUAGE.sub("", element.language or "")[:40]
        return [f"{fence}{language}", *lines, fence, ""]
    text = " ".join(shown(element.content).split())
    if element.type == "formula":
        return [f"*{esc(latex_to_unicode(text))}*", ""] if text else []
    if element.type in ("image", "video", "chart", "shape"):
        return [f"> 🖼 *{esc(text or element.type)}*", ""]
    return [esc(text), ""] if text else []


def slide_markdown(slide: Slide, number: int, total: int, esc: Escape) -> list[str]:
    lines = [f"#### {esc(slide_heading(slide, number, total))}", ""]
    for element in slide.elements:
        lines += element_markdown(element, esc)
    return [*lines, ""]


def answer_markdown(note: QuizAnswerEvent, esc: Escape) -> list[str]:
    out = [f"**Question: {esc(shown(note.question))}**", ""]
    options = option_lines(note)
    if options:
        out += [*(f"- {esc(option)}" for option in options), ""]
    mark = "✅" if note.correct else "❌"
    out += [f"{mark if number == 0 else ''} {esc(line)}  ".lstrip() for number, line in enumerate(verdict_lines(note))]
    return [*out, ""]


def note_markdown(note: Note, notes: LessonNotes, shown_slides: set[int], esc: Escape) -> list[str]:
    """A lesson note where it happened in the conversation."""
    if note.type == "lesson":
        return [f"## {esc(notes.lines(note)[0])}", ""]
    if note.type == "scene":
        lines = ["---", "", f"### {esc(notes.lines(note)[0])}", ""]
        slide = notes.slide_of(note)
        if slide is not None and slide[1] not in shown_slides:
            shown_slides.add(slide[1])
            lines += slide_markdown(slide[0], slide[1], len(notes.slides), esc)
        elif slide is not None:
            lines += [f"*({esc(slide_heading(slide[0], slide[1], len(notes.slides)))}, shown above)*", ""]
        return lines
    if note.type == "quiz_answer":
        return answer_markdown(note, esc)
    if note.type == "quiz_score":
        return [f"**{esc(notes.lines(note)[0])}**", ""]
    if note.type == "action":
        return [f"*{esc(pointer_text(note.action_name, note.params.get('elementId'), notes.slides))}*", ""]
    return [f"*{esc(notes.lines(note)[0])}*", ""]


def other_slides(slides: list[Slide], shown_slides: set[int], esc: Escape) -> list[str]:
    """The slides the conversation did not show (a scenario's, or a lesson's not reached)."""
    rest = [(number, slide) for number, slide in enumerate(slides, 1) if number not in shown_slides]
    if not rest:
        return []
    title = "## Slides" if not shown_slides else "## Slides not shown above"
    lines = [title, ""]
    for number, slide in rest:
        lines += slide_markdown(slide, number, len(slides), esc)
    return lines

