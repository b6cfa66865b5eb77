"""One picture of the board (:class:`~.script.Board`), in the look of the HTML export, drawn with Pillow.

The slide is a card with a blue border and its heading (``Slide 2/3: Title``), each element under its ``[id]`` and
kind, as ``ui/export_html_lesson.py`` draws it; the whiteboard a grey-bordered card beside it (or alone).  The
spotlit element is marked as the export marks a pointer (red on pale red), the laser as a red dot beside its
element.  Text is cleaned; what does not fit is drawn smaller, then cut with an ellipsis.  Pillow is imported here
only (the ``video`` extra).
"""

from __future__ import annotations

import io
import os
from dataclasses import dataclass
from functools import cache
from typing import Any

from ..engine.models import SlideElement, WhiteboardElement
from ..engine.whiteboard import usable_params
from ..ui.latex import latex_to_unicode
from ..ui.lesson_notes import element_kind, element_lines, shown, slide_heading
from .script import Board

WIDTH, HEIGHT = 1280, 720
MARGIN = 36
INK, MUTED, KIND = "#1f2328", "#656d76", "#8250df"
SLIDE_BORDER, BOARD_BORDER, CODE_BG = "#54aeff", "#d0d7de", "#f6f8fa"
POINTER, POINTER_BG = "#cf222e", "#ffebe9"
SIZES = (22, 19, 16, 14, 12)  # body text sizes tried, largest first, until the card's content fits
FONT_FILES = {  # tried in order; Pillow's own font if none is there
    "sans": ("DejaVuSans.ttf", "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", "Arial.ttf"),
    "bold": ("DejaVuSans-Bold.ttf", "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf", "Arial Bold.ttf"),
    "mono": ("DejaVuSansMono.ttf", "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf", "Courier New.ttf"),
}


@cache
def font(style: str, size: int) -> Any:
    from PIL import ImageFont

    for name in (os.environ.get(f"MAIC_FONT_{style.upper()}"), *FONT_FILES[style]):
        if not name:
            continue
        try:
            return ImageFont.truetype(name, size)
        except OSError:
            continue
    return ImageFont.load_default(size)


@dataclass(frozen=True)
class Line:
    text: str
    style: str  # sans, bold, mono, muted, kind
    scale: float = 1.0
    mark: str | None = None  # "spotlight" or "laser": the element this line belongs to is pointed at
    group: int = -1  # the element it belongs to (its lines are marked together)


def _wrap(text: str, style: str, size: int, width: int) -> list[str]:
    face = font("mono" if style == "mono" else "bold" if style == "bold" else "sans", size)
    out: list[str] = []
    for paragraph in text.split("\n") or [""]:
        words, line = paragraph.split(" "), ""
        for word in words:
            trial = f"{line} {word}" if line else word
            if face.getlength(trial) <= width or not line:
                line = trial
                while face.getlength(line) > width and len(line) > 1:  # one word wider than the card
                    cut = max(1, int(len(line) * width / face.getlength(line)) - 1)
                    out.append(line[:cut])
                    line = line[cut:]
            else:
                out.append(line)
                line = word
        out.append(line)
    return out


def _slide_lines(board: Board) -> list[Line]:
    assert board.slide is not None
    heading = slide_heading(board.slide, board.number, board.total) if board.number else shown(board.slide.title, 200)
    lines = [Line(heading, "bold", 1.15)]
    for group, element in enumerate(board.slide.elements[:40]):
        mark = "spotlight" if element.id == board.spotlight else "laser" if element.id == board.laser else None
        lines += _element_lines(element, mark, group)
    return lines


def _element_lines(element: SlideElement, mark: str | None, group: int) -> list[Line]:
    out = [Line(f"[{shown(element.id, 64)}]  {element_kind(element)}", "kind", 0.75, mark, group)]
    body = element_lines(element)
    if element.type == "formula":
        body = [latex_to_unicode(shown(element.content))]
    elif element.type == "image":
        body = [f"image: {shown(element.content)}"]
    style = "mono" if element.type in ("code", "table") else "sans"
    out += [Line(text, style, 1.0, mark, group) for text in body[:30]]
    return out


def _board_text(element: WhiteboardElement) -> tuple[str, list[str]]:
    p = usable_params(element)
    if p is None:
        return "sans", ["(unreadable element)"]
    if element.kind == "text":
        return "sans", shown(p.get("content", "")).splitlines()[:20]
    if element.kind == "latex":
        return "sans", [latex_to_unicode(shown(p.get("latex", "")))]
    if element.kind == "code":
        return "mono", [f"{shown(line.id, 8):>4}  {shown(line.text, 200)}" for line in element.lines[:30]]
    if element.kind == "table":
        return "mono", [" | ".join(shown(c, 30) for c in row[:8]) for row in p.get("data", [])[:20]]
    if element.kind == "chart":
        labels, series = p.get("labels", [])[:12], p.get("series", [])[:4]
        peak = max((abs(v) for s in series for v in s.get("values", [])), default=1.0) or 1.0
        rows = [shown(p.get("title") or "chart", 100)]
        for i, label in enumerate(labels):
            for s in series:
                values = s.get("values", [])
                if i < len(values):
                    rows.append(f"{shown(label, 20)} {'█' * max(1, round(abs(values[i]) / peak * 16))} {values[i]}")
        return "mono", rows
    if element.kind == "shape":
        return "sans", [shown(f"{p.get('shape', 'shape')}: {p.get('label', '')}", 200)]
    arrow = "→" if p.get("arrow") else "—"
    return "sans", [shown(f"({p.get('startX', '?')},{p.get('startY', '?')}) {arrow} "
                          f"({p.get('endX', '?')},{p.get('endY', '?')}) {p.get('label', '')}", 200)]


def _whiteboard_lines(board: Board) -> list[Line]:
    lines = [Line("Whiteboard", "bold", 1.15)]
    for group, element in enumerate(board.whiteboard):
        style, body = _board_text(element)
        lines.append(Line(shown(element.id, 64), "muted", 0.75, None, group))
        lines += [Line(text, style, 1.0, None, group) for text in body]
    return lines


def _laid(lines: list[Line], size: int, width: int) -> list[tuple[Line, str, int]]:
    out = []
    for line in lines:
        px = max(9, round(size * line.scale))
        out += [(line, text, px) for text in _wrap(line.text, line.style, px, width)]
    return out


def _height(laid: list[tuple[Line, str, int]]) -> int:
    return sum(round(px * 1.45) for _, _, px in laid) + 8 * len({line.group for line, _, _ in laid})


def _card(draw: Any, box: tuple[int, int, int, int], lines: list[Line], border: str) -> None:
    left, top, right, bottom = box
    draw.rounded_rectangle(box, radius=8, outline=border, width=3, fill="#ffffff")
    inner = right - left - 2 * 22 - 26
    for size in SIZES:
        laid = _laid(lines, size, inner)
        if _height(laid) <= bottom - top - 36:
            break
    y, group = top + 18, None
    placed: list[tuple[Line, str, int, int]] = []
    marks: dict[int, tuple[str, int, int]] = {}
    for line, text, px in laid:
        step = round(px * 1.45)
        if line.group != group:
            y += 8 if group is not None else 0
            group = line.group
        if y + step > bottom - 14:
            placed.append((Line("…", "muted"), "…", px, y - step // 3))
            break
        if line.mark is not None:
            first = marks.get(line.group, (line.mark, y, y))
            marks[line.group] = (line.mark, first[1], y + step)
        placed.append((line, text, px, y))
        y += step
    for mark, start, end in marks.values():  # under the text: the spotlight's pale red
        if mark == "spotlight":
            draw.rounded_rectangle((left + 10, start - 4, right - 10, end + 2), radius=6, fill=POINTER_BG,
                                   outline=POINTER, width=3)
    x = left + 22 + 26
    for line, text, px, at in placed:
        face = font("mono" if line.style == "mono" else "bold" if line.style == "bold" else "sans", px)
        color = {"muted": MUTED, "kind": KIND}.get(line.style, INK)
        draw.text((x, at), text, font=face, fill=POINTER if line.mark and line.style == "kind" else color)
    for mark, start, end in marks.values():  # beside the text: the laser's red dot
        if mark == "laser":
            middle = (start + end) // 2
            draw.ellipse((left + 14, middle - 11, left + 38, middle + 13), fill=POINTER_BG, outline=POINTER)
            draw.ellipse((left + 20, middle - 5, left + 32, middle + 7), fill=POINTER)


def render(board: Board, *, heading: str = "") -> bytes:
    """The board as a PNG of :data:`WIDTH` × :data:`HEIGHT`."""
    from PIL import Image, ImageDraw

    image = Image.new("RGB", (WIDTH, HEIGHT), "#ffffff")
    draw = ImageDraw.Draw(image)
    title = shown(heading or board.title or "maic class", 200)
    draw.text((MARGIN, 22), _wrap(title, "bold", 28, WIDTH - 2 * MARGIN)[0], font=font("bold", 28), fill=INK)
    top, bottom = 76, HEIGHT - 28
    cards: list[tuple[list[Line], str]] = []
    if board.slide is not None:
        cards.append((_slide_lines(board), SLIDE_BORDER))
    if board.whiteboard:
        cards.append((_whiteboard_lines(board), BOARD_BORDER))
    if not cards:
        cards.append(([Line("Whiteboard", "bold", 1.15), Line("empty", "muted")], BOARD_BORDER))
    widths = [1.0] if len(cards) == 1 else [0.6, 0.4]
    left = MARGIN
    span = WIDTH - 2 * MARGIN - 24 * (len(cards) - 1)
    for (lines, border), share in zip(cards, widths, strict=True):
        right = left + round(span * share)
        _card(draw, (left, top, right, bottom), lines, border)
        left = right + 24
    out = io.BytesIO()
    image.save(out, format="PNG", optimize=False)
    return out.getvalue()
