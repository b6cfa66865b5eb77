"""``report.html``: a batch report for people who would rather look than read — one self-contained page.

The summary tables, then charts (report/report_charts.py, inline SVG): who speaks how
often, end reasons, routing rates with their 95% intervals, judge scores when the
report has them, and turn latencies; then the comparisons and the runs.  Nothing
is loaded from anywhere (no script, font or stylesheet), and the page's Content
Security Policy forbids it.  Every string from a file or a model is cleaned and
HTML-escaped.  A batch with nothing to chart (no rounds, no latencies) gets a line
saying so instead of an empty chart.  Without matplotlib (the optional ``report`` extra) the page
keeps its tables and says, where its charts would be, how to get them.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..replies.sanitize import replace_surrogates
from ..untrusted import clean
from . import report_data as data
from .batch_report import BatchReport, ComparedMetric, GroupSummary, Intervals, MeanEntry, Point, RateEntry
from .report_charts import MAX_DOTS, NO_CHARTS, REASON_COLORS, ChartJob, draw_job
from .report_tutoring_html import tutoring_html

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;max-width:64rem;margin:1.5rem auto;padding:0 1rem;
color:#1f2328;background:#fff;line-height:1.45}
h1{font-size:1.6rem;margin-bottom:.2rem}h2{font-size:1.2rem;margin-top:2rem;border-bottom:1px solid #d0d7de}
h3{font-size:1rem;margin:1rem 0 .3rem}.meta{color:#57606a;font-size:.85rem;margin:0}.meta span{margin-right:1rem}
.scroll{overflow-x:auto}table{border-collapse:collapse;font-size:.82rem;margin:.4rem 0}td,th{border-bottom:1px
solid #d0d7de;padding:.25rem .5rem;text-align:right;white-space:nowrap}th{background:#f6f8fa;white-space:normal;
vertical-align:bottom}td:first-child,th:first-child{text-align:left;white-space:normal;min-width:9rem;
max-width:20rem;overflow-wrap:anywhere}.ci{color:#57606a;font-size:.75rem}
.charts{display:grid;gap:1rem}figure.chart{margin:0;border:1px solid #d0d7de;border-radius:6px;padding:.5rem}
figcaption{color:#57606a;font-size:.8rem;margin-top:.2rem}svg.chart-svg{width:100%;height:auto;display:block}
.none{color:#57606a;font-style:italic}.noise{color:#1a7f37;font-weight:600}.fail{color:#cf222e}
table.runs td,table.runs th{white-space:normal;text-align:left}table.runs td:first-child{word-break:normal;
overflow-wrap:anywhere}details{margin:.6rem 0}summary{cursor:pointer;font-weight:600}
.note{font-size:.8rem;color:#57606a}
"""
OPEN_RUNS = 12  # the runs table starts open when some failed, unless it is long
SUMMARY_GROUPS = (("by_model", "By model"), ("by_prompts", "By prompt set"), ("by_director", "By director policy"),
                  ("by_scenario", "By scenario"))


def _e(text: object) -> str:
    return html.escape(clean(replace_surrogates(str(text))))


def _breakable(text: str) -> str:
    """Escaped text that may wrap after a ``/`` (a model's file path in a narrow column)."""
    return _e(text).replace("/", "/<wbr>")


def _num(value: object, digits: int = 2) -> str:
    return f"{value:.{digits}f}" if isinstance(value, int | float) and not isinstance(value, bool) else "–"


def _rate(entry: RateEntry | None) -> str:
    """``62% [41–79%]`` (the interval when the report has one)."""
    found = data.estimate(entry)
    if found is None:
        return "–"
    text = f"{found.value:.0%}"
    if found.low is not None and found.high is not None:
        text += f' <span class="ci">[{found.low:.0%}, {found.high:.0%}]</span>'
    return text


def _amount(value: float) -> str:
    """A number as wide as it needs: ``12,707``, ``2.56``, ``0.127``."""
    size = abs(value)
    return f"{value:,.0f}" if size >= 100 else f"{value:.2f}" if size >= 1 or size == 0 else f"{value:.3f}"


def _mean(entry: MeanEntry | Point | None) -> str:
    found = data.estimate(entry)
    if found is None:
        return "–"
    text = _amount(found.value)
    if found.low is not None and found.high is not None:
        text += f' <span class="ci">[{_amount(found.low)}, {_amount(found.high)}]</span>'
    return text


SUMMARY_COLUMNS = ("runs", "passed", "errors", "rounds", "agent turns", "turns per round", "cue-user rate",
                   "repeated speaker", "turn p50 / p95 s", "tokens", "cost")


def summary_row(name: str, s: GroupSummary) -> str:
    intervals = s.intervals or Intervals()
    cells = [_e(s.runs), _e(s.passed), _e(s.errors), _e(s.rounds), _e(s.agent_turns),
             _mean(intervals.means.get("agent_turns_per_round")), _rate(intervals.rates.get("cue_user_rate")),
             _rate(intervals.rates.get("repeated_speaker_rate")),
             f"{_num(s.turn_latency_p50)} / {_num(s.turn_latency_p95)}", _e(s.total_tokens),
             f"${_num(s.total_cost, 4)}"]
    return f"<tr><td>{_breakable(name)}</td>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>"


def summary_tables(report: BatchReport) -> str:
    parts = []
    for key, title in SUMMARY_GROUPS:
        groups = report.grouping(key)
        if not groups or (key != "by_model" and len(groups) < 2 and key != "by_scenario"):
            continue
        head = "".join(f"<th>{c}</th>" for c in ("name", *SUMMARY_COLUMNS))
        rows = "".join(summary_row(k, v) for k, v in groups.items())
        parts.append(f'<h3>{title}</h3><div class="scroll"><table class="summary"><thead><tr>{head}</tr>'
                     f"</thead><tbody>{rows}</tbody></table></div>")
    return "".join(parts)


@dataclass(frozen=True)
class PlannedChart:
    """One chart of the page: what to draw (plain data: it may be drawn in another process), its caption,
    and the line shown instead when there is nothing to draw."""

    name: str
    job: ChartJob
    caption: str
    missing: str


def chart_plan(report: BatchReport, results: Sequence[data.RunLike]) -> list[PlannedChart]:
    """Every chart the page shows, in order, not drawn yet."""
    plan: list[PlannedChart] = []

    def add(name: str, kind: str, args: tuple[Any, ...], caption: str, missing: str) -> None:
        plan.append(PlannedChart(name, (kind, (name, *args)), caption, missing))

    add("speakers", "stacked_bars", ([("Who speaks how often", dict(data.speaker_counts(report)))], None,
                                     "agent turns"),
        "Share of agent turns by speaker (numbers: turns).", "Who speaks how often: no agent turns in this batch.")
    add("end_reasons", "stacked_bars", (data.end_reason_panels(report), REASON_COLORS, "rounds"),
        "Share of rounds by end reason (numbers: rounds).", "How rounds end: no rounds in this batch.")
    for name, groups in data.compared_groupings(report):
        slug = name.replace(" ", "_")
        rates = data.routing_metrics(groups, data.ROUTING_RATES, "rates")
        means = data.routing_metrics(groups, data.ROUTING_MEANS, "means")
        add(f"routing_{slug}", "interval", (f"Routing rates by {name}", rates, ("Turns per round", means)),
            "Dot: the value; bar: its 95% interval (none under two runs).", "Routing rates: no rounds to measure.")
        shares, scores = data.judge_metrics(groups, data.judge_labels(report))
        if shares or scores:
            side = (next(iter(scores)) if len(scores) == 1 else "Means", scores)
            add(f"judge_{slug}", "interval", (f"Judge scores by {name}", shares, side) if shares
                else (f"Judge scores by {name}", scores, None, False),
                "Share of judged turns (or rounds) that meet each criterion, and the means; dot: the value, "
                "bar: its 95% interval.", "Judge scores: none.")
    add("latency", "box", ("Agent turn latency", data.turn_latencies(report, results)),
        "Seconds from the end of the previous turn (or the round's start) to the end of the turn; box: quartiles "
        f"and median, whiskers: 1.5 × IQR, dots: the turns (at most {MAX_DOTS} a row).", "Turn latency: none recorded.")
    return plan


def charts(report: BatchReport, results: Sequence[data.RunLike],
           drawn: Sequence[str | None] | None = None) -> list[tuple[str, str | None, str]]:
    """(name, svg or None, caption or what is missing) of every chart the page shows; ``drawn``: their
    ``<svg>`` already drawn elsewhere (report/chart_worker.py), in the plan's order."""
    plan = chart_plan(report, results)
    svgs = list(drawn) if drawn is not None and len(drawn) == len(plan) else [draw_job(c.job) for c in plan]
    return [(c.name, svg, c.caption if svg else c.missing) for c, svg in zip(plan, svgs, strict=True)]


def charts_html(report: BatchReport, results: Sequence[data.RunLike],
                drawn: Sequence[str | None] | None = None) -> str:
    try:
        found = charts(report, results, drawn)
    except ImportError:
        return NO_CHARTS
    parts = []
    for name, svg, caption in found:
        if svg is None:
            parts.append(f'<p class="none" data-missing="{_e(name)}">{_e(caption)}</p>')
        else:
            parts.append(f'<figure class="chart" data-chart="{_e(name)}">{svg}'
                         f"<figcaption>{_e(caption)}</figcaption></figure>")
    return '<div class="charts">' + "".join(parts) + "</div>"


def comparisons_html(report: BatchReport) -> str:
    parts = []
    for key, title in data.GROUPINGS:
        for pair in getattr(report.comparisons, key):
            rows = "".join(_comparison_row(m) for m in pair.metrics)
            parts.append(f"<h3>{_e(title)}: {_e(pair.a)} vs {_e(pair.b)}</h3>"
                         '<div class="scroll"><table class="comparison"><thead><tr><th>metric</th><th>first</th>'
                         "<th>second</th><th>difference [95%]</th><th>verdict</th></tr></thead>"
                         f"<tbody>{rows}</tbody></table></div>")
    if not parts:
        return ""
    return ("<h2>Comparisons</h2><p class=\"note\">Differences are first − second; a difference is larger than "
            "the noise when its 95% interval leaves out zero.</p>" + "".join(parts))


def _comparison_row(m: ComparedMetric) -> str:
    css = ' class="noise"' if m.verdict == "larger than the noise" else ""
    difference = _mean(Point(value=m.difference, low=m.low, high=m.high))
    first, second = _mean(Point(value=m.a)), _mean(Point(value=m.b))
    return (f"<tr><td>{_e(m.metric.replace('_', ' '))}</td><td>{first}</td>"
            f"<td>{second}</td><td>{difference}</td><td{css}>{_e(m.verdict)}</td></tr>")


def runs_html(report: BatchReport) -> str:
    runs = report.runs
    rows = []
    for run in runs:
        speakers = " / ".join(" → ".join(seq) or "–" for seq in run.speaker_sequence) or "–"
        status = _e(run.status) + ("" if run.passed else ' <span class="fail">✗</span>')
        problems = "; ".join(run.failures) or (run.error or "")
        rows.append(f"<tr><td>{_e(run.run_id)}</td><td>{status}</td><td>{_e(speakers)}</td>"
                    f"<td>{_e(', '.join(run.end_reasons) or '–')}</td>"
                    f"<td>{_num(run.duration)}</td><td>{_e(problems)}</td></tr>")
    failing = sum(1 for r in runs if not r.passed)
    opened = " open" if failing and len(runs) <= OPEN_RUNS else ""
    return (f"<details{opened}><summary>{len(runs)} runs ({failing} not passed)</summary>"
            '<div class="scroll"><table class="runs"><thead><tr><th>run</th><th>status</th><th>speakers per round</th>'
            "<th>end reasons</th><th>duration s</th><th>failures</th></tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table></div></details>")


def report_html(report: BatchReport, results: Sequence[data.RunLike] = (),
                drawn: Sequence[str | None] | None = None) -> str:
    """The whole page (a ``<!doctype html>`` document) for a report built by report/reports.py;
    ``drawn``: the charts of :func:`chart_plan`, when another process drew them."""
    meta_html = "".join(f"<span>{_e(k)}: {_e(v)}</span>" for k, v in report.meta.items())
    methods = report.statistics.model_dump()
    method_html = "; ".join(f"{_e(k).replace('_', ' ')}: {_e(v)}" for k, v in methods.items())
    return ("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>maic run report</title><style>{CSS}</style></head><body>"
            f'<h1>maic run report</h1><p class="meta">{meta_html}</p>'
            f"<h2>Summary</h2>{summary_tables(report)}"
            '<p class="note">Rates and means show their 95% interval in brackets when a group has two runs or '
            "more (maic run --repeat K).</p>"
            f"<h2>Charts</h2>{charts_html(report, results, drawn)}{tutoring_html(report)}"
            f"{comparisons_html(report)}<h2>Runs</h2>{runs_html(report)}"
            f'<p class="note">Statistics — {method_html}</p></body></html>\n')

