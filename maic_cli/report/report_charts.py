"""The charts of ``report.html``, drawn with matplotlib as inline SVG (no network, no script).

Each ``*_chart`` function takes plain data (already pulled out of report.json by
report/report_html.py) and returns one ``<svg>`` element as text, or ``None`` when
there is nothing to draw.  matplotlib is imported inside :func:`render`, so
importing this module (and ``maic --help``) stays light.  matplotlib is optional (the
``report`` extra): without it :func:`render` raises ImportError, the page shows
:data:`NO_CHARTS` where its charts would be, and :func:`available` tells a command so
before it starts (``maic run`` and ``maic report`` say it once on standard error).

Labels come from files and models: mathtext is off (``text.parse_math``), so a
``$`` is a dollar sign and never TeX, and with ``svg.fonttype = none`` every label
is an SVG ``<text>`` that matplotlib XML-escapes.  The output is reproducible: no
date in the metadata, and the ids in each SVG are salted with the chart's name so
that several charts on one page never share an id.
"""

from __future__ import annotations

import importlib
import importlib.util
import io
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

STYLE: dict[str, Any] = {
    "svg.fonttype": "none", "text.parse_math": False, "text.usetex": False,
    "font.family": "sans-serif", "font.sans-serif": ["DejaVu Sans", "Liberation Sans", "Arial"],
    "font.size": 9, "axes.titlesize": 10, "axes.titleweight": "bold", "axes.titlelocation": "left",
    "axes.spines.top": False, "axes.spines.right": False, "axes.edgecolor": "#8c959f",
    "axes.labelcolor": "#1f2328", "text.color": "#1f2328", "xtick.color": "#57606a", "ytick.color": "#57606a",
    "axes.grid": True, "axes.grid.axis": "x", "grid.color": "#eaeef2", "axes.axisbelow": True,
    "legend.frameon": False, "figure.facecolor": "white", "axes.facecolor": "white",
}
PALETTE = ["#0969da", "#cf222e", "#1a7f37", "#9a6700", "#8250df", "#bf3989", "#0a7e8a", "#bc4c00",
           "#57606a", "#6639ba"]
REASON_COLORS = {"cue_user": "#0969da", "end": "#1a7f37", "max_turns": "#9a6700", "empty_turns": "#bc4c00",
                 "aborted": "#8c959f", "error": "#cf222e"}
MAX_DOTS = 300  # dots drawn per row of a box chart
WIDTH = 8.6  # inches: the page's content width at 100 dpi


INSTALL = "pip install 'maic-cli[report]'"  # the extra that brings matplotlib (pyproject.toml)
NO_CHARTS = ('<p class="none" data-missing="charts">No charts here: they are drawn with matplotlib, which is not '
             "installed (or cannot be imported). The tables hold every number. For the charts: "
             f"<code>{INSTALL}</code>, then <code>maic report FOLDER</code> rebuilds this page.</p>")
_import_failed = threading.Event()  # matplotlib was found but could not be imported (a broken install)


def available() -> bool:
    """Whether the charts can be drawn: matplotlib is installed (found without importing it, so a batch knows
    before it starts) and, if an import of it failed in this process, it imports now."""
    try:
        if importlib.util.find_spec("matplotlib") is None:
            return False
    except (ImportError, ValueError):  # a parent that is not a package, or a module without a spec
        return False
    if _import_failed.is_set():
        try:
            importlib.import_module("matplotlib.figure")
        except ImportError:
            return False
        _import_failed.clear()
    return True


@dataclass(frozen=True)
class Estimate:
    """A rate or mean with its 95% interval (``low``/``high`` are ``None`` when there is none)."""

    value: float
    low: float | None = None
    high: float | None = None


ChartJob = tuple[str, tuple[Any, ...]]  # (kind, arguments): one chart as plain data, drawable in another process


def draw_job(job: ChartJob) -> str | None:
    """Draw one chart of :func:`chart jobs <maic_cli.report.report_html.chart_plan>`: its ``<svg>`` or ``None``."""
    kind, args = job
    return CHART_KINDS[kind](*args)


def color_for(index: int) -> str:
    return PALETTE[index % len(PALETTE)]


def render(name: str, draw: Callable[[Any], None], height: float) -> str:
    """Draw on a fresh figure (no pyplot: no global state, no GUI backend) and return its ``<svg>``."""
    try:
        import matplotlib
        from matplotlib.figure import Figure
    except ImportError:
        _import_failed.set()
        raise

    params: Any = {**STYLE, "svg.hashsalt": f"maic-{name}"}
    with matplotlib.rc_context(params):
        figure = Figure(figsize=(WIDTH, max(1.6, height)), layout="constrained")
        draw(figure)
        buffer = io.StringIO()
        figure.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None, "Format": None, "Type": None})
    return inline_svg(buffer.getvalue(), name)


def preload_now() -> None:
    """Import what :func:`render` draws with; without matplotlib, nothing (the report says so when it draws)."""
    try:
        for module in ("matplotlib.figure", "matplotlib.backends.backend_svg"):
            importlib.import_module(module)
    except ImportError:
        _import_failed.set()
    except Exception:  # noqa: BLE001 - broken: the report says so when it draws
        pass


def preload() -> threading.Thread:
    """Import matplotlib in a background thread (its import is most of a chart's cost: about 0.7 s CPU).

    A small batch calls this when it starts (report/chart_worker.py ``prepare``; a big one starts the worker
    instead): its event loop mostly waits on the network, so the import runs in that idle time instead of after the
    last run."""
    thread = threading.Thread(target=preload_now, name="maic-preload-matplotlib", daemon=True)
    thread.start()
    return thread


def inline_svg(document: str, name: str) -> str:
    """The ``<svg>`` element of an SVG file, scaled to the page (its size becomes its viewBox)."""
    start = document.find("<svg")
    svg = document[start:] if start >= 0 else document
    svg = re.sub(r'\s(width|height)="[^"]*"', "", svg[:svg.find(">")], count=2) + svg[svg.find(">"):]
    return svg.replace("<svg", f'<svg class="chart-svg" role="img" aria-label="{name}"', 1)


def stacked_bars_chart(name: str, panels: Sequence[tuple[str, Mapping[str, Mapping[str, int]]]],
                       colors: Mapping[str, str] | None = None, unit: str = "") -> str | None:
    """Stacked horizontal bars, shares of 100%: one bar per group, one segment per category.

    ``panels`` is a list of (title, {group: {category: count}}); empty groups and panels are left out.
    """
    panels = [(title, {g: c for g, c in groups.items() if sum(c.values()) > 0}) for title, groups in panels]
    panels = [(title, groups) for title, groups in panels if groups]
    if not panels:
        return None
    totals: dict[str, int] = {}
    for _, groups in panels:
        for counts in groups.values():
            for category, count in counts.items():
                totals[category] = totals.get(category, 0) + count
    categories = sorted(totals, key=lambda c: (-totals[c], c))
    palette = {c: (colors or {}).get(c) or color_for(i) for i, c in enumerate(categories)}
    rows = [len(groups) for _, groups in panels]

    def draw(figure: Any) -> None:
        from matplotlib.patches import Patch

        axes = figure.subplots(len(panels), 1, squeeze=False, height_ratios=[r + 1.2 for r in rows])[:, 0]
        for ax, (title, groups) in zip(axes, panels, strict=True):
            names = list(groups)[::-1]  # first group on top
            left = [0.0] * len(names)
            for category in categories:
                shares = [100 * groups[g].get(category, 0) / sum(groups[g].values()) for g in names]
                bars = ax.barh(names, shares, left=left, color=palette[category], label=category, height=0.62,
                               edgecolor="white", linewidth=0.6)
                labels = [f"{groups[g].get(category, 0)}" if share >= 7 else "" for g, share in zip(names, shares,
                                                                                                    strict=True)]
                ax.bar_label(bars, labels=labels, label_type="center", color="white", fontsize=8)
                left = [a + b for a, b in zip(left, shares, strict=True)]
            ax.set_xlim(0, 100)
            ax.set_title(title)
            ax.set_xlabel(f"% of {unit}" if unit else "%")
            ax.tick_params(axis="y", length=0)
        handles = [Patch(color=palette[c], label=c) for c in categories]
        figure.legend(handles=handles, loc="outside lower center", ncols=min(len(categories), 6), fontsize=8,
                      handlelength=1.2)

    return render(name, draw, 0.45 + sum(0.3 * r + 0.8 for r in rows) + 0.3 * (1 + len(categories) // 7))


def interval_chart(name: str, title: str, metrics: Mapping[str, Mapping[str, Estimate]],
                   side: tuple[str, Mapping[str, Mapping[str, Estimate]]] | None = None,
                   percent: bool = True) -> str | None:
    """Dots with 95% error bars: one row per metric, one colour per group.

    ``metrics`` is {metric label: {group: Estimate}}; ``side`` an optional second panel on another scale
    (its title and the same shape), e.g. agent turns per round beside the rates.
    """
    metrics = {m: groups for m, groups in metrics.items() if groups}
    if not metrics:
        return None
    groups = list(dict.fromkeys(g for by_group in metrics.values() for g in by_group))
    side_metrics = {m: g for m, g in (side[1] if side else {}).items() if g}

    def draw(figure: Any) -> None:
        if side_metrics and side:
            main, extra = figure.subplots(1, 2, width_ratios=[3, 1])
            _draw_intervals(extra, side_metrics, groups, percent=False)
            extra.set_title(side[0])
            if len(side_metrics) == 1:  # the title names it
                extra.set_yticks([])
        else:
            main = figure.subplots()
        _draw_intervals(main, metrics, groups, percent=percent)
        main.set_title(title)
        handles = [main.errorbar([], [], xerr=[], fmt="o", color=color_for(i), label=g)
                   for i, g in enumerate(groups)]
        figure.legend(handles=handles, loc="outside lower center", ncols=min(len(groups), 4), fontsize=8)

    return render(name, draw, 1.1 + 0.3 * len(metrics) * max(1.0, 0.5 * len(groups)) + 0.25 * len(groups) / 4)


def _draw_intervals(ax: Any, metrics: Mapping[str, Mapping[str, Estimate]], groups: list[str],
                    percent: bool) -> None:
    step = min(0.7 / max(len(groups), 1), 0.22)
    labels = list(metrics)
    for j, group in enumerate(groups):
        offset = (j - (len(groups) - 1) / 2) * step
        points = [(len(labels) - 1 - i + offset, metrics[m][group]) for i, m in enumerate(labels)
                  if group in metrics[m]]
        if not points:
            continue
        scale = 100 if percent else 1
        ys = [y for y, _ in points]
        xs = [e.value * scale for _, e in points]
        below = [(e.value - e.low) * scale if e.low is not None else 0 for _, e in points]
        above = [(e.high - e.value) * scale if e.high is not None else 0 for _, e in points]
        ax.errorbar(xs, ys, xerr=[below, above], fmt="o", color=color_for(j), markersize=5, capsize=3,
                    elinewidth=1.3)
    ax.set_yticks(range(len(labels)), labels[::-1])
    ax.set_ylim(-0.6, len(labels) - 0.4)
    ax.tick_params(axis="y", length=0)
    if percent:
        ax.set_xlim(-3, 103)
        ax.set_xlabel("% (dot: value, bar: 95% interval)")
    else:
        ax.set_xlabel("value (95% interval)")
        ax.margins(x=0.15)


def box_chart(name: str, title: str, samples: Mapping[str, Sequence[float]], unit: str = "s") -> str | None:
    """Box plots (median, quartiles, whiskers at 1.5 IQR) with the values as faint dots, one row per group.

    The boxes are drawn from every value; the dots from at most ``MAX_DOTS`` of a row (every k-th).
    """
    samples = {g: list(v) for g, v in samples.items() if v}
    if not samples:
        return None
    names = list(samples)[::-1]

    def draw(figure: Any) -> None:
        ax = figure.subplots()
        data = [samples[n] for n in names]
        ax.boxplot(data, orientation="horizontal", widths=0.55, showfliers=False, patch_artist=True,
                   boxprops={"facecolor": "#ddf4ff", "edgecolor": "#0969da"},
                   medianprops={"color": "#cf222e", "linewidth": 1.6}, whiskerprops={"color": "#57606a"},
                   capprops={"color": "#57606a"})
        for i, every in enumerate(data, 1):
            values = every[::-(-len(every) // MAX_DOTS)]  # a big batch: every k-th turn, so the page stays light
            jitter = [i + 0.18 * (((k * 7919) % 13) / 12 - 0.5) for k in range(len(values))]  # reproducible
            ax.scatter(values, jitter, s=7, color=color_for(len(names) - i), alpha=0.45, linewidths=0)
        ax.set_yticks(range(1, len(names) + 1), names)
        ax.set_title(title)
        ax.set_xlabel(unit)
        ax.set_xlim(left=0)
        ax.tick_params(axis="y", length=0)

    return render(name, draw, 1.0 + 0.42 * len(names))


CHART_KINDS: dict[str, Callable[..., str | None]] = {"stacked_bars": stacked_bars_chart,
                                                     "interval": interval_chart, "box": box_chart}
