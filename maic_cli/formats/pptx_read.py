"""A PowerPoint deck (``.pptx``) as a lesson: one slide scene per slide, the speaker notes as its script.

Each slide's title is the scene's title; its other shapes, in reading order (top to
bottom, then left to right), become elements: a text box of one paragraph is ``text``,
of several ``bullets`` (a deeper level is indented by two spaces), a box set in a
monospace font ``code``, a table ``table``, a picture ``image`` described by its alt
text.  Footers, dates and slide numbers are left out.  A shape whose name is a simple
lower-case word keeps it as its id, and a hint in its alt text (``text``, ``bullets``,
``formula``, ``code (python)``) keeps its kind: ``maic lesson export`` writes both, so a
deck it made comes back as it was.  The notes become the script (``notes_script``); slides
whose notes mark them as quiz questions or a discussion come back as those scenes
(``pptx_marked``).

A deck is a zip, and may be hostile: before python-pptx opens it, the zip's members are
counted and their declared sizes (which bound what unpacking may produce) and
compression ratios checked, so a zip bomb is refused without being unpacked.  python-pptx
parses every XML part when it opens a deck, so the XML is bounded too (each part, all
together, and the number of slides), and on a slide only the first ``MAX_SHAPES`` shapes
(groups' shapes counted) are looked at, and none once the slide holds what a lesson keeps.
"""

from __future__ import annotations

import io
import itertools
import re
import zipfile
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..files import describe_size, read_bounded
from .common import MAX_CELL, MAX_ELEMENTS, MAX_ITEMS, MAX_ROWS, Draft, DraftSlide, line, text
from .pptx_marked import fold_marked

MAX_DECK_BYTES = 50 * 2**20
MAX_MEMBERS = 5_000
MAX_UNPACKED = 200 * 2**20  # all members together, as declared
MAX_RATIO = 100  # uncompressed / compressed, for members over RATIO_FROM bytes
RATIO_FROM = 2**20
MAX_DEPTH = 5  # groups inside groups
MAX_XML_PART = 8 * 2**20  # one slide, its notes, a layout … (a slide of tens of thousands of shapes)
MAX_XML = 40 * 2**20  # every XML part together, as declared: what python-pptx parses on opening
MAX_SLIDES = 600  # slides in a deck (a quiz's questions are a slide each, folded into one scene)
MAX_SHAPES = 1_000  # shapes looked at on one slide
_SLIDE_PART = re.compile(r"^ppt/slides/slide[0-9]+\.xml$")
MONOSPACE = re.compile(r"mono|courier|consolas|menlo|code|fixed|terminal", re.IGNORECASE)
_HINT = re.compile(r"^\s*(text|bullets|formula|code|chart|video|shape|table)"
                   r"(?:\s*\(([A-Za-z0-9_+#.-]{1,30})\))?\s*$", re.IGNORECASE)
_SKIPPED_PLACEHOLDERS = {"SLIDE_NUMBER", "FOOTER", "DATE", "HEADER"}


def check_zip(path: Path, data: bytes) -> None:
    """Refuse what is not a deck, and a zip that would unpack to too much (before anything is unpacked)."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            members = archive.infolist()
    except (zipfile.BadZipFile, ValueError, OSError, EOFError):
        raise InputError(f"{path}: not a PowerPoint deck (a .pptx file is a zip archive; this is not one)") from None
    if len(members) > MAX_MEMBERS:
        raise InputError(f"{path}: a zip of {len(members):,} files, more than a deck holds ({MAX_MEMBERS:,})")
    total = xml = slides = 0
    for member in members:
        total += member.file_size
        if member.filename.endswith((".xml", ".rels")):
            xml += member.file_size
            if member.file_size > MAX_XML_PART:
                raise InputError(f"{path}: {line(member.filename, 80)} is {describe_size(member.file_size)} of XML, "
                                 f"more than a slide holds ({describe_size(MAX_XML_PART)}); not opened")
        slides += bool(_SLIDE_PART.match(member.filename))
        if member.file_size > RATIO_FROM and member.file_size > MAX_RATIO * max(member.compress_size, 1):
            ratio = member.file_size // max(member.compress_size, 1)
            raise InputError(f"{path}: {line(member.filename, 80)} unpacks {ratio} times its size (a zip bomb?); "
                             "not opened")
        if total > MAX_UNPACKED:
            raise InputError(f"{path}: unpacks to more than {describe_size(MAX_UNPACKED)} (a zip bomb?); not opened")
    if xml > MAX_XML:
        raise InputError(f"{path}: {describe_size(xml)} of XML, more than a lesson's deck holds "
                         f"({describe_size(MAX_XML)}); split it into several decks")
    if slides > MAX_SLIDES:
        raise InputError(f"{path}: {slides:,} slides, more than a lesson holds ({MAX_SLIDES}); "
                         "split it into several decks")
    names = {member.filename for member in members}
    if "[Content_Types].xml" not in names or not any(n.startswith("ppt/") for n in names):
        raise InputError(f"{path}: a zip, but not a PowerPoint deck (no ppt/ part); export it as .pptx")


def _alt_text(shape: Any) -> str:
    """The shape's description (alt text), if it has one."""
    try:
        properties = shape._element[0][0]  # nvSpPr / nvPicPr / nvGraphicFramePr → cNvPr
        return str(properties.get("descr") or "")
    except (IndexError, AttributeError, TypeError):
        return ""


def _monospace(paragraphs: list[Any]) -> bool:
    fonts = [run.font.name for p in paragraphs for run in p.runs if run.text.strip()]
    return bool(fonts) and all(name is not None and MONOSPACE.search(name) for name in fonts)


def _paragraph_text(paragraph: Any) -> str:
    return str(paragraph.text).replace("\v", "\n")


def _placeholder_kind(shape: Any) -> str | None:
    if not shape.is_placeholder:
        return None
    try:
        return str(shape.placeholder_format.type).split(".")[-1].split(" ")[0]
    except (ValueError, AttributeError):
        return None


def _text_frame(slide: DraftSlide, shape: Any) -> None:
    paragraphs = [p for p in shape.text_frame.paragraphs if _paragraph_text(p).strip()]
    hint = _HINT.match(_alt_text(shape))
    kind = hint.group(1).lower() if hint else None
    if not paragraphs and kind is None:
        return  # an empty box (a hinted one is an element a lesson left empty)
    name = str(shape.name)
    if kind == "code" or (kind is None and _monospace(paragraphs)):
        content = "\n".join(_paragraph_text(p).rstrip() for p in shape.text_frame.paragraphs)
        slide.add("code", preferred=name, content=text(content, keep_ends=True),
                  language=(hint.group(2) if hint and hint.group(2) else None))
    elif kind == "table":
        slide.add("table", preferred=name)
    elif kind in ("text", "formula", "chart", "video", "shape"):
        content = "\n".join(_paragraph_text(p).strip() for p in shape.text_frame.paragraphs).strip("\n")
        slide.add(kind, preferred=name, content=text(content))
    elif kind is None and len(paragraphs) == 1:
        slide.add("text", preferred=name, content=text(_paragraph_text(paragraphs[0]).strip()))
    else:
        items = [("  " * min(int(p.level or 0), 4)) + line(_paragraph_text(p), 500) for p in paragraphs[:MAX_ITEMS]]
        slide.add("bullets", preferred=name, items=items)


def _table(slide: DraftSlide, shape: Any) -> None:
    rows = [[line(cell.text, MAX_CELL) for cell in list(row.cells)[:MAX_ROWS]]
            for row in list(shape.table.rows)[:MAX_ROWS]]
    rows = [row for row in rows if any(row)]
    if rows:
        slide.add("table", preferred=str(shape.name), rows=rows)


def _position(shape: Any) -> tuple[int, int]:
    return (shape.top if shape.top is not None else 0, shape.left if shape.left is not None else 0)


def _shapes(slide: DraftSlide, shapes: Any, title_shape: Any, depth: int = 0, budget: list[int] | None = None) \
        -> None:
    """The elements of ``shapes`` in reading order; ``budget``: how many more shapes may be looked at."""
    from pptx.enum.shapes import MSO_SHAPE_TYPE

    budget = budget if budget is not None else [MAX_SHAPES]
    ordered = sorted(itertools.islice(shapes, max(budget[0], 0)), key=_position)
    budget[0] -= len(ordered)
    for shape in ordered:
        if len(slide.elements) >= MAX_ELEMENTS:
            slide.dropped += 1  # a shape that might have been an element: not looked at
            continue
        if title_shape is not None and shape.shape_id == title_shape.shape_id:
            continue
        if _placeholder_kind(shape) in _SKIPPED_PLACEHOLDERS:
            continue
        try:
            kind = shape.shape_type
        except NotImplementedError:  # a shape python-pptx does not know (no geometry, say): its text still counts
            kind = None
        if kind == MSO_SHAPE_TYPE.GROUP:
            if depth < MAX_DEPTH and budget[0] > 0:
                _shapes(slide, shape.shapes, None, depth + 1, budget)
        elif getattr(shape, "has_table", False) and shape.has_table:
            _table(slide, shape)
        elif str(shape._element.tag).endswith("}pic"):  # a picture, or a picture placeholder holding one
            described = line(_alt_text(shape), 1000)
            slide.add("image", preferred=str(shape.name), content=described or "A picture (it has no alt text)")
        elif _placeholder_kind(shape) in ("PICTURE", "CHART", "TABLE", "MEDIA_CLIP", "ORG_CHART", "OBJECT") \
                and not (shape.has_text_frame and shape.text_frame.text.strip()):
            continue  # an empty placeholder: a prompt to the author, not content
        elif getattr(shape, "has_chart", False) and shape.has_chart:
            slide.add("chart", preferred=str(shape.name), content=_chart_text(shape.chart))
        elif shape.has_text_frame:
            _text_frame(slide, shape)


def _chart_text(chart: Any) -> str:
    """A chart as words: its title, kind, series and categories (what the teacher can talk about)."""
    title = line(chart.chart_title.text_frame.text) if chart.has_title and chart.chart_title.has_text_frame else ""
    kind = str(chart.chart_type).split(".")[-1].split(" ")[0].lower().replace("_", " ")
    plot = chart.plots[0] if len(chart.plots) else None
    series = [line(s.name, 60) for s in list(plot.series)[:10]] if plot is not None else []
    categories = [line(str(c), 60) for c in list(plot.categories)[:20]] if plot is not None else []
    described = f"A {kind} chart" + (f" of {', '.join(series)}" if series else "") + (
        f" by {', '.join(categories)}" if categories else "")
    return line(f"{title}: {described}" if title else described, 1000)


def _untitled(shapes: Any) -> Any:
    """On a slide with no title placeholder, the top text box that reads like a title (one short line)."""
    boxes = [s for s in itertools.islice(shapes, MAX_SHAPES) if s.has_text_frame and s.text_frame.text.strip()]
    if not boxes:
        return None
    top = min(boxes, key=_position)
    paragraphs = [p for p in top.text_frame.paragraphs if _paragraph_text(p).strip()]
    return top if len(paragraphs) == 1 and len(_paragraph_text(paragraphs[0]).strip()) <= 80 else None


def _notes(slide: Any) -> str:
    if not slide.has_notes_slide:
        return ""
    frame = slide.notes_slide.notes_text_frame
    if frame is None:
        return ""
    return "\n\n".join(_paragraph_text(p) for p in frame.paragraphs if _paragraph_text(p).strip())


def read_pptx(path: Path, speakers: dict[str, str] | None = None) -> Draft:
    """The deck at ``path`` as a lesson draft (raises :class:`InputError` naming the file); a notes line
    ``Name: …`` naming one of ``speakers`` (lower-case name → agent id) is that agent's line."""
    data = read_bounded(path, MAX_DECK_BYTES, "deck")
    check_zip(path, data)
    from pptx import Presentation

    draft = Draft(path, speakers=speakers or {}, max_slides=MAX_SLIDES)
    try:
        deck = Presentation(io.BytesIO(data))
        properties_title = line(deck.core_properties.title or "")
        if properties_title == "PowerPoint Presentation":  # python-pptx's default, not a title
            properties_title = ""
        draft.description = line(deck.core_properties.subject or "", 2000) or None
        for number, slide in enumerate(deck.slides, 1):
            title_shape = slide.shapes.title or _untitled(slide.shapes)
            title = line(title_shape.text_frame.text) if title_shape is not None and title_shape.has_text_frame else ""
            scene = draft.slide(title or f"Slide {number}")
            scene.preferred_id = str(title_shape.name) if title_shape is not None else None
            _shapes(scene, slide.shapes, title_shape)
            if len(slide.shapes) > MAX_SHAPES:
                draft.notes.append(f"slide {number}: only its first {MAX_SHAPES:,} shapes read "
                                   f"(of {len(slide.shapes):,})")
            scene.notes = text(_notes(slide), 100_000)
    except InputError:
        raise
    except Exception as exc:  # noqa: BLE001 - whatever a broken deck makes python-pptx raise is the deck's fault
        problem = line(str(exc), 160) or type(exc).__name__
        raise InputError(f"{path}: not a readable PowerPoint deck ({problem})") from None
    draft.title = properties_title or (draft.scenes[0].title if draft.scenes and
                                       isinstance(draft.scenes[0], DraftSlide) else "")
    fold_marked(draft)
    return draft
