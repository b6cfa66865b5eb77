"""What the charts of ``report.html`` show, pulled out of report.json (and the runs' turn latencies).

Pure data: no matplotlib, no HTML.  Runs are told apart by their *configuration*:
the model, prompt set and director policy, naming only those that vary in the
batch (the model when none does).  Groupings (by model, prompt set, policy) are
charted when they hold two groups or more — the comparisons a batch was run for —
else the one by model.

It reads the typed report (report/batch_report.py): a group's judge scores are its
``judge.rates`` and ``judge.means``, each with ``low``/``high`` as its interval when
present.  A report without them has no judge chart.

A chart draws at most :data:`MAX_SHOWN` rows, bars or stacked parts: the largest ones, then one
"others" for the rest (a crafted batch with 40,000 speakers or models draws 13, not 40,000, and
no step here grows faster than the number of runs and turns).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Protocol, TypeVar

from ..replies.sanitize import replace_surrogates
from ..untrusted import clean, one_line, redactor
from .batch_report import BatchReport, GroupSummary, MeanEntry, Point, RateEntry, RunRow
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


def safe_text(value: object, redact: Callable[[str], str] | None = None) -> str:
    """One clean line without API keys (as report.json's strings are); ``redact``: one
    :func:`~maic_cli.untrusted.redactor` shared by many strings (it looks the keys up in the environment)."""
    return (redact or redactor())(one_line(clean(replace_surrogates(str(value)))))


def text_cleaner() -> Callable[[object], str]:
    """:func:`safe_text` for many values: one redactor, and each distinct value cleaned once (a batch's
    1,000 runs share a handful of models, prompt sets and policies)."""
    redact, seen = redactor(), dict[str, str]()

    def cleaned(value: object) -> str:
        text = str(value)
        if (found := seen.get(text)) is None:
            found = seen[text] = safe_text(text, redact)
        return found

    return cleaned


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


def _dimensions(run: RunRow | RunLike, clean_text: Callable[[object], str] | None = None) -> dict[str, str]:
    values = {d: str(getattr(run, d)) for d in DIMENSIONS}
    return {d: clean_text(v) for d, v in values.items()} if clean_text else values


def varying_dimensions(runs: Sequence[RunRow]) -> list[str]:
    varying = [d for d in DIMENSIONS if len({getattr(r, d) for r in runs}) > 1]
    return varying or ["model"]


def configuration(run: Mapping[str, str], dimensions: Sequence[str]) -> tuple[str, ...]:
    """A run's configuration: its full value in each varying dimension (labelled by :func:`config_labels`)."""
    return tuple(run.get(d, "?") for d in dimensions)


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


def speaker_counts(report: BatchReport) -> dict[str, Counter[str]]:
    """Agent turns by speaker, per configuration (from each run's speaker sequence); at most
    :data:`MAX_SHOWN` configurations and speakers, then "others"."""
    dimensions = varying_dimensions(report.runs)
    counts: dict[tuple[str, ...], Counter[str]] = {}
    for run in report.runs:
        counter = counts.setdefault(configuration(_dimensions(run), dimensions), Counter())
        for sequence in run.speaker_sequence:
            counter.update(sequence)
    return config_labels(cap_counters(counts, "speakers", "configurations", wrap=lambda label: (label,)))


def turn_latencies(report: BatchReport, results: Sequence[RunLike]) -> dict[str, list[float]]:
    """Agent-turn latencies in seconds, per configuration (named as in :func:`speaker_counts`)."""
    dimensions = varying_dimensions(report.runs)
    samples: dict[tuple[str, ...], list[float]] = {}
    cleaned = text_cleaner()
    for result in results:
        key = configuration(_dimensions(result, clean_text=cleaned), dimensions)
        values = [float(x) for r in result.rounds for x in r.turn_latencies if math.isfinite(x) and x >= 0]
        samples.setdefault(key, []).extend(values)
    kept = top_keys({key: len(values) for key, values in samples.items()})
    left = [key for key in samples if key not in set(kept)]
    capped = {key: samples[key] for key in kept}
    if left:
        capped[(others(len(left), "configurations"),)] = [x for key in left for x in samples[key]]
    return {label: values for label, values in sorted(config_labels(capped).items()) if values}


def compared_groupings(report: BatchReport) -> list[tuple[str, dict[str, GroupSummary]]]:
    """(what varies, {group: its summary}) for each grouping with two groups or more, else the one by model."""
    found = [(name, _groups(report.grouping(key))) for key, name in GROUPINGS]
    compared = [(name, groups) for name, groups in found if len(groups) > 1]
    return compared or [(name, groups) for name, groups in found[:1] if groups]


def _groups(groups: dict[str, GroupSummary]) -> dict[str, GroupSummary]:
    kept = top_keys({k: float(v.runs) for k, v in groups.items()})  # a chart of 40,000 groups helps nobody
    names = display_names(kept)
    return {names[k]: groups[k] for k in kept}


def end_reason_panels(report: BatchReport) -> list[tuple[str, dict[str, dict[str, int]]]]:
    panels = []
    for name, groups in compared_groupings(report):
        rows = {g: Counter({k: v for k, v in s.end_reasons.items() if v > 0}) for g, s in groups.items()}
        panels.append((f"Round end reasons by {name}",
                       {g: dict(c) for g, c in cap_counters(rows, "reasons", "groups", str).items()}))
    return panels


def estimate(entry: RateEntry | MeanEntry | Point | None) -> Estimate | None:
    """A rate or mean of the report (``value``/``low``/``high``), if it has a value."""
    if entry is None or entry.value is None:
        return None
    value, low, high = float(entry.value), entry.low, entry.high
    return Estimate(value, float(low) if low is not None and low <= value else None,
                    float(high) if high is not None and high >= value else None)


def routing_metrics(groups: Mapping[str, GroupSummary], labels: Mapping[str, str],
                    kind: str) -> dict[str, dict[str, Estimate]]:
    """{metric label: {group: Estimate}} for the intervals of ``kind`` (rates or means)."""
    metrics: dict[str, dict[str, Estimate]] = {}
    for metric, label in labels.items():
        for group, summary in groups.items():
            entries: Mapping[str, RateEntry | MeanEntry] = {}
            if summary.intervals is not None:
                entries = summary.intervals.rates if kind == "rates" else summary.intervals.means
            found = estimate(entries.get(metric))
            if found is not None:
                metrics.setdefault(label, {})[group] = found
    return metrics


def judge_labels(report: BatchReport) -> dict[str, str]:
    """The judge's names for its scores (report.json's top-level judge ``criteria`` and ``labels``), by score."""
    if report.judge is None:
        return {}
    names, cleaned = {**report.judge.criteria, **report.judge.labels}, text_cleaner()
    return {k.removeprefix("judge_"): cleaned(v).removeprefix("judge: ") for k, v in names.items()}


def judge_metrics(groups: Mapping[str, GroupSummary], labels: Mapping[str, str] | None = None
                  ) -> tuple[dict[str, dict[str, Estimate]], dict[str, dict[str, Estimate]]]:
    """({rate label: {group: Estimate}}, {mean label: {group: Estimate}}) of the groups' judge sections
    (report/report_judge.py: ``judge.rates`` are shares of turns meeting a criterion (given its good label, under
    the pedagogy rubric), ``judge.means`` scores on their own scale)."""
    rates: dict[str, dict[str, Estimate]] = {}
    means: dict[str, dict[str, Estimate]] = {}
    cleaned = text_cleaner()
    for group, summary in groups.items():
        if summary.judge is None:
            continue
        scored: tuple[tuple[Mapping[str, RateEntry | MeanEntry], dict[str, dict[str, Estimate]]], ...] = (
            (summary.judge.rates, rates), (summary.judge.means, means))
        for scores, into in scored:
            for name, entry in scores.items():
                score = estimate(entry)
                if score is not None:
                    key = cleaned(name)
                    label = (labels or {}).get(key) or key.replace("_", " ")
                    if label in into or len(into) < MAX_SHOWN:  # a crafted report's 40,000 scores: the first
                        into.setdefault(label, {})[group] = score
    return rates, means
