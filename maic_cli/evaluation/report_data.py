"""What the charts of ``report.html`` show, pulled out of report.json (and the runs' turn latencies).

Pure data: no matplotlib, no HTML.  Runs are told apart by their *configuration*:
the model, prompt set and director policy, naming only those that vary in the
batch (the model when none does).  Groupings (by model, prompt set, policy) are
charted when they hold two groups or more — the comparisons a batch was run for —
else the one by model.

Judge scores are found wherever a judge section sits in a group of the report
(``JUDGE_PATHS``): any mapping inside it with a numeric ``value`` (or ``mean``) is a
score, with ``low``/``high`` as its interval when present; the keys on the way name
it.  A report without one has no judge chart.

A chart draws at most :data:`MAX_SHOWN` rows, bars or stacked parts: the largest ones, then one
"others" for the rest (a crafted batch with 40,000 speakers or models draws 13, not 40,000, and
no step here grows faster than the number of runs and turns).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol, TypeVar

from ..replies.sanitize import replace_surrogates
from ..untrusted import clean, one_line, redactor
from .report_charts import Estimate

GROUPINGS = (("by_model", "model"), ("by_prompts", "prompt set"), ("by_director", "director policy"))
DIMENSIONS = ("model", "prompts", "director")
ROUTING_RATES = {"cue_user_rate": "cue-user rate (rounds)", "repeated_speaker_rate": "repeated speaker (rounds)",
                 "same_role_in_a_row_rate": "same role twice in a row", "second_greeting_rate": "second greeting",
                 "corrected_round_rate": "director correction", "empty_turn_rate": "empty turns",
                 "pass_rate": "pass rate (runs)"}
ROUTING_MEANS = {"agent_turns_per_round": "agent turns per round"}
MAX_LABEL = 40
MAX_SHOWN = 12  # rows, bars or stacked parts a chart draws; the rest are summed as "others"
K = TypeVar("K")
V = TypeVar("V")


class RoundLike(Protocol):
    @property
    def turn_latencies(self) -> Sequence[float]: ...


class RunLike(Protocol):
    """What the latency chart reads of a run result (evaluation/run_results.py ``RunResult``)."""

    @property
    def model(self) -> str: ...
    @property
    def prompts(self) -> str: ...
    @property
    def director(self) -> str: ...
    @property
    def rounds(self) -> Sequence[RoundLike]: ...


def safe_text(value: object) -> str:
    """One clean line without API keys (as report.json's strings are)."""
    return redactor()(one_line(clean(replace_surrogates(str(value)))))


def short_label(text: str) -> str:
    """A chart label: ``scripted:/long/path/brisk.json`` shows as ``scripted:brisk.json``; at most 40 chars."""
    match = re.fullmatch(r"([\w.-]+):(.*[/\\])([^/\\]+)", text)
    if match:
        text = f"{match.group(1)}:{match.group(3)}"
    return text if len(text) <= MAX_LABEL else "…" + text[-(MAX_LABEL - 1):]


def _cut(text: str) -> str:
    return text if len(text) <= MAX_LABEL else "…" + text[-(MAX_LABEL - 1):]


def unique_labels(preferred: Mapping[K, str], fallback: Mapping[K, str]) -> dict[K, str]:
    """One label per key, never shared: the preferred one; keys sharing it get their fallback; keys
    still sharing one get a numeric suffix (`` (2)``, `` (3)``…), so no chart merges two groups."""
    counts = Counter(preferred.values())
    chosen = {k: fallback[k] if counts[label] > 1 else label for k, label in preferred.items()}
    taken, used = set(chosen.values()), set[str]()
    labels: dict[K, str] = {}
    for key, label in chosen.items():
        candidate, number = label, 1
        while candidate in used or (number > 1 and candidate in taken):
            number += 1
            candidate = f"{label} ({number})"
        used.add(candidate)
        labels[key] = candidate
    return labels


def display_names(keys: Sequence[str]) -> dict[str, str]:
    """Short labels, unless two keys would share one (then the keys, cut from the left; then numbered)."""
    return unique_labels({k: short_label(k) for k in keys}, {k: _cut(k) for k in keys})


def varying_dimensions(runs: Sequence[Mapping[str, Any]]) -> list[str]:
    varying = [d for d in DIMENSIONS if len({str(r.get(d, "")) for r in runs}) > 1]
    return varying or ["model"]


def configuration(run: Mapping[str, Any], dimensions: Sequence[str]) -> tuple[str, ...]:
    """A run's configuration: its full value in each varying dimension (labelled by :func:`config_labels`)."""
    return tuple(str(run.get(d, "?")) for d in dimensions)


def config_labels(groups: Mapping[tuple[str, ...], V]) -> dict[str, V]:
    """``groups`` keyed by unique chart labels (short names joined by `` · ``; never two configurations
    under one label)."""
    names = unique_labels({k: " · ".join(short_label(v) for v in k) for k in groups},
                          {k: _cut(" · ".join(k)) for k in groups})
    return {names[k]: value for k, value in groups.items()}


def others(count: int, what: str) -> str:
    return f"others ({count:,} {what})"


def top_parts(counter: Mapping[str, int], keep: Sequence[str], label: str) -> Counter[str]:
    """``counter`` with only the parts ``keep``; the rest summed under one part named ``label`` (the same
    in every row, so a stacked chart shows it as one colour)."""
    kept = set(keep)
    capped: Counter[str] = Counter({k: v for k, v in counter.items() if k in kept})
    rest = sum(v for k, v in counter.items() if k not in kept)
    if rest:
        capped[label] = capped.get(label, 0) + rest
    return capped


def top_keys(totals: Mapping[K, float], limit: int = MAX_SHOWN) -> list[K]:
    """The ``limit`` keys with the largest totals (ties: first seen)."""
    if len(totals) <= limit:
        return list(totals)
    order = {key: index for index, key in enumerate(totals)}
    return sorted(totals, key=lambda key: (-totals[key], order[key]))[:limit]


def cap_counters(rows: Mapping[K, Counter[str]], what: str, row_what: str,
                 wrap: Callable[[str], K]) -> dict[K, Counter[str]]:
    """At most :data:`MAX_SHOWN` rows (the rest summed into one, keyed ``wrap(label)``) and as many
    parts overall (the rest summed as "others")."""
    kept_rows = top_keys({key: sum(c.values()) for key, c in rows.items()})
    capped: dict[K, Counter[str]] = {key: rows[key] for key in kept_rows}
    left = [key for key in rows if key not in set(kept_rows)]
    if left:
        merged: Counter[str] = Counter()
        for key in left:
            merged.update(rows[key])
        label = others(len(left), row_what)
        capped[wrap(label)] = merged
    totals: Counter[str] = Counter()
    for counter in capped.values():
        totals.update(counter)
    parts = top_keys(dict(totals))
    label = others(len(totals) - len(parts), what)
    return {key: top_parts(counter, parts, label) for key, counter in capped.items()}


def speaker_counts(report: Mapping[str, Any]) -> dict[str, Counter[str]]:
    """Agent turns by speaker, per configuration (from each run's speaker sequence); at most
    :data:`MAX_SHOWN` configurations and speakers, then "others"."""
    runs = [r for r in report.get("runs", []) if isinstance(r, Mapping)]
    dimensions = varying_dimensions(runs)
    counts: dict[tuple[str, ...], Counter[str]] = {}
    for run in runs:
        counter = counts.setdefault(configuration(run, dimensions), Counter())
        for sequence in run.get("speaker_sequence") or []:
            counter.update(str(speaker) for speaker in sequence)
    return config_labels(cap_counters(counts, "speakers", "configurations", wrap=lambda label: (label,)))


def turn_latencies(report: Mapping[str, Any], results: Sequence[RunLike]) -> dict[str, list[float]]:
    """Agent-turn latencies in seconds, per configuration (named as in :func:`speaker_counts`)."""
    runs = [r for r in report.get("runs", []) if isinstance(r, Mapping)]
    dimensions = varying_dimensions(runs)
    samples: dict[tuple[str, ...], list[float]] = {}
    for result in results:
        key = configuration({d: safe_text(getattr(result, d)) for d in DIMENSIONS}, dimensions)
        values = [float(x) for r in result.rounds for x in r.turn_latencies if math.isfinite(x) and x >= 0]
        samples.setdefault(key, []).extend(values)
    kept = top_keys({key: len(values) for key, values in samples.items()})
    left = [key for key in samples if key not in set(kept)]
    capped = {key: samples[key] for key in kept}
    if left:
        capped[(others(len(left), "configurations"),)] = [x for key in left for x in samples[key]]
    return {label: values for label, values in sorted(config_labels(capped).items()) if values}


def compared_groupings(report: Mapping[str, Any]) -> list[tuple[str, dict[str, Mapping[str, Any]]]]:
    """(what varies, {group: its summary}) for each grouping with two groups or more, else the one by model."""
    found = [(name, _groups(report, key)) for key, name in GROUPINGS]
    compared = [(name, groups) for name, groups in found if len(groups) > 1]
    return compared or [(name, groups) for name, groups in found[:1] if groups]


def _groups(report: Mapping[str, Any], key: str) -> dict[str, Mapping[str, Any]]:
    groups = report.get(key)
    if not isinstance(groups, Mapping):
        return {}
    found = {str(k): v for k, v in groups.items() if isinstance(v, Mapping)}
    runs = {k: float(v["runs"]) if isinstance(v.get("runs"), int) else 0.0 for k, v in found.items()}
    kept = top_keys(runs)  # the groups with the most runs (a chart of 40,000 groups helps nobody)
    names = display_names(kept)
    return {names[k]: found[k] for k in kept}


def end_reason_panels(report: Mapping[str, Any]) -> list[tuple[str, dict[str, dict[str, int]]]]:
    panels = []
    for name, groups in compared_groupings(report):
        rows = {g: Counter(_counts(s.get("end_reasons"))) for g, s in groups.items()}
        panels.append((f"Round end reasons by {name}",
                       {g: dict(c) for g, c in cap_counters(rows, "reasons", "groups", str).items()}))
    return panels


def _counts(value: object) -> dict[str, int]:
    if not isinstance(value, Mapping):
        return {}
    return {str(k): int(v) for k, v in value.items() if isinstance(v, int) and not isinstance(v, bool) and v > 0}


def estimate(entry: object) -> Estimate | None:
    """A rate or mean of the report (``value``/``low``/``high``), if it has a value."""
    if not isinstance(entry, Mapping):
        return None
    value, low, high = (_number(entry.get(key)) for key in ("value", "low", "high"))
    if value is None:
        return None
    return Estimate(value, low if low is not None and low <= value else None,
                    high if high is not None and high >= value else None)


def _number(value: object) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return None


def routing_metrics(groups: Mapping[str, Mapping[str, Any]], labels: Mapping[str, str],
                    kind: str) -> dict[str, dict[str, Estimate]]:
    """{metric label: {group: Estimate}} for the intervals of ``kind`` (rates or means)."""
    metrics: dict[str, dict[str, Estimate]] = {}
    for metric, label in labels.items():
        for group, summary in groups.items():
            found = estimate(((summary.get("intervals") or {}).get(kind) or {}).get(metric))
            if found is not None:
                metrics.setdefault(label, {})[group] = found
    return metrics


def judge_labels(report: Mapping[str, Any]) -> dict[str, str]:
    """The judge's names for its scores (report.json's top-level judge ``criteria`` and ``labels``), by score."""
    overview = report.get("judge")
    if not isinstance(overview, Mapping):
        return {}
    labels: dict[str, str] = {}
    for key in ("criteria", "labels"):
        names = overview.get(key)
        if isinstance(names, Mapping):
            labels.update({str(k).removeprefix("judge_"): safe_text(v).removeprefix("judge: ")
                           for k, v in names.items() if isinstance(v, str)})
    return labels


def judge_metrics(groups: Mapping[str, Mapping[str, Any]], labels: Mapping[str, str] | None = None
                  ) -> tuple[dict[str, dict[str, Estimate]], dict[str, dict[str, Estimate]]]:
    """({rate label: {group: Estimate}}, {mean label: {group: Estimate}}) of the groups' judge sections
    (evaluation/report_judge.py: ``judge.rates`` are shares of turns meeting a criterion (given its good label, under
    the pedagogy rubric), ``judge.means`` scores on their own scale)."""
    rates: dict[str, dict[str, Estimate]] = {}
    means: dict[str, dict[str, Estimate]] = {}
    for group, summary in groups.items():
        section = summary.get("judge")
        if not isinstance(section, Mapping):
            continue
        for kind, into in (("rates", rates), ("means", means)):
            scores = section.get(kind)
            for name, entry in (scores.items() if isinstance(scores, Mapping) else ()):
                score = estimate(entry)
                if score is not None:
                    key = safe_text(name)
                    label = (labels or {}).get(key) or key.replace("_", " ")
                    if label in into or len(into) < MAX_SHOWN:  # a crafted report's 40,000 scores: the first
                        into.setdefault(label, {})[group] = score
    return rates, means
