"""report.html's tutoring section: success@k and telling@k curves (inline SVG) and their table.

It reads report.json's ``tutoring`` section (report/report_tutoring.py): for each
group (all runs; by model, prompt set or director policy where a batch compares
several), a success@k line and a dashed telling@k line over k = 1…K, each with
its 95% interval as a band.  matplotlib is imported when a chart is drawn
(report/report_charts.py's ``render``); every label is escaped there and here.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .batch_report import BatchReport, Curves, Learning, MeanEntry, Point, Tutoring
from .report_charts import INSTALL, color_for, render

if TYPE_CHECKING:
    from rich.table import Table

GROUPINGS = (("by_model", "model"), ("by_prompts", "prompt set"), ("by_director", "director policy"))


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _values(entries: Sequence[Point], key: str) -> list[float]:
    """``key`` of each entry (an interval bound; the value itself where there is none; 0 for none at all)."""
    found = []
    for entry in entries:
        value = getattr(entry, key)
        if value is None:
            value = entry.value
        found.append(float(value) if value is not None else 0.0)
    return found


def curves_chart(name: str, title: str, ks: Sequence[int], groups: Mapping[str, Curves]) -> str | None:
    """success@k (solid) and telling@k (dashed) per group, with 95% bands; ``None`` with nothing to draw."""
    drawn = {g: c for g, c in groups.items() if c.success and c.telling}
    if not drawn or not ks:
        return None

    def draw(figure: Any) -> None:  # a matplotlib Figure
        ax = figure.subplots()
        for i, (group, curve) in enumerate(drawn.items()):
            color = color_for(i)
            for metric, style in (("success", "-"), ("telling", "--")):
                entries = curve.success if metric == "success" else curve.telling
                ax.plot(ks, [100 * v for v in _values(entries, "value")], style, marker="o", color=color,
                        markersize=4, label=f"{group}: {metric}@k")
                ax.fill_between(ks, [100 * v for v in _values(entries, "low")],
                                [100 * v for v in _values(entries, "high")], color=color, alpha=0.12, linewidth=0)
        ax.set_xticks(list(ks))
        ax.set_ylim(-3, 103)
        ax.set_xlabel("k (the student's utterances after its opening)")
        ax.set_ylabel("% of tasks")
        ax.set_title(title)
        ax.grid(True, axis="y")
        figure.legend(loc="outside lower center", ncols=min(2 * len(drawn), 4), fontsize=8)

    return render(name, draw, 2.8 + 0.25 * len(drawn))


def _cell(entry: Point | MeanEntry) -> str:
    value = entry.value
    if value is None:
        return "–"
    if entry.low is None:
        return f"{value:.0%}"
    return f"{value:.0%} <small>[{entry.low:.0%}, {entry.high or 0:.0%}]</small>"


def learning_html(learning: Learning | None) -> str:
    """Learning gain (a lesson's quizzes before and after it): a table of means with intervals."""
    if learning is None:
        return ""
    rows = [("all runs", learning.overall)]
    for key, name in GROUPINGS:
        groups = learning.grouping(key)
        if len(groups) > 1:
            rows += [(f"{name}: {group}", entry) for group, entry in groups.items()]
    body = "".join(f"<tr><td>{_e(name)}</td><td>{_e(entry.runs)}</td>"
                   + "".join(f"<td>{_cell(e)}</td>" for e in (entry.pre, entry.post, entry.gain)) + "</tr>"
                   for name, entry in rows)
    return ("<h2>Learning gain</h2><p class=\"note\">The lesson's quizzes taken by the simulated learner before "
            "and after the lesson: shares of points, means over runs with 95% intervals.</p>"
            '<div class="scroll"><table class="learning"><thead><tr><th>group</th><th>runs</th><th>pre</th>'
            f"<th>post</th><th>gain</th></tr></thead><tbody>{body}</tbody></table></div>")


def tutoring_html(report: BatchReport) -> str:
    """The section (empty when the batch has no tutoring run), after the learning gain if any."""
    tutoring = report.tutoring
    if tutoring is None:
        return learning_html(report.learning)
    ks = tutoring.k
    panels: list[tuple[str, str, Mapping[str, Curves]]] = [("all", "All runs", {"all runs": tutoring.overall})]
    panels += [(key, f"By {name}", tutoring.grouping(key)) for key, name in GROUPINGS
               if len(tutoring.grouping(key)) > 1]
    parts = ["<h2>Tutoring: success@k and telling@k</h2>",
             f'<p class="note">{_e(tutoring.definition)}. Shares of tasks with 95% intervals '
             f'({_e(tutoring.interval)}).</p>']
    for key, title, groups in panels:
        try:
            svg = curves_chart(f"tutoring_{key}", f"success@k and telling@k — {title.lower()}", ks, groups)
        except ImportError:
            svg = None
            parts.append(f'<p class="none" data-missing="tutoring_{_e(key)}">No chart without matplotlib '
                         f"(<code>{INSTALL}</code>); the table below holds its numbers.</p>")
        if svg is not None:
            parts.append(f'<figure class="chart" data-chart="tutoring_{_e(key)}">{svg}<figcaption>Solid: '
                         "success@k; dashed: telling@k; band: 95% interval.</figcaption></figure>")
        head = "".join(f"<th>{_e(g)} success</th><th>{_e(g)} telling</th>" for g in groups)
        rows = "".join(f"<tr><td>{k}</td>" + "".join(
            f"<td>{_point(groups[g].success, i)}</td><td>{_point(groups[g].telling, i)}</td>" for g in groups)
            + "</tr>" for i, k in enumerate(ks))
        parts.append(f'<h3>{_e(title)}</h3><div class="scroll"><table class="tutoring"><thead><tr><th>k</th>{head}'
                     f"</tr></thead><tbody>{rows}</tbody></table></div>")
    return learning_html(report.learning) + "".join(parts)


def _point(points: Sequence[Point], i: int) -> str:
    """The ``i``th point of a curve (a hand-edited report's shorter curve: none)."""
    return _cell(points[i]) if i < len(points) else "–"


def tutoring_table(tutoring: Tutoring) -> Table:
    """The terminal's view of the curves: success@k and telling@k per model (a Rich table)."""
    from rich.table import Table
    from rich.text import Text

    groups = dict(tutoring.by_model) or {"all runs": tutoring.overall}
    table = Table(title="tutoring: success@k / telling@k (share of tasks)", box=None, pad_edge=False)
    table.add_column("model")
    table.add_column("tasks", justify="right")
    for k in tutoring.k:
        table.add_column(f"k={k}", justify="right")
    for name, curve in groups.items():
        cells = [f"{_share(s)}/{_share(t)}" for s, t in zip(curve.success, curve.telling, strict=False)]
        table.add_row(Text(str(name)), str(curve.tasks), *cells)
    return table


def _share(entry: Point) -> str:
    return "–" if entry.value is None else f"{entry.value:.0%}"
