"""The whiteboard and slide panels: pure functions of the store state.

Text as text, LaTeX as its source with simple symbols in Unicode, tables as
tables, charts as labelled bar charts, lines and arrows, code with syntax
highlighting and its stable line ids.  Every string from the model goes
through :func:`clean` and into a :class:`Text`, never into markup.
"""

from __future__ import annotations

import re
from typing import Any

from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from ..engine.models import StoreState, WhiteboardElement
from .text import clean

_LATEX_SYMBOLS = {
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε", "theta": "θ", "lambda": "λ",
    "mu": "μ", "nu": "ν", "pi": "π", "rho": "ρ", "sigma": "σ", "tau": "τ", "phi": "φ", "omega": "ω",
    "Delta": "Δ", "Sigma": "Σ", "Omega": "Ω", "Pi": "Π", "times": "×", "cdot": "·", "pm": "±", "div": "÷",
    "leq": "≤", "le": "≤", "geq": "≥", "ge": "≥", "neq": "≠", "ne": "≠", "approx": "≈", "infty": "∞",
    "rightarrow": "→", "to": "→", "leftarrow": "←", "Rightarrow": "⇒", "sum": "Σ", "prod": "Π", "int": "∫",
    "partial": "∂", "nabla": "∇", "propto": "∝", "in": "∈", "forall": "∀", "exists": "∃", "sqrt": "√",
    "degree": "°", "circ": "°", "ldots": "…", "cdots": "⋯", "quad": " ", "left": "", "right": "",
}
_SUPERSCRIPT = str.maketrans("0123456789+-=()n", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ⁿ")
_SUBSCRIPT = str.maketrans("0123456789+-=()", "₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎")
_FRAC = re.compile(r"\\frac\{([^{}]*)\}\{([^{}]*)\}")
_COMMAND = re.compile(r"\\([A-Za-z]+)")
_SCRIPT = re.compile(r"([\^_])(\{([0-9+\-=()n]+)\}|([0-9n]))")
BAR_WIDTH = 18


def latex_to_unicode(source: str) -> str:
    text = _FRAC.sub(r"(\1)/(\2)", source)
    text = _COMMAND.sub(lambda m: _LATEX_SYMBOLS.get(m.group(1), m.group(0)), text)

    def script(match: re.Match[str]) -> str:
        body = match.group(3) or match.group(4)
        return body.translate(_SUPERSCRIPT if match.group(1) == "^" else _SUBSCRIPT)

    return _SCRIPT.sub(script, text)


def _num(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return 0.0


def _chart(params: dict[str, Any]) -> RenderableType:
    labels = [clean(str(label)) for label in params.get("labels") or []]
    series = [s for s in params.get("series") or [] if isinstance(s, dict)]
    values = [_num(v) for s in series for v in s.get("values") or []]
    peak = max((abs(v) for v in values), default=0.0) or 1.0
    grid = Table.grid(padding=(0, 1))
    grid.add_column(no_wrap=True)
    grid.add_column(no_wrap=True)
    for index, label in enumerate(labels or [""]):
        for s in series:
            vals = s.get("values") or []
            if index >= len(vals):
                continue
            value = _num(vals[index])
            name = f"{label} · {clean(str(s.get('name', '')))}" if len(series) > 1 else label
            bar = "█" * max(1, round(abs(value) / peak * BAR_WIDTH)) if value else ""
            grid.add_row(Text(name), Text(f"{bar} {value:g}", style="cyan"))
    title = clean(str(params.get("title") or params.get("chartType") or "chart"))
    return Group(Text(title, style="bold"), grid)


def _table(params: dict[str, Any]) -> RenderableType:
    rows = [r for r in params.get("data") or [] if isinstance(r, list)]
    if not rows:
        return Text("(empty table)", style="dim")
    table = Table(show_header=True, header_style="bold", padding=(0, 1))
    for header in rows[0]:
        table.add_column(Text(clean(str(header))))
    for row in rows[1:]:
        table.add_row(*(Text(clean(str(cell))) for cell in row[: len(rows[0])]))
    return table


def _code(element: WhiteboardElement) -> RenderableType:
    language = clean(str(element.params.get("language") or "text"))
    ids = Text("\n".join(line.id for line in element.lines), style="dim")
    code = Syntax("\n".join(clean(line.text) for line in element.lines), language,
                  theme="ansi_dark", word_wrap=False, background_color="default")
    grid = Table.grid(padding=(0, 1))
    grid.add_column(no_wrap=True)
    grid.add_column()
    grid.add_row(ids, code)
    name = element.params.get("fileName")
    return Group(Text(clean(str(name)) if name else language, style="bold"), grid)


def _shape(params: dict[str, Any]) -> Text:
    shape = clean(str(params.get("shape", "shape")))
    icon = {"circle": "◯", "rectangle": "▭", "triangle": "△"}.get(shape, "◇")
    label = clean(str(params.get("label") or ""))
    return Text(f"{icon} {shape}" + (f": {label}" if label else ""))


def _line(params: dict[str, Any]) -> Text:
    start = f"({params.get('startX', '?')},{params.get('startY', '?')})"
    end = f"({params.get('endX', '?')},{params.get('endY', '?')})"
    arrow = "──▶" if params.get("arrow", params.get("style") == "arrow") else "───"
    label = clean(str(params.get("label") or ""))
    return Text(f"{start} {arrow} {end}" + (f"  {label}" if label else ""))


def render_element(element: WhiteboardElement) -> RenderableType:
    p = element.params
    tag = Text(f"{element.id} ", style="dim")
    if element.kind == "text":
        body: RenderableType = Text(clean(str(p.get("content", ""))))
    elif element.kind == "latex":
        body = Text(latex_to_unicode(clean(str(p.get("latex", "")))), style="italic")
    elif element.kind == "chart":
        body = _chart(p)
    elif element.kind == "table":
        body = _table(p)
    elif element.kind == "code":
        body = _code(element)
    elif element.kind == "shape":
        body = _shape(p)
    else:
        body = _line(p)
    if isinstance(body, Text):
        return Text.assemble(tag, body)
    return Group(tag, body)


def render_whiteboard(store: StoreState, *, limit: int = 8) -> Panel:
    elements = store.whiteboard
    title = "Whiteboard" + ("" if store.whiteboard_open else " (closed)")
    if not elements:
        return Panel(Text("empty", style="dim"), title=title, border_style="dim")
    shown = elements[-limit:]
    parts: list[RenderableType] = []
    if len(elements) > len(shown):
        parts.append(Text(f"… {len(elements) - len(shown)} earlier elements", style="dim"))
    parts.extend(render_element(e) for e in shown)
    return Panel(Group(*parts), title=title, border_style="white" if store.whiteboard_open else "dim")


def render_slide(store: StoreState) -> Panel | None:
    slide = store.slide
    if slide is None:
        return None
    lines = []
    for element in slide.elements:
        marker, style = "  ", ""
        if element.id == store.spotlight:
            marker, style = "▶ ", "bold reverse"
        elif element.id == store.laser:
            marker, style = "✦ ", "bold red"
        content = clean(element.content)
        if element.type == "formula":
            content = latex_to_unicode(content)
        lines.append(Text.assemble(marker, Text(f"[{element.id}] ", style="dim"), Text(content, style=style)))
    title = f"Slide {store.current_slide + 1}/{len(store.slides)}: {clean(slide.title)}"
    return Panel(Group(*lines) if lines else Text("(empty)", style="dim"), title=title, border_style="blue")
