"""A lesson in the HTML export: scene headings, slides with their elements by id, where the
teacher pointed, quiz questions with their options, the learner's answers and the score.

Every string is cleaned (no control sequences, no broken surrogates) and HTML-escaped; an
image is its alt text (never an ``<img>``), nothing is a link.
"""

from __future__ import annotations

import html

from ..engine.events import QuizAnswerEvent
from ..engine.models import Slide, SlideElement
from ..replies.sanitize import replace_surrogates
from ..untrusted import clean
from .latex import latex_to_unicode
from .lesson_notes import (
    MAX_COLUMNS,
    MAX_ITEMS,
    LessonNotes,
    Note,
    element_kind,
    element_lines,
    option_lines,
    shown,
    slide_heading,
    verdict_lines,
)

LESSON_CSS = """
.slide{border:1px solid #54aeff;border-radius:6px;padding:.6rem .9rem;margin:.8rem 0}.slide h4{margin:.2rem 0}
.kind{color:#8250df;font-size:.8rem;margin-right:.4rem}.scene{border-top:2px solid #8250df;padding-top:.4rem}
.pointer{color:#cf222e;background:#ffebe9}.quiz{border:1px solid #d4a72c;border-radius:6px;padding:.5rem .9rem;
margin:.8rem 0;background:#fff8c5}.right{color:#1a7f37}.wrong{color:#cf222e}.score{font-weight:600}
"""


def e(text: object) -> str:
    """Any value as escaped HTML text: cleaned of control sequences and broken surrogates."""
    return html.escape(clean(replace_surrogates(str(text))))


def table_html(rows: list[list[str]]) -> str:
    rows = [row[:MAX_COLUMNS] for row in rows[:MAX_ITEMS]]
    head = "".join(f"<th>{e(c)}</th>" for c in rows[0]) if rows else ""
    body_rows = "".join("<tr>" + "".join(f"<td>{e(c)}</td>" for c in r) + "</tr>" for r in rows[1:])
    return f"<table><tr>{head}</tr>{body_rows}</table>"


def element_html(element: SlideElement) -> str:
    """One slide element: its id, its type, its content drawn by type."""
    if element.type == "bullets":
        body = "<ul>" + "".join(f"<li>{e(shown(item, 400))}</li>" for item in element.items[:MAX_ITEMS]) + "</ul>"
    elif element.type == "table":
        body = table_html(element.rows)
    elif element.type == "code":
        body = "<pre><code>" + "\n".join(e(line) for line in element_lines(element)) + "</code></pre>"
    elif element.type == "formula":
        body = f"<em>{e(latex_to_unicode(shown(element.content)))}</em>"
    elif element.type == "image":
        body = f"<em>image: {e(shown(element.content))}</em>"
    else:
        body = e(shown(element.content))
    return (f"<div class='el'><span class='id'>[{e(shown(element.id, 64))}]</span>"
            f"<span class='kind'>{e(element_kind(element))}</span>{body}</div>")


def slide_html(slide: Slide, number: int, total: int) -> str:
    elements = "".join(element_html(element) for element in slide.elements)
    return f"<div class='slide'><h4>{e(slide_heading(slide, number, total))}</h4>{elements}</div>"


def answer_html(note: QuizAnswerEvent) -> str:
    options = "".join(f"<li>{e(line)}</li>" for line in option_lines(note))
    verdict, *rest = verdict_lines(note)
    mark = ("right", "✅") if note.correct else ("wrong", "❌")
    extra = "".join(f"<div>{e(line)}</div>" for line in rest)
    return (f"<div class='quiz'><div><strong>Question: {e(shown(note.question))}</strong></div>"
            + (f"<ul>{options}</ul>" if options else "")
            + f"<div class='{mark[0]}'>{mark[1]} {e(verdict)}</div>{extra}</div>")


def note_html(note: Note, notes: LessonNotes, shown_slides: set[int]) -> str:
    """A lesson note where it happened in the conversation."""
    first = notes.lines(note)[0]
    if note.type == "lesson":
        return f"<h2>{e(first)}</h2>"
    if note.type == "scene":
        out = f"<h3 class='scene'>{e(first)}</h3>"
        slide = notes.slide_of(note)
        if slide is not None and slide[1] not in shown_slides:
            shown_slides.add(slide[1])
            out += slide_html(slide[0], slide[1], len(notes.slides))
        elif slide is not None:
            out += f"<p class='meta'>({e(slide_heading(slide[0], slide[1], len(notes.slides)))}, shown above)</p>"
        return out
    if note.type == "quiz_answer":
        return answer_html(note)
    if note.type == "quiz_score":
        return f"<p class='score'>{e(first)}</p>"
    return f"<div><span class='badge pointer'>{e(first)}</span></div>"


def other_slides_html(slides: list[Slide], shown_slides: set[int]) -> list[str]:
    """The slides the conversation did not show (a scenario's, or a lesson's not reached)."""
    rest = [(number, slide) for number, slide in enumerate(slides, 1) if number not in shown_slides]
    if not rest:
        return []
    title = "Slides" if not shown_slides else "Slides not shown above"
    return [f"<h2>{title}</h2>", *(slide_html(slide, number, len(slides)) for number, slide in rest)]
