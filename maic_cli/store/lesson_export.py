"""``maic lesson export``: a lesson as a PowerPoint deck (.pptx) or as Markdown notes (.md).

The deck has one slide per slide scene — its title, its elements (text and formulas in
text boxes, bullets with their levels, tables as tables, code in a monospace box, an
image as a placeholder picture whose alt text is the description), the lecture script
as speaker notes — then a slide per quiz question (options lettered, the answer and its
explanation in the notes) and one per discussion.  Each shape is named by its element's
id (a slide's title by its scene's id) and its alt text says its kind, the notes mark
spotlight and laser steps (``[spotlight: ID]``) and quiz and discussion slides (``[quiz: …]``,
see ``import_marked``), so ``maic lesson import`` reads the deck back with the same scenes,
titles, elements and script.  The Markdown follows the format ``maic lesson import``
reads (see ``import_markdown``).  Both are written atomically.
"""

from __future__ import annotations

import io
import re
import struct
import zlib
from pathlib import Path
from typing import Any

from ..authoring.notes_script import script_notes
from ..engine.models import SlideElement
from ..errors import InputError
from ..lessons.lesson import LETTERS, DiscussionScene, Lesson, QuizQuestion, QuizScene, SlideScene
from .paths import write_atomic

FORMATS = (".pptx", ".md")
MONOSPACE_FONT = "Courier New"
_MD_LEADING = re.compile(r"^(\s*)([#>|+*-]|\d+[.)]|\$\$|=+\s*$)")


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
    """The answer (or rubric), explanation and points, and the marker ``import_marked`` reads back."""
    lines = [f"Answer: {', '.join(question.answer)}" if question.answer else
             f"Rubric: {' '.join((question.rubric or '').split())}"]
    if question.explanation:
        lines.append(f"Explanation: {' '.join(question.explanation.split())}")
    if question.points != 1:
        lines.append(f"Points: {question.points}")
    return "\n".join([*lines, f"[quiz: {quiz.id} {question.id} {question.type}]"])


def _discussion_notes(scene: DiscussionScene) -> str:
    lines = [" ".join(scene.prompt.split())] if scene.prompt else []
    if scene.initiator:
        lines.append(f"Opened by: {scene.initiator}")
    return "\n".join([*lines, f"[discussion: {scene.id}]"])


def deck_bytes(lesson: Lesson) -> bytes:
    from pptx import Presentation
    from pptx.util import Inches

    deck = Presentation()
    deck.slide_width, deck.slide_height = Inches(13.333), Inches(7.5)
    deck.core_properties.title = lesson.title
    if lesson.description:
        deck.core_properties.subject = lesson.description
    for scene in lesson.scenes:
        if isinstance(scene, SlideScene):
            slide = _slide(deck, scene.title, script_notes(scene.script), scene.id)
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
            slide = _slide(deck, f"Discussion: {scene.title or scene.topic}"[:200], _discussion_notes(scene))
            _add_element(slide, SlideElement(id="topic", type="text", content=scene.topic), Inches(1.5))
    out = io.BytesIO()
    deck.save(out)
    return out.getvalue()


# -- Markdown ---------------------------------------------------------------------------------

def _md(text: str) -> str:
    """One line of text that Markdown reads as plain text (a leading mark is escaped)."""
    flat = " ".join(text.split())
    match = _MD_LEADING.match(flat)
    return flat if match is None else f"{match.group(1)}\\{flat[len(match.group(1)):]}"


def _md_element(element: SlideElement) -> list[str]:
    if element.type == "bullets":
        lines = []
        for item in element.items:
            stripped = item.lstrip(" ")
            lines.append("  " * ((len(item) - len(stripped)) // 2) + "- " + _md(stripped))
        return lines
    if element.type == "table" and element.rows:
        columns = max(len(row) for row in element.rows)
        cells = [[_md(c).replace("|", "\\|") for c in row] + [""] * (columns - len(row)) for row in element.rows]
        return ["| " + " | ".join(cells[0]) + " |", "|" + " --- |" * columns,
                *("| " + " | ".join(row) + " |" for row in cells[1:])]
    if element.type == "code":
        fence = "~~~~" if "```" in element.content else "```"
        return [fence + (element.language or ""), element.content, fence]
    if element.type == "formula":
        return ["$$" + " ".join(element.content.split()) + "$$"]
    if element.type == "image":
        alt = " ".join(element.content.split()).replace("[", "(").replace("]", ")")
        return [f"![{alt}](picture)"]
    return ["> " + _md(part) for part in element.content.split("\n") if part.strip()] or ["> …"]


def notes_markdown(lesson: Lesson) -> str:
    out = [f"# {_md(lesson.title)}", ""]
    if lesson.description:
        out += [_md(lesson.description), ""]
    for scene in lesson.scenes:
        if isinstance(scene, SlideScene):
            out += [f"## {_md(scene.title)}", ""]
            for element in scene.elements:
                out += [*_md_element(element), ""]
            out += [line for step in scene.script if step.say for line in (_md(step.say), "")]
        elif isinstance(scene, QuizScene):
            out += [f"## Quiz: {_md(scene.title)}", ""]
            for number, question in enumerate(scene.questions, 1):
                out.append(f"{number}. {_md(question.question)}")
                out += [f"   - [{'x' if LETTERS[i] in question.answer else ' '}] {_md(option)}"
                        for i, option in enumerate(question.options)]
                if question.rubric:
                    out.append(f"   Rubric: {' '.join(question.rubric.split())}")
                if question.explanation:
                    out.append(f"   Explanation: {' '.join(question.explanation.split())}")
                if question.points != 1:
                    out.append(f"   Points: {question.points}")
            out.append("")
        elif isinstance(scene, DiscussionScene):
            out += [f"## Discussion: {_md(scene.topic)}", ""]
            if scene.prompt:
                out += [_md(scene.prompt), ""]
    return "\n".join(out).rstrip("\n") + "\n"


def export_lesson(lesson: Lesson, out: Path) -> None:
    """Write ``lesson`` to ``out`` as a deck or as notes, by its suffix."""
    suffix = out.suffix.lower()
    if suffix == ".pptx":
        write_atomic(out, deck_bytes(lesson))
    elif suffix in (".md", ".markdown"):
        write_atomic(out, notes_markdown(lesson))
    else:
        raise InputError(f"{out}: export to a deck (.pptx) or to Markdown notes (.md), not {suffix or 'no suffix'}")
