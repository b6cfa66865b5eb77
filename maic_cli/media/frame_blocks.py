"""The elements of a slide or a whiteboard laid out as a slide sets them, for :mod:`.frames`: drawing operations
in a box of a given width, at a given type size.

A title is the frame's; here are the bodies: a paragraph, bullets that hang under their first word, a formula
typeset (:mod:`.typeset`) or else written, a table with its header row shaded, code in a grey monospace block,
a picture's description as a captioned picture card (an image, a video, a chart, a shape).  No element's id or
type is ever written.  Layout is linear: each word is measured once per font (cached), and laying out stops as
soon as the box's height is passed (``limit``), so a slide of megabytes costs what fits on the screen.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import cache, lru_cache
from typing import Any

from ..engine.models import SlideElement
from ..ui.latex import latex_to_unicode
from ..ui.lesson_notes import MAX_COLUMNS, MAX_ITEMS, shown
from .typeset import BASE_PX, formula_image

INK, MUTED, ACCENT = "#1f2328", "#57606a", "#0969da"
CODE_BG, CODE_BORDER, TABLE_HEAD, TABLE_LINE = "#f6f8fa", "#d0d7de", "#ddf4ff", "#d0d7de"
CARD_BG, CARD_ART = "#eef2f7", "#9aa7b8"
PICTURES = ("image", "video", "chart", "shape")
MAX_LINES = 400  # lines laid out of one element, whatever its size
FONT_FILES = {  # tried in order; Pillow's own font if none is there
    "sans": ("DejaVuSans.ttf", "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", "Arial.ttf"),
    "bold": ("DejaVuSans-Bold.ttf", "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf", "Arial Bold.ttf"),
    "italic": ("DejaVuSans-Oblique.ttf", "/usr/share/fonts/truetype/dejavu/DejaVuSans-Oblique.ttf",
               "Arial Italic.ttf"),
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


@lru_cache(maxsize=200_000)
def _width(style: str, size: int, word: str) -> float:
    return float(font(style, size).getlength(word))


def _pieces(word: str, style: str, size: int, width: int) -> list[str]:
    """A word wider than the box, cut into pieces that fit."""
    out: list[str] = []
    while word:
        count = max(1, min(len(word), int(len(word) * width / max(1.0, _width(style, size, word)))))
        while count > 1 and _width(style, size, word[:count]) > width:
            count = max(1, count * 9 // 10)
        out.append(word[:count])
        word = word[count:]
    return out


def wrap(text: str, style: str, size: int, width: int, most: int = MAX_LINES) -> list[str]:
    """``text`` in lines no wider than ``width`` (each word measured once), at most ``most`` lines."""
    space = _width(style, size, " ")
    lines: list[str] = []
    for paragraph in text.split("\n"):
        words: list[str] = []
        used = 0.0
        for word in paragraph.split(" "):
            for piece in _pieces(word, style, size, width) if _width(style, size, word) > width else [word]:
                wide = _width(style, size, piece)
                if words and used + space + wide > width:
                    lines.append(" ".join(words))
                    if len(lines) >= most:
                        return lines
                    words, used = [], 0.0
                used += (space if words else 0.0) + wide
                words.append(piece)
        lines.append(" ".join(words))
        if len(lines) >= most:
            return lines
    return lines


@dataclass
class Laid:
    """An element laid out: its height and what to draw, at offsets from its top-left corner."""

    height: int = 0
    ops: list[tuple[Any, ...]] = field(default_factory=list)
    cut: bool = False  # more than ``limit`` was asked for: the rest is not drawn

    def text(self, x: int, y: int, text: str, style: str, size: int, color: str = INK) -> None:
        self.ops.append(("text", x, y, text, style, size, color))

    def box(self, box: tuple[int, int, int, int], fill: str | None, outline: str | None = None,
            radius: int = 6, width: int = 1) -> None:
        self.ops.append(("box", box, fill, outline, radius, width))


def _line_step(size: int) -> int:
    return round(size * 1.35)


def paragraph(text: str, width: int, size: int, limit: int, style: str = "sans", color: str = INK) -> Laid:
    laid = Laid()
    step = _line_step(size)
    for line in wrap(text, style, size, width, most=max(1, limit // step + 1)):
        if laid.height + step > limit:
            laid.cut = True
            break
        laid.text(0, laid.height, line, style, size, color)
        laid.height += step
    return laid


def bullets(items: list[str], width: int, size: int, limit: int) -> Laid:
    laid = Laid()
    step, indent = _line_step(size), round(size * 1.3)
    for item in items[:MAX_ITEMS]:
        lines = wrap(shown(item, 400), "sans", size, width - indent, most=max(1, limit // step + 1))
        if laid.height + step > limit:
            laid.cut = True
            break
        dot = max(4, size // 4)
        middle = laid.height + round(size * 0.62)
        laid.ops.append(("dot", (round(size * 0.35), middle), dot, ACCENT))
        for line in lines:
            if laid.height + step > limit:
                laid.cut = True
                return laid
            laid.text(indent, laid.height, line, "sans", size)
            laid.height += step
        laid.height += round(size * 0.3)
    return laid


def formula(source: str, width: int, size: int, limit: int) -> Laid:
    """Typeset when it can be (an image op), else the source as readable text."""
    image = formula_image(shown(source, 400))
    if image is None:
        return paragraph(latex_to_unicode(shown(source, 400)), width, round(size * 1.2), limit, "italic")
    scale = min(size * 1.8 / BASE_PX, width / image.width, 1.0)
    height = max(1, round(image.height * scale))
    laid = Laid(height=height + round(size * 0.3))
    laid.ops.append(("image", 0, round(size * 0.15), image, max(1, round(image.width * scale)), height,
                     shown(source, 400)))
    return laid


def code(lines: list[str], width: int, size: int, limit: int, language: str = "") -> Laid:
    px = max(10, round(size * 0.8))
    step = round(px * 1.4)
    laid = Laid(height=round(px * 0.8))
    shown_lines: list[str] = []
    for line in lines[:MAX_ITEMS]:
        for part in wrap(line.expandtabs(4), "mono", px, width - 2 * px, most=8):
            shown_lines.append(part)
    for line in shown_lines:
        if laid.height + step + px > limit:
            laid.cut = True
            break
        laid.text(px, laid.height, line, "mono", px)
        laid.height += step
    laid.height += round(px * 0.8)
    laid.ops.insert(0, ("box", (0, 0, width, laid.height), CODE_BG, CODE_BORDER, 8, 1))
    if language:
        small = max(9, round(px * 0.75))
        label = shown(language, 20)
        laid.text(width - round(_width("sans", small, label)) - px // 2, 4, label, "sans", small, MUTED)
    return laid


def table(rows: list[list[str]], width: int, size: int, limit: int) -> Laid:
    cells = [[" ".join(shown(cell, 80).split()) for cell in row[:MAX_COLUMNS]] for row in rows[:MAX_ITEMS]]
    if not cells:
        return paragraph("(empty table)", width, size, limit, "italic", MUTED)
    px = max(10, round(size * 0.85))
    count = max(len(row) for row in cells)
    cells = [row + [""] * (count - len(row)) for row in cells]
    pad = round(px * 0.6)
    wants = [max(_width("bold" if r == 0 else "sans", px, row[i]) for r, row in enumerate(cells[:40])) + 2 * pad + 4
             for i in range(count)]
    total = sum(wants)
    widths = [round(w * min(1.0, width / total)) for w in wants] if total else [width // count] * count
    laid = Laid()
    for number, row in enumerate(cells):
        style = "bold" if number == 0 else "sans"
        wrapped = [wrap(cell, style, px, max(8, widths[i] - 2 * pad), most=4) for i, cell in enumerate(row)]
        high = max(len(lines) for lines in wrapped) * round(px * 1.3) + pad
        if laid.height + high > limit:
            laid.cut = True
            break
        if number == 0:
            laid.box((0, laid.height, sum(widths), laid.height + high), TABLE_HEAD, None, 0)
        x = 0
        for i, lines in enumerate(wrapped):
            for j, line in enumerate(lines):
                laid.text(x + pad, laid.height + pad // 2 + j * round(px * 1.3), line, style, px)
            x += widths[i]
        laid.height += high
        laid.ops.append(("hline", (0, laid.height, sum(widths)), TABLE_LINE))
    laid.ops.append(("frame", (0, 0, sum(widths), laid.height), TABLE_LINE))
    return laid


def picture(kind: str, caption: str, width: int, size: int, limit: int) -> Laid:
    """A picture card: a drawn stand-in for the picture (a landscape, a play button, bars, a shape) over its
    description, as a figure and its caption."""
    art = min(round(width * 0.42), max(60, round(size * 5)))
    px = max(10, round(size * 0.8))
    words = paragraph(caption, width - 2 * px, px, max(px, limit - art - 2 * px), "italic", MUTED)
    laid = Laid(height=art + words.height + 2 * px, cut=words.cut)
    laid.box((0, 0, width, laid.height), CARD_BG, CODE_BORDER, 10, 1)
    laid.ops.append(("art", kind, (px, px, width - px, art), CARD_ART))
    laid.ops += [(op[0], op[1] + px, op[2] + art + round(px * 1.4), *op[3:]) for op in words.ops]
    return laid


def element(item: SlideElement, width: int, size: int, limit: int) -> Laid:
    """One slide element, as a slide shows it."""
    if item.type == "bullets":
        return bullets(item.items, width, size, limit)
    if item.type == "formula":
        return formula(item.content, width, size, limit)
    if item.type == "code":
        return code([shown(line, 240) for line in item.content.splitlines()[:MAX_ITEMS]], width, size, limit,
                    item.language or "")
    if item.type == "table":
        return table(item.rows, width, size, limit)
    if item.type in PICTURES:
        return picture(item.type, " ".join(shown(item.content, 600).split()) or item.type, width, size, limit)
    return paragraph(shown(item.content, 2000), width, size, limit)
