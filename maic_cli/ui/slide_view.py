"""The slide panel: the current slide, every element with its id, the spotlight and the laser.

Each element is drawn by its type — text, bullets (one line per item), a formula
(simple LaTeX in Unicode), code (monospace, its language named, highlighted by
Rich's ``Syntax``, which reads no markup), a table, an image (its alt text, marked
as an image) — beside its id, so the learner sees what the teacher points at.
The spotlighted element is marked ``▶`` with a ``┃`` bar down all its lines and its text
reversed; the laser's ``✦`` and ``┊`` in red — visible without colour too.  A panel
narrower than ``STACK_BELOW`` puts each body under its id instead of beside it.

A slide taller than the space given shows the window around the element pointed
at, with ``… n lines above`` / ``… n lines below`` notes, never a line cut in two.
Everything comes from a lesson file, a transcript or a model: strings are
cleaned and built into ``Text`` (never markup).
"""

from __future__ import annotations

from collections import OrderedDict

from rich import box
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.panel import Panel
from rich.segment import Segment
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from ..engine.models import Slide, SlideElement, StoreState
from .latex import latex_to_unicode
from .lesson_notes import MAX_COLUMNS, MAX_ITEMS, element_lines, shown, slide_heading

SPOTLIGHT, LASER = "▶", "✦"
SPOTLIGHT_STYLE, LASER_STYLE = "bold reverse", "bold red"
MAX_ELEMENTS = 200
MAX_TAG = 18  # columns for an element's id; a longer id ends in "…"
STACK_BELOW = 44  # a panel narrower than this shows each body under its id, not beside it
_LANGUAGE = frozenset("abcdefghijklmnopqrstuvwxyz0123456789+#-_.")


def _code(element: SlideElement) -> RenderableType:
    language = shown(element.language or "text", 20).lower()
    lexer = language if set(language) <= _LANGUAGE else "text"
    code = Syntax("\n".join(element_lines(element)), lexer, theme="ansi_dark", word_wrap=True,
                  background_color="default")
    return Group(Text(f"code · {language}", style="dim"), code)


def _table(element: SlideElement) -> RenderableType:
    rows = [[shown(cell, 80) for cell in row[:MAX_COLUMNS]] for row in element.rows[:MAX_ITEMS]]
    if not rows:
        return Text("(empty table)", style="dim")
    table = Table(box=box.SQUARE, show_header=True, header_style="bold", padding=(0, 1))
    for header in rows[0] + [""] * (max(map(len, rows)) - len(rows[0])):
        table.add_column(Text(header), overflow="fold")
    for row in rows[1:]:
        table.add_row(*(Text(cell) for cell in row))
    return table


def _bullets(element: SlideElement, style: str) -> RenderableType:
    """One line per item, a wrapped item hanging under its first word."""
    if not element.items:
        return Text("(no items)", style="dim")
    grid = Table.grid(padding=(0, 1))
    grid.add_column(no_wrap=True, width=1)
    grid.add_column(ratio=1)
    for item in element.items[:MAX_ITEMS]:
        grid.add_row("•", Text(shown(item, 400), style=style))
    if len(element.items) > MAX_ITEMS:
        grid.add_row("", Text(f"… {len(element.items) - MAX_ITEMS} more", style="dim"))
    return grid


def element_body(element: SlideElement, style: str = "") -> RenderableType:
    """One element's content, drawn by its type (``style``: the spotlight's, for text bodies)."""
    if element.type == "code":
        return _code(element)
    if element.type == "table":
        return _table(element)
    if element.type == "bullets":
        return _bullets(element, style)
    if element.type == "formula":
        return Text(latex_to_unicode(shown(element.content)), style=f"italic {style}".strip())
    if element.type in ("image", "video", "chart", "shape"):
        return Text.assemble((f"[{element.type}] ", "bold magenta"), Text(shown(element.content), style=style))
    return Text(shown(element.content), style=style)


def tag_width(elements: list[SlideElement]) -> int:
    """One width for every id on the slide (so the bodies line up), at most ``MAX_TAG``."""
    return min(MAX_TAG, max((len(shown(e.id, 64)) + 2 for e in elements), default=2))


def pointer_of(element: SlideElement, store: StoreState) -> tuple[str, str, str]:
    """(first-line marker, marker of the lines below, style) for the spotlight, the laser or neither."""
    if element.id == store.spotlight:
        return SPOTLIGHT, "┃", "bold yellow"
    if element.id == store.laser:
        return LASER, "┊", "bold red"
    return " ", " ", "dim"


def element_row(element: SlideElement, store: StoreState, width: int = MAX_TAG,
                stacked: bool = False) -> RenderableType:
    """The id and the body beside it — or, ``stacked`` (a narrow panel), the body on the lines
    below; the pointer's marker column is added by :func:`marked_lines`."""
    mark_style = pointer_of(element, store)[2]
    style = {SPOTLIGHT: SPOTLIGHT_STYLE, LASER: LASER_STYLE}.get(pointer_of(element, store)[0], "")
    tag = Text(f"[{shown(element.id, 64)}]", style=mark_style, overflow="ellipsis", no_wrap=True)
    if stacked:
        return Group(tag, element_body(element, style))
    row = Table.grid(padding=(0, 1))
    row.add_column(no_wrap=True, width=width)
    row.add_column(ratio=1)
    row.add_row(tag, element_body(element, style))
    return row


def marked_lines(console: Console, options: ConsoleOptions, element: SlideElement, store: StoreState,
                 width: int, stacked: bool) -> list[list[Segment]]:
    """The element's lines behind a marker column: ``▶`` then ``┃`` down the whole spotlighted
    element, ``✦`` then ``┊`` down the laser's, so the pointer shows even without colour."""
    first, rest, style = pointer_of(element, store)
    body = options.update(width=max(1, options.max_width - 2), height=None)
    lines = console.render_lines(element_row(element, store, width, stacked), body, pad=False)
    marker_style = console.get_style(style)
    return [[Segment(f"{first if number == 0 else rest} ", marker_style), *line]
            for number, line in enumerate(lines)]


def window(total: int, height: int, focus: int) -> tuple[int, int]:
    """Which lines [start, end) of ``total`` to show in ``height`` lines, with ``focus`` in view;
    a line is kept for a note above when start > 0 and one below when end < total."""
    if total <= height:
        return 0, total
    if height < 3:
        return 0, max(0, height - 1)
    start = min(focus, total - (height - 1))
    if start <= 0:
        return 0, height - 1
    if start + height - 1 >= total:
        return total - (height - 1), total
    return start, start + height - 2


class _RenderedSlides:
    """The lines of a slide's elements and where the pointed element starts, kept per
    (slide, spotlight, laser, width): a refresh then costs the window, not a re-highlight.

    The entry holds the slide itself, so its ``id()`` cannot be reused while cached;
    slides are replaced, never edited, when a lesson opens."""

    def __init__(self, size: int = 16) -> None:
        self.size = size
        self._entries: OrderedDict[tuple[object, ...], tuple[Slide, list[list[Segment]], int]] = OrderedDict()

    def lines(self, console: Console, options: ConsoleOptions, store: StoreState, slide: Slide,
              elements: list[SlideElement]) -> tuple[list[list[Segment]], int]:
        key = (id(slide), len(elements), store.spotlight, store.laser, options.max_width, options.ascii_only)
        entry = self._entries.get(key)
        if entry is not None and entry[0] is slide:
            self._entries.move_to_end(key)
            return entry[1], entry[2]
        lines: list[list[Segment]] = []
        whole = options.update(height=None)
        focus = 0
        pointed = store.spotlight or store.laser
        width = tag_width(elements)
        stacked = options.max_width < STACK_BELOW
        for element in elements:
            if element.id == pointed:
                focus = len(lines)
            lines += marked_lines(console, whole, element, store, width, stacked)
        self._entries[key] = (slide, lines, focus)
        if len(self._entries) > self.size:
            self._entries.popitem(last=False)
        return lines, focus


RENDERED = _RenderedSlides()


class SlideBody:
    """The slide's elements, as many lines as fit, around the element pointed at."""

    def __init__(self, store: StoreState, slide: Slide, elements: list[SlideElement]) -> None:
        self.store = store
        self.slide = slide
        self.elements = elements

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        lines, focus = RENDERED.lines(console, options, self.store, self.slide, self.elements)
        whole = options.update(height=None)
        height = options.height or len(lines)
        start, end = window(len(lines), height, focus)
        shown_lines: list[list[Segment]] = []
        if start:
            shown_lines += console.render_lines(Text(f"… {start} lines above", style="dim"), whole, pad=False)[:1]
        shown_lines += lines[start:end]
        if end < len(lines) and height >= 1:
            shown_lines += console.render_lines(Text(f"… {len(lines) - end} lines below", style="dim"), whole,
                                                pad=False)[:1]
        for line in shown_lines[:height]:
            yield from line
            yield Segment.line()


def render_slide(store: StoreState, *, limit: int = MAX_ELEMENTS) -> Panel | None:
    """The current slide in a panel titled ``Slide i/n: title`` (None without slides)."""
    slide: Slide | None = store.slide
    if slide is None:
        return None
    number = min(max(store.current_slide, 0), len(store.slides) - 1) + 1
    elements = slide.elements[:min(limit, MAX_ELEMENTS)]
    body: RenderableType = SlideBody(store, slide, elements) if elements else Text("(empty slide)", style="dim")
    return Panel(body, title=Text(slide_heading(slide, number, len(store.slides)), style="bold"),
                 title_align="left", border_style="blue")
