"""A lesson in the HTML export: scene headings, slides as slides (:mod:`.slide_html`, the look every page
shares), where the teacher pointed (in the element's own words, never its id), quiz questions with their
options, the learner's answers and the score.

Every string is cleaned (no control sequences, no broken surrogates) and HTML-escaped; an image is a captioned
picture card (never an ``<img>``), nothing is a link.
"""

from __future__ import annotations

import html

from ..engine.events import QuizAnswerEvent
from ..engine.models import Slide
from ..replies.sanitize import replace_surrogates
from ..untrusted import clean
from .lesson_notes import LessonNotes, Note, option_lines, shown, slide_heading, verdict_lines
from .slide_html import SLIDE_CSS, pointer_text, render_slide_html

LESSON_CSS = SLIDE_CSS + """
.scene{border-top:2px solid #8250df;padding-top:.4rem}
.pointer{color:#cf222e;background:#ffebe9}.quiz{border:1px solid #d4a72c;border-radius:6px;padding:.5rem .9rem;
margin:.8rem 0;background:#fff8c5}.right{color:#1a7f37}.wrong{color:#cf222e}.score{font-weight:600}
"""


def e(text: object) -> str:
    """Any value as escaped HTML text: cleaned of control sequences and broken surrogates."""
    return html.escape(clean(replace_surrogates(str(text))))


def slide_html(slide: Slide, number: int, total: int) -> str:
    """A slide of the lesson, in the look of every page (:func:`~.slide_html.render_slide_html`)."""
    return render_slide_html(slide, number=number, total=total)


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
    if note.type == "action":
        first = pointer_text(note.action_name, note.params.get("elementId"), notes.slides)
    return f"<div><span class='badge pointer'>{e(first)}</span></div>"


def other_slides_html(slides: list[Slide], shown_slides: set[int]) -> list[str]:
    """The slides the conversation did not show (a scenario's, or a lesson's not reached)."""
    rest = [(number, slide) for number, slide in enumerate(slides, 1) if number not in shown_slides]
    if not rest:
        return []
    title = "Slides" if not shown_slides else "Slides not shown above"
    return [f"<h2>{title}</h2>", *(slide_html(slide, number, len(slides)) for number, slide in rest)]
