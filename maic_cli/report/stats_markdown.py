"""report.md's tables of the intervals and comparisons report/report_stats.py computes, and the line that
says how they were computed."""

from __future__ import annotations

from typing import Any

from .report_stats import CONFIDENCE, MEAN_LABELS, METHODS, MIN_RUNS, RATE_LABELS


def _num(value: float | None) -> str:
    return "–" if value is None else f"{value:.4g}"


def with_interval(entry: dict[str, Any]) -> str:
    if entry["low"] is None:
        return _num(entry["value"])
    return f"{_num(entry['value'])} [{_num(entry['low'])}, {_num(entry['high'])}]"


def cell(text: str) -> str:
    return text.replace("\n", " ").replace("|", "\\|")


def intervals_markdown(title: str, groups: dict[str, dict[str, Any]]) -> list[str]:
    """A table of every rate and mean (rows) by group (columns), each with its interval."""
    names = list(groups)
    lines = [f"### {title}", "", "| metric | " + " | ".join(cell(n) for n in names) + " |",
             "|---|" + "---|" * len(names)]
    for kind, labels in (("rates", RATE_LABELS), ("means", MEAN_LABELS)):
        for metric, label in labels.items():
            cells = [with_interval(groups[n]["intervals"][kind][metric]) for n in names]
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return [*lines, ""]


def comparisons_markdown(title: str, pairs: list[dict[str, Any]],
                         labels: dict[str, str] | None = None) -> list[str]:
    """A table per pair; ``labels`` names metrics defined elsewhere (the judge's)."""
    lines: list[str] = []
    for pair in pairs:
        a, b = cell(pair["a"]), cell(pair["b"])
        lines += [f"### {title}: {a} vs {b}", "", f"| metric | {a} | {b} | difference [95%] | method | verdict |",
                  "|---|---|---|---|---|---|"]
        for m in pair["metrics"]:
            label = RATE_LABELS.get(m["metric"]) or MEAN_LABELS.get(m["metric"]) or \
                (labels or {}).get(m["metric"], m["metric"])
            difference = with_interval({**m, "value": m["difference"]})
            lines.append(f"| {label} | {_num(m['a'])} | {_num(m['b'])} | {difference} | {m['method']} "
                         f"| {m['verdict']} |")
        lines.append("")
    return lines


def methods_markdown() -> list[str]:
    return [f"Intervals are {CONFIDENCE:.0%}. Rates: {METHODS['rates']} (round rates count each round as a "
            "trial; rounds of one run are not fully independent, so those intervals are somewhat narrow). "
            f"Means (computed per run, then averaged over runs): {METHODS['means']}. "
            f"Groups of fewer than {MIN_RUNS} runs have no interval (`maic run --repeat K`).", ""]
