"""One picture of the board (:class:`~.script.Board`) as a slide, and who is speaking, drawn with Pillow.

The frame is a slide: the lesson's name small at the top, the slide's title set as a title with its place
(``2 / 5``), then its elements as a slide sets them (:mod:`.frame_blocks`: bullets, a typeset formula, a table,
code in a monospace block, a picture's description on a captioned picture card, which stand in a column of their
own beside the rest).  The whiteboard is a card beside the slide (or alone).  What the teacher points at is
marked as on the terminal: the spotlight a yellow highlight around the element, the laser a red dot with a ring
beside it.  At the bottom a band shows who is speaking (a disc and a stripe in the agent's colour, the name) and
the sentence being said.  No element id or type is ever drawn.  Text is cleaned; what does not fit is set
smaller, then the slide shows the part around what is pointed at, cut with an ellipsis.

:func:`draw` returns the picture and every text and formula it drew (what tests read back); :func:`render` the
PNG.  Pillow is imported here only (the ``video`` extra).
"""

from __future__ import annotations

import hashlib
import io
from dataclasses import dataclass, field
from typing import Any

from ..engine.models import SlideElement, WhiteboardElement
from ..engine.whiteboard import usable_params
from ..ui.lesson_notes import shown
from . import frame_blocks as blocks
from . import typeset
from .frame_blocks import INK, MUTED, Laid, font
from .script import Board

WIDTH, HEIGHT = 1280, 720
MARGIN = 48
BAND = 112  # the speaker's band at the bottom
BAND_BG, BAND_INK, BAND_MUTED = "#24292f", "#ffffff", "#8c959f"
LEARNER_COLOR = "#8250df"
SPOT_FILL, SPOT_LINE = "#fff8c5", "#d4a72c"  # the spotlight: the terminal's yellow
LASER, LASER_RING = "#cf222e", "#ff8182"
ACCENT = "#0969da"
SIZES = (30, 26, 23, 20, 18, 16, 14, 12)  # body sizes tried, largest first, until the slide fits
GAP = 0.75  # between elements, in body sizes
PALETTE = ("#0969da", "#1a7f37", "#8250df", "#bf3989", "#bc4c00", "#0550ae", "#116329")


@dataclass(frozen=True)
class Speaking:
    """Who is speaking in a frame and what they say (``color``: the agent's, as its persona gives it)."""

    name: str
    text: str
    color: str = ""
    speaker: str = ""


@dataclass
class Drawn:
    image: Any
    texts: list[str] = field(default_factory=list)  # every text drawn, in order
    formulas: list[str] = field(default_factory=list)  # every formula drawn as a typeset picture (its source)


def rgb(color: str, fallback_key: str = "") -> tuple[int, int, int]:
    """A persona's colour (``#4f9dde``, ``cyan``, ``bright_magenta``) as RGB; a stable palette colour if unreadable."""
    from PIL import ImageColor

    name = color.strip().lower().replace("bright_", "").replace("_", "")
    if name and len(name) <= 30:
        try:
            found = ImageColor.getrgb(name)
            return found[0], found[1], found[2]
        except ValueError:
            pass
    digest = hashlib.sha256(fallback_key.encode("utf-8", "replace")).digest()
    found = ImageColor.getrgb(PALETTE[digest[0] % len(PALETTE)])
    return found[0], found[1], found[2]


def _light(color: tuple[int, int, int]) -> bool:
    return 0.299 * color[0] + 0.587 * color[1] + 0.114 * color[2] > 150


class _Canvas:
    def __init__(self, image: Any) -> None:
        from PIL import ImageDraw

        self.image = image
        self.draw = ImageDraw.Draw(image)
        self.drawn = Drawn(image)

    def text(self, xy: tuple[int, int], text: str, style: str, size: int, color: Any) -> None:
        self.draw.text(xy, text, font=font(style, size), fill=color)
        self.drawn.texts.append(text)

    def ops(self, laid: Laid, x: int, y: int) -> None:
        for op in laid.ops:
            kind = op[0]
            if kind == "text":
                self.text((x + op[1], y + op[2]), op[3], op[4], op[5], op[6])
            elif kind == "box":
                (left, top, right, bottom), fill, outline, radius, width = op[1:]
                self.draw.rounded_rectangle((x + left, y + top, x + right, y + bottom), radius=radius, fill=fill,
                                            outline=outline, width=width)
            elif kind == "dot":
                (cx, cy), r, color = op[1:]
                self.draw.ellipse((x + cx - r, y + cy - r, x + cx + r, y + cy + r), fill=color)
            elif kind == "hline":
                (left, top, right), color = op[1:]
                self.draw.line((x + left, y + top, x + right, y + top), fill=color, width=1)
            elif kind == "frame":
                (left, top, right, bottom), color = op[1:]
                self.draw.rectangle((x + left, y + top, x + right, y + bottom), outline=color, width=1)
            elif kind == "image":
                _, dx, dy, picture, width, height, source = op
                scaled = picture.resize((width, height))
                self.image.paste(scaled, (x + dx, y + dy), scaled)
                self.drawn.formulas.append(source)
            elif kind == "art":
                self.art(op[1], tuple(v + (x if i % 2 == 0 else y) for i, v in enumerate(op[2])), op[3])

    def art(self, kind: str, box: tuple[int, ...], color: str) -> None:
        """A drawn stand-in for a picture: a landscape, a play button, bars or shapes."""
        left, top, right, bottom = box
        w, h = right - left, bottom - top
        d = self.draw
        d.rounded_rectangle(box, radius=8, fill="#dde3ea")
        if kind == "video":
            r = min(w, h) // 4
            cx, cy = left + w // 2, top + h // 2
            d.ellipse((cx - r, cy - r, cx + r, cy + r), fill=color)
            d.polygon([(cx - r // 3, cy - r // 2), (cx - r // 3, cy + r // 2), (cx + r // 2, cy)], fill="#ffffff")
        elif kind == "chart":
            for i, share in enumerate((0.45, 0.7, 0.55, 0.85)):
                bar = left + w * (0.18 + i * 0.17)
                d.rectangle((bar, bottom - h * share * 0.8 - h * 0.08, bar + w * 0.11, bottom - h * 0.08), fill=color)
        elif kind == "shape":
            d.ellipse((left + w * 0.2, top + h * 0.2, left + w * 0.5, top + h * 0.8), fill=color)
            d.rectangle((left + w * 0.55, top + h * 0.3, left + w * 0.8, top + h * 0.7), fill="#b6c2d2")
        else:
            d.ellipse((right - w * 0.3, top + h * 0.14, right - w * 0.3 + h * 0.24, top + h * 0.38), fill="#f2cc60")
            d.polygon([(left, bottom), (left + w * 0.35, top + h * 0.4), (left + w * 0.6, bottom)], fill=color)
            d.polygon([(left + w * 0.38, bottom), (left + w * 0.68, top + h * 0.55), (right, bottom)], fill="#b6c2d2")


def _fit(items: list[Any], lay: Any, width: int, height: int, pointed: int | None) -> tuple[list[Laid], int, int]:
    """The elements laid out at the largest size that fits (``lay(item, width, size, limit)``); at the smallest,
    the window from the element pointed at if it would be below the cut.  Returns them, the first shown, the size."""
    for size in SIZES:
        gap = round(size * GAP)
        laid: list[Laid] = []
        used = 0
        for item in items:
            one = lay(item, width, size, height - used)
            laid.append(one)
            used += one.height + gap
            if one.cut or used - gap > height:
                break
        else:
            return laid, 0, size
    size = SIZES[-1]
    start = 0
    if pointed is not None and pointed >= len(laid) - 1:
        start = pointed
    out, used = [], 0
    for item in items[start:]:
        one = lay(item, width, size, height - used)
        out.append(one)
        used += one.height + round(size * GAP)
        if one.cut or used > height:
            break
    return out, start, size


def _pointer(canvas: _Canvas, mark: str, box: tuple[int, int, int, int], *, inside: bool = False) -> None:
    """The spotlight's highlight around ``box``; the laser's dot beside it (``inside``: on its corner, where a
    column beside another has no margin)."""
    left, top, right, bottom = box
    if mark == "spotlight":
        canvas.draw.rounded_rectangle((left - 14, top - 8, right + 10, bottom + 4), radius=10, fill=SPOT_FILL,
                                      outline=SPOT_LINE, width=4)
    else:
        cy = top + min(24, max(8, (bottom - top) // 2))
        cx = left + 26 if inside else left - 24
        canvas.draw.ellipse((cx - 19, cy - 19, cx + 19, cy + 19), outline=LASER_RING, width=3)
        canvas.draw.ellipse((cx - 12, cy - 12, cx + 12, cy + 12), fill="#ffd8d3")
        canvas.draw.ellipse((cx - 7, cy - 7, cx + 7, cy + 7), fill=LASER)


def _column(canvas: _Canvas, elements: list[SlideElement], box: tuple[int, int, int, int], board: Board, *,
            side: bool = False) -> None:
    left, top, right, bottom = box
    marks = {board.spotlight: "spotlight", board.laser: "laser"}
    pointed = next((i for i, e in enumerate(elements) if e.id in marks and e.id is not None), None)
    laid, start, size = _fit(elements, blocks.element, right - left, bottom - top, pointed)
    y = top
    if start:
        canvas.text((left, top - round(size * 1.1)), "…", "sans", size, MUTED)
    placed = []
    for element, one in zip(elements[start:], laid, strict=False):
        placed.append((element, one, y))
        y += one.height + round(size * GAP)
    for element, one, at in placed:  # the spotlight under the text
        if marks.get(element.id) == "spotlight":
            _pointer(canvas, "spotlight", (left, at, right, at + one.height))
    for _, one, at in placed:
        canvas.ops(one, left, at)
    for element, one, at in placed:  # the laser over it
        if marks.get(element.id) == "laser" and element.id != board.spotlight:
            _pointer(canvas, "laser", (left, at, right, at + one.height), inside=side)
    if placed and (placed[-1][1].cut or start + len(placed) < len(elements)):
        canvas.text((left, min(bottom, y) - 4), "…", "bold", size, MUTED)


def _slide(canvas: _Canvas, board: Board, box: tuple[int, int, int, int]) -> None:
    assert board.slide is not None
    elements = board.slide.elements[:40]
    left, top, right, bottom = box
    pictures = [e for e in elements if e.type in blocks.PICTURES]
    rest = [e for e in elements if e.type not in blocks.PICTURES]
    if pictures and rest and right - left > 700:
        split = right - round((right - left) * 0.34)
        _column(canvas, rest, (left, top, split - 36, bottom), board)
        _column(canvas, pictures, (split, top, right, bottom), board, side=True)
    else:
        _column(canvas, elements, box, board)


def _board_element(item: WhiteboardElement, width: int, size: int, limit: int) -> Laid:
    p = usable_params(item)
    if p is None:
        return blocks.paragraph("(unreadable)", width, size, limit, "italic", MUTED)
    if item.kind == "text":
        return blocks.paragraph(shown(p.get("content", "")), width, size, limit)
    if item.kind == "latex":
        return blocks.formula(str(p.get("latex", "")), width, size, limit)
    if item.kind == "code":
        return blocks.code([shown(line.text, 200) for line in item.lines[:60]], width, size, limit,
                           str(p.get("language") or ""))
    if item.kind == "table":
        return blocks.table([[str(c) for c in row] for row in p.get("data", [])], width, size, limit)
    if item.kind == "chart":
        return _chart(p, width, size, limit)
    if item.kind == "shape":
        return blocks.picture("shape", shown(p.get("label") or p.get("shape") or "shape", 200), width, size, limit)
    arrow = "→" if p.get("arrow") else "—"
    return blocks.paragraph(f"{arrow} {shown(p.get('label', ''), 200)}".strip(), width, size, limit)


def _chart(p: dict[str, Any], width: int, size: int, limit: int) -> Laid:
    laid = blocks.paragraph(shown(p.get("title") or "Chart", 100), width, size, limit, "bold")
    labels, series = p.get("labels", [])[:12], p.get("series", [])[:4]
    peak = max((abs(v) for s in series for v in s.get("values", [])), default=1.0) or 1.0
    px = max(10, round(size * 0.8))
    label_width = round(width * 0.3)
    for i, label in enumerate(labels):
        for number, s in enumerate(series):
            values = s.get("values", [])
            if i >= len(values) or laid.height + px * 1.5 > limit:
                continue
            laid.text(0, laid.height, shown(label, 20), "sans", px, MUTED)
            bar = max(2, round(abs(values[i]) / peak * (width - label_width - 60)))
            laid.box((label_width, laid.height + 3, label_width + bar, laid.height + px), PALETTE[number], None, 2)
            laid.text(label_width + bar + 6, laid.height, f"{values[i]:g}", "sans", px, INK)
            laid.height += round(px * 1.5)
    return laid


def _whiteboard(canvas: _Canvas, board: Board, box: tuple[int, int, int, int]) -> None:
    left, top, right, bottom = box
    canvas.draw.rounded_rectangle(box, radius=12, fill="#ffffff", outline="#d0d7de", width=2)
    canvas.text((left + 20, top + 14), "Whiteboard", "bold", 22, INK)
    items = list(board.whiteboard)
    if not items:
        canvas.text((left + 20, top + 56), "(empty)", "italic", 18, MUTED)
        return
    laid, _, size = _fit(items, _board_element, right - left - 40, bottom - top - 76, None)
    y = top + 60
    for one in laid:
        canvas.ops(one, left + 20, y)
        y += one.height + round(size * GAP)


def _band(canvas: _Canvas, speaking: Speaking | None, heading: str) -> None:
    top = HEIGHT - BAND
    canvas.draw.rectangle((0, top, WIDTH, HEIGHT), fill=BAND_BG)
    if speaking is None:
        canvas.text((MARGIN, top + (BAND - 22) // 2), shown(heading, 120), "sans", 20, BAND_MUTED)
        return
    color = rgb(speaking.color or (LEARNER_COLOR if speaking.speaker == "learner" else ""),
                speaking.speaker or speaking.name)
    canvas.draw.rectangle((0, top, WIDTH, top + 6), fill=color)
    r, cx, cy = 30, MARGIN + 30, top + 6 + (BAND - 6) // 2
    canvas.draw.ellipse((cx - r, cy - r, cx + r, cy + r), fill=color)
    name = shown(speaking.name, 60) or "?"
    initial = name[0].upper()
    face = font("bold", 28)
    canvas.draw.text((cx, cy), initial, font=face, fill="#1f2328" if _light(color) else "#ffffff", anchor="mm")
    x = cx + r + 22
    canvas.text((x, top + 16), name, "bold", 21, color if sum(color) > 200 else BAND_INK)  # a dark colour: white
    text = shown(speaking.text, 600)
    for size, most in ((23, 2), (20, 3)):
        lines = blocks.wrap(text, "sans", size, WIDTH - x - MARGIN, most=most + 1)
        if len(lines) <= most:
            break
    if len(lines) > most:
        lines = lines[:most]
        lines[-1] = lines[-1].rstrip(" .,;") + "…"
    for number, line in enumerate(lines):
        canvas.text((x, top + 46 + number * round(size * 1.3)), line, "sans", size, BAND_INK)


def draw(board: Board, *, heading: str = "", speaking: Speaking | None = None) -> Drawn:
    """The frame: the slide and the whiteboard as they are on ``board``, ``speaking`` in the band."""
    from PIL import Image

    typeset.new_frame()
    canvas = _Canvas(Image.new("RGB", (WIDTH, HEIGHT), "#ffffff"))
    lesson = shown(heading or board.title or "maic class", 200)
    canvas.text((MARGIN, 16), blocks.wrap(lesson, "sans", 17, WIDTH - 2 * MARGIN - 120, most=1)[0], "sans", 17, MUTED)
    if board.number and board.total:
        place = f"{board.number} / {board.total}"
        canvas.text((WIDTH - MARGIN - round(blocks._width("sans", 17, place)), 16), place, "sans", 17, MUTED)
    title = shown(board.slide.title, 200) if board.slide is not None else "Whiteboard" if board.whiteboard else ""
    top = 48
    if title:
        width = WIDTH - 2 * MARGIN
        size = 40 if blocks._width("bold", 40, title) <= width else 32
        lines = blocks.wrap(title, "bold", size, width, most=2)
        for number, line in enumerate(lines):
            canvas.text((MARGIN, top + number * round(size * 1.2)), line, "bold", size, INK)
        top += len(lines) * round(size * 1.2) + 8
        canvas.draw.rectangle((MARGIN, top, MARGIN + 72, top + 5), fill=ACCENT)
        top += 28
    box = (MARGIN + 20, top, WIDTH - MARGIN, HEIGHT - BAND - 20)
    if board.slide is not None and board.whiteboard:
        split = box[0] + round((box[2] - box[0]) * 0.6)
        _slide(canvas, board, (box[0], box[1], split - 24, box[3]))
        _whiteboard(canvas, board, (split, box[1] - 8, box[2], box[3]))
    elif board.slide is not None:
        _slide(canvas, board, box)
    elif board.whiteboard:
        _whiteboard(canvas, board, (MARGIN, box[1] - 8, box[2], box[3]))
    else:
        canvas.text((MARGIN, top + 40), "The board is empty.", "italic", 26, MUTED)
    _band(canvas, speaking, lesson)
    return canvas.drawn


def render(board: Board, *, heading: str = "", speaking: Speaking | None = None) -> bytes:
    """The frame as a PNG of :data:`WIDTH` × :data:`HEIGHT`."""
    out = io.BytesIO()
    draw(board, heading=heading, speaking=speaking).image.save(out, format="PNG", compress_level=1)
    return out.getvalue()
