"""The whiteboard panel (and the door to the slide panel): pure functions of the store state.

Text as text, LaTeX as its source with simple symbols in Unicode, tables as
tables, charts as labelled bar charts, lines and arrows, code with syntax
highlighting and its stable line ids.  Every string from the model goes
through :func:`clean` and into a :class:`Text`, never into markup.

Elements are untrusted (a stored session may hold anything): every value is
shown through :func:`as_text`, containers are checked, numbers must be finite,
and each element is cut to what a panel can show.  The live board renders only
the newest elements that fit, and keeps each one's rendered lines until it
changes, so a refresh costs the visible screen, not the size of the board.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from typing import Any

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.panel import Panel
from rich.segment import Segment
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from ..engine.models import StoreState, WhiteboardElement
from ..untrusted import clean
from .latex import latex_to_unicode
from .slide_view import render_slide as _render_slide

BAR_WIDTH = 18
MAX_ROWS = 60  # the most lines of one element any panel shows
MAX_LINE = 240  # the most characters of one line kept for display
MAX_COLUMNS = 12


def as_text(value: Any, limit: int = 80) -> str:
    """A short, clean string for any value a model or a file supplied (never raises).

    Only strings and plain numbers are shown; containers and other objects
    become ``…`` (their ``str`` can be huge or recurse without end)."""
    if isinstance(value, str):
        text = value
    elif value is None or isinstance(value, bool):
        text = str(value)
    elif isinstance(value, int):
        text = str(value) if value.bit_length() <= 128 else "…"
    elif isinstance(value, float):
        text = f"{value:g}"
    else:
        text = "…"
    return clean(text[:limit]) + ("…" if len(text) > limit else "")


def _list(value: Any, limit: int) -> list[Any]:
    return value[:limit] if isinstance(value, list) else []


def _num(value: Any) -> float:
    """A finite number for a bar's length; anything else counts as 0."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return 0.0
    try:
        number = float(value)
    except (ValueError, OverflowError):
        return 0.0
    return number if math.isfinite(number) else 0.0


def _chart(params: dict[str, Any], rows: int) -> RenderableType:
    labels = [as_text(label, 40) for label in _list(params.get("labels"), rows)]
    series = [s for s in _list(params.get("series"), rows) if isinstance(s, dict)]
    values = [_list(s.get("values"), rows) for s in series]
    peak = max((abs(_num(v)) for vals in values for v in vals), default=0.0) or 1.0
    grid = Table.grid(padding=(0, 1))
    grid.add_column(no_wrap=True)
    grid.add_column(no_wrap=True)
    for index, label in enumerate(labels or [""]):
        for s, vals in zip(series, values, strict=True):
            if index >= len(vals) or len(grid.rows) >= rows:
                continue
            value = _num(vals[index])
            name = f"{label} · {as_text(s.get('name', ''), 40)}" if len(series) > 1 else label
            bar = "█" * max(1, round(abs(value) / peak * BAR_WIDTH)) if value else ""
            grid.add_row(Text(name), Text(f"{bar} {as_text(vals[index], 20)}", style="cyan"))
    title = as_text(params.get("title") or params.get("chartType") or "chart")
    return Group(Text(title, style="bold"), grid)


def _table(params: dict[str, Any], rows_shown: int) -> RenderableType:
    rows = [r for r in _list(params.get("data"), rows_shown) if isinstance(r, list)]
    if not rows:
        return Text("(empty table)", style="dim")
    columns = rows[0][:MAX_COLUMNS]
    table = Table(show_header=True, header_style="bold", padding=(0, 1))
    for header in columns:
        table.add_column(Text(as_text(header, 40)))
    for row in rows[1:]:
        table.add_row(*(Text(as_text(cell, 40)) for cell in row[: len(columns)]))
    return table


def _code(element: WhiteboardElement, params: dict[str, Any], rows: int) -> RenderableType:
    language = as_text(params.get("language") or "text", 20)
    lines = element.lines[:rows]
    ids = Text("\n".join(line.id[:8] for line in lines), style="dim")
    code = Syntax("\n".join(clean(line.text[:MAX_LINE]) for line in lines), language,
                  theme="ansi_dark", word_wrap=False, background_color="default")
    grid = Table.grid(padding=(0, 1))
    grid.add_column(no_wrap=True)
    grid.add_column()
    grid.add_row(ids, code)
    more = Text(f"… {len(element.lines) - rows} more lines", style="dim") if len(element.lines) > rows else ""
    name = params.get("fileName")
    return Group(Text(as_text(name) if name else language, style="bold"), grid, more)


def _shape(params: dict[str, Any]) -> Text:
    shape = as_text(params.get("shape", "shape"), 20)
    icon = {"circle": "◯", "rectangle": "▭", "triangle": "△"}.get(shape, "◇")
    label = as_text(params.get("label") or "")
    return Text(f"{icon} {shape}" + (f": {label}" if label else ""))


def _line(params: dict[str, Any]) -> Text:
    def point(x: str, y: str) -> str:
        return f"({as_text(params.get(x, '?'), 12)},{as_text(params.get(y, '?'), 12)})"

    arrow = "──▶" if params.get("arrow", params.get("style") == "arrow") else "───"
    label = as_text(params.get("label") or "")
    return Text(f"{point('startX', 'startY')} {arrow} {point('endX', 'endY')}" + (f"  {label}" if label else ""))


def render_element(element: WhiteboardElement, rows: int = MAX_ROWS) -> RenderableType:
    """One element, at most about ``rows`` lines of it (what a panel can show)."""
    p = element.params if isinstance(element.params, dict) else {}
    chars = rows * MAX_LINE
    tag = Text(f"{as_text(element.id, 40)} ", style="dim")
    if element.kind == "text":
        body: RenderableType = Text(as_text(p.get("content", ""), chars))
    elif element.kind == "latex":
        body = Text(latex_to_unicode(as_text(p.get("latex", ""), chars)), style="italic")
    elif element.kind == "chart":
        body = _chart(p, rows)
    elif element.kind == "table":
        body = _table(p, rows)
    elif element.kind == "code":
        body = _code(element, p, rows)
    elif element.kind == "shape":
        body = _shape(p)
    else:
        body = _line(p)
    if isinstance(body, Text):
        return Text.assemble(tag, body)
    return Group(tag, body)


def _version(element: WhiteboardElement) -> tuple[Any, ...]:
    """Changes whenever the reducer changes the element: a code edit always moves
    ``next_line`` or the line count; every other action makes a new element."""
    return (element.id, element.kind, id(element.params), len(element.lines), element.next_line)


class _RenderedElements:
    """Rendered lines of board elements, newest last, kept per (element, version, width, rows).

    The entry holds the element itself, so its ``id()`` cannot be reused while cached."""

    def __init__(self, size: int = 128) -> None:
        self.size = size
        self._entries: OrderedDict[tuple[int, int, int], tuple[WhiteboardElement, tuple[Any, ...],
                                                               list[list[Segment]]]] = OrderedDict()

    def lines(self, console: Console, options: ConsoleOptions, element: WhiteboardElement,
              rows: int) -> list[list[Segment]]:
        key = (id(element), options.max_width, rows)
        version = _version(element)
        entry = self._entries.get(key)
        if entry is not None and entry[0] is element and entry[1] == version:
            self._entries.move_to_end(key)
            return entry[2]
        lines = console.render_lines(render_element(element, rows), options.update(height=None), pad=False)
        self._entries[key] = (element, version, lines)
        if len(self._entries) > self.size:
            self._entries.popitem(last=False)
        return lines


RENDERED = _RenderedElements()


class BoardElements:
    """The newest elements that fit in the height given, oldest of them first; only those
    are rendered (and each is rendered once per change, then taken from :data:`RENDERED`)."""

    def __init__(self, elements: list[WhiteboardElement], limit: int) -> None:
        self.elements = elements
        self.limit = limit

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        height = options.height
        rows = min(MAX_ROWS, height) if height else MAX_ROWS
        blocks: list[list[list[Segment]]] = []  # newest first
        used = 0
        for element in reversed(self.elements[-self.limit:]):
            lines = RENDERED.lines(console, options, element, rows)
            if blocks and height and used + len(lines) > height - 1:  # a line stays free for the note
                break
            blocks.append(lines)
            used += len(lines)
        picked: list[list[Segment]] = []
        earlier = len(self.elements) - len(blocks)
        if earlier:
            note = Text(f"… {earlier} earlier elements", style="dim")
            picked = console.render_lines(note, options.update(height=None), pad=False)
        for lines in reversed(blocks):
            picked.extend(lines)
        for line in picked[:height] if height else picked:
            yield from line
            yield Segment.line()


def render_whiteboard(store: StoreState, *, limit: int = 8) -> Panel:
    elements = store.whiteboard
    title = "Whiteboard" + ("" if store.whiteboard_open else " (closed)")
    if not elements:
        return Panel(Text("empty", style="dim"), title=title, border_style="dim")
    return Panel(BoardElements(elements, limit), title=title,
                 border_style="white" if store.whiteboard_open else "dim")


def render_slide(store: StoreState, *, limit: int = 200) -> Panel | None:
    """The slide panel (drawn by :mod:`.slide_view`)."""
    return _render_slide(store, limit=limit)
