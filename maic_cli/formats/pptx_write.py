"""``maic lesson export``: a lesson as a PowerPoint deck (.pptx) or as Markdown notes (.md).

The deck has one slide per slide scene — its title, its elements (text and formulas in
text boxes, bullets with their levels, tables as tables, code in a monospace box, an
image as a placeholder picture whose alt text is the description), the lecture script
as speaker notes — then a slide per quiz question (options lettered, the answer and its
explanation in the notes) and one per discussion.  Each shape is named by its element's
id (a slide's title by its scene's id) and its alt text says its kind, the notes mark
spotlight and laser steps (``[spotlight: ID]``) and quiz and discussion slides (``[quiz: …]``,
see ``pptx_marked``), so ``maic lesson import`` reads the deck back with the same scenes,
titles, elements and script.  The Markdown follows the format ``maic lesson import``
reads (``md_write``).  A classmate's line is written ``Name: …`` (``speakers``).

The lesson file is untrusted: its text is cleaned as an import cleans it (no control
character or terminal escape reaches the deck or the notes; invisible characters are shown
``<U+202E>``) and its size was bounded on load (``lessons/lesson.py``).  Both are written
atomically.
"""

from __future__ import annotations

import io
import struct
import zlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..authoring.notes_script import script_notes, step_line
from ..engine.models import SlideElement
from ..errors import InputError
from ..lessons.lesson import LETTERS, DiscussionScene, Lesson, QuizQuestion, QuizScene, ScriptStep, SlideScene
from ..store.paths import write_atomic
from ..untrusted import clean, one_line
from .md_write import notes_markdown
from .speakers import class_speakers

FORMATS = (".pptx", ".md")
MONOSPACE_FONT = "Courier New"
__all__ = ["FORMATS", "clean_lesson", "deck_bytes", "export_lesson", "notes_markdown"]


def placeholder_png(width: int = 160, height: int = 90) -> bytes:
    """A light grey PNG: the picture an image element stands for (the description is its alt text)."""
    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)

    row = b"\x00" + b"\xdd\xdd\xdd" * width
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(row * height)) + chunk(b"IEND", b""))


# -- PowerPoint -------------------------------------------------------------------------------

def _describe(shape: Any, text: str) -> None:
    shape._element[0][0].set("descr", text)  # nvXxPr/cNvPr: the alt text


def _lines_height(count: int) -> int:
    from pptx.util import Inches

    return int(Inches(0.2 + 0.38 * max(count, 1)))


def _add_element(slide: Any, element: SlideElement, top: int) -> int:
    """Add ``element`` at ``top``; returns the top of the next one."""
    from pptx.util import Inches, Pt

    left, width = Inches(0.6), Inches(12.1)
    if element.type == "table" and element.rows:
        columns = max(len(row) for row in element.rows)
        height = _lines_height(len(element.rows))
        table = slide.shapes.add_table(len(element.rows), columns, left, top, width, height)
        for r, row in enumerate(element.rows):
            for c in range(columns):
                table.table.cell(r, c).text = row[c] if c < len(row) else ""
        table.name = element.id
        return top + height + Inches(0.2)
    if element.type == "image":
        height = Inches(2.2)
        picture = slide.shapes.add_picture(io.BytesIO(placeholder_png()), left, top, height=height)
        picture.name = element.id
        _describe(picture, element.content or "a picture")
        return top + height + Inches(0.2)
    if element.type == "bullets":
        lines = element.items or [""]
    else:
        lines = element.content.split("\n") if element.content else [""]
    wrapped = sum(1 + len(text) // 90 for text in lines)
    height = _lines_height(wrapped)
    box = slide.shapes.add_textbox(left, top, width, height)
    box.name = element.id
    frame = box.text_frame
    frame.word_wrap = True
    for number, text in enumerate(lines):
        paragraph = frame.paragraphs[0] if number == 0 else frame.add_paragraph()
        if element.type == "bullets":
            stripped = text.lstrip(" ")
            paragraph.level = min((len(text) - len(stripped)) // 2, 4)
            text = stripped
        run = paragraph.add_run()
        run.text = text
        run.font.size = Pt(14 if element.type == "code" else 20)
        if element.type == "code":
            run.font.name = MONOSPACE_FONT
    hint = f"code ({element.language})" if element.type == "code" and element.language else element.type
    _describe(box, hint)
    return top + height + Inches(0.15)


def _slide(deck: Any, title: str, notes: str, scene_id: str | None = None) -> Any:
    slide = deck.slides.add_slide(deck.slide_layouts[5])  # "Title Only"
    slide.shapes.title.text = title
    if scene_id is not None:
        slide.shapes.title.name = scene_id  # read back as the scene's id
    if notes:
        slide.notes_slide.notes_text_frame.text = notes
    return slide


def _question_notes(quiz: QuizScene, question: QuizQuestion) -> str:
    """The answer (or rubric), explanation and points, and the marker ``pptx_marked`` reads back."""
    lines = [f"Answer: {', '.join(question.answer)}" if question.answer else
             f"Rubric: {' '.join((question.rubric or '').split())}"]
    if question.explanation:
        lines.append(f"Explanation: {' '.join(question.explanation.split())}")
    if question.points != 1:
        lines.append(f"Points: {question.points}")
    return "\n".join([*lines, f"[quiz: {quiz.id} {question.id} {question.type}]"])


def _discussion_notes(scene: DiscussionScene, labels: Mapping[str, str], speakers: Mapping[str, str]) -> str:
    """The prompt (said as it is when it would read as a field or a speaker), who opens it, the marker, and
    the opening script after a ``[script]`` line."""
    lines = []
    if scene.prompt:
        said = " ".join(scene.prompt.split())
        escaped = step_line(ScriptStep(say=said), speakers=speakers)
        needs = escaped.startswith("\\") or said.lower().startswith(("opened by", "answer", "rubric", "points",
                                                                      "explanation"))
        lines.append("\\" + said if needs and not escaped.startswith("\\") else escaped)
    if scene.initiator:
        lines.append(f"Opened by: {scene.initiator}")
    lines.append(f"[discussion: {scene.id}]")
    if scene.script:
        lines += ["[script]", *(step_line(step, labels, speakers) for step in scene.script)]
    return "\n".join(lines)


def deck_bytes(lesson: Lesson, labels: Mapping[str, str] | None = None,
               speakers: Mapping[str, str] | None = None) -> bytes:
    from pptx import Presentation
    from pptx.util import Inches

    labels, speakers = labels or {}, speakers or {}
    deck = Presentation()
    deck.slide_width, deck.slide_height = Inches(13.333), Inches(7.5)
    deck.core_properties.title = lesson.title
    if lesson.description:
        deck.core_properties.subject = lesson.description
    for scene in lesson.scenes:
        if isinstance(scene, SlideScene):
            slide = _slide(deck, scene.title, script_notes(scene.script, labels, speakers), scene.id)
            top = int(Inches(1.5))
            for element in scene.elements:
                top = _add_element(slide, element, top)
        elif isinstance(scene, QuizScene):
            for number, question in enumerate(scene.questions, 1):
                slide = _slide(deck, f"{scene.title}: question {number}", _question_notes(scene, question))
                top = _add_element(slide, SlideElement(id="question", type="text", content=question.question),
                                   Inches(1.5))
                if question.options:
                    options = [f"{LETTERS[i]}. {option}" for i, option in enumerate(question.options)]
                    _add_element(slide, SlideElement(id="options", type="bullets", items=options), top)
        elif isinstance(scene, DiscussionScene):
            notes = _discussion_notes(scene, labels, speakers)
            slide = _slide(deck, f"Discussion: {scene.title or scene.topic}"[:200], notes)
            _add_element(slide, SlideElement(id="topic", type="text", content=scene.topic), Inches(1.5))
    out = io.BytesIO()
    deck.save(out)
    return out.getvalue()


def _cleaned(value: Any) -> Any:
    if isinstance(value, str):  # as an import cleans it; and no XML non-character (a deck could not hold it)
        return clean(value).replace("\ufffe", "\ufffd").replace("\uffff", "\ufffd")
    if isinstance(value, dict):
        return {key: _cleaned(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_cleaned(item) for item in value]
    return value


def clean_lesson(lesson: Lesson, source: Path | str = "lesson") -> Lesson:
    """``lesson`` with every text cleaned; refused (``source: …``) if an id is no longer one once cleaned."""
    try:
        return Lesson.model_validate(_cleaned(lesson.model_dump(mode="json", exclude_none=True)))
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"])
        raise InputError(f"{source}: once its control characters are removed: {where}: "
                         f"{one_line(error['msg'])[:200]}") from None


def export_lesson(lesson: Lesson, out: Path, source: Path | str = "lesson") -> None:
    """Write ``lesson`` (read from ``source``) to ``out`` as a deck or as notes, by its suffix."""
    suffix = out.suffix.lower()
    if suffix not in (*FORMATS, ".markdown"):
        raise InputError(f"{out}: export to a deck (.pptx) or to Markdown notes (.md), not {suffix or 'no suffix'}")
    lesson = clean_lesson(lesson, source)
    speakers = class_speakers(lesson.agents)
    if suffix == ".pptx":
        write_atomic(out, deck_bytes(lesson, speakers.labels, speakers.names))
    else:
        write_atomic(out, notes_markdown(lesson, speakers.labels, speakers.names))
