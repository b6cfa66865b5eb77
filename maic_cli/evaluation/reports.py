"""Batch results: one JSON file per finished run, and the reports made from them.

``OUT/runs/<run_id>.json`` is written (atomically) when a run ends, so
``--resume`` can skip it and ``--merge`` can combine folders from several
machines (the models and their files are in evaluation/run_results.py).  ``report.json`` is
machine-readable; ``report.md`` is for people; ``turns.csv`` and ``rounds.csv``
(evaluation/report_tables.py) are for analysis.  Judged runs add the judge's scores
(evaluation/report_judge.py) to each of them; tutoring runs add success@k and telling@k
(evaluation/report_tutoring.py).
Scenario names, models, agent ids and provider errors come from files and
providers: every string in a report is cleaned of terminal control sequences and
API keys; in report.md every such string is also made inert Markdown (HTML escaped, no link,
no code span: :func:`~maic_cli.untrusted.markdown_text`), and a table cell cannot break its table.
"""

from __future__ import annotations

import json
import math
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from ..store.paths import write_atomic
from ..untrusted import clean, markdown_text, one_line, redactor
from . import report_judge, report_stats, report_tutoring
from .metrics import percentile
from .report_tables import write_tables
from .run_results import CallStat as CallStat
from .run_results import RunResult as RunResult
from .run_results import load_runs as load_runs
from .run_results import runs_dir as runs_dir
from .run_results import save_run as save_run


def _round(value: float | None, digits: int = 4) -> float | None:
    return None if value is None else round(value, digits)


def aggregate(results: list[RunResult]) -> dict[str, Any]:
    """The numbers a researcher would otherwise compute by hand from logs."""
    rounds = [r for result in results for r in result.rounds]
    calls = [c for result in results for c in result.calls]
    reasons = Counter(r.reason for r in rounds)
    tokens: dict[str, dict[str, float]] = defaultdict(lambda: {"prompt": 0, "completion": 0, "cached": 0,
                                                               "cost": 0.0, "calls": 0})
    for call in calls:
        key = "director" if call.purpose == "director" else f"agent:{call.agent_id}"
        entry = tokens[key]
        entry["prompt"] += call.prompt_tokens
        entry["completion"] += call.completion_tokens
        entry["cached"] += call.cached_tokens
        entry["cost"] = round(entry["cost"] + call.cost, 6)
        entry["calls"] += 1
    ttfts = [c.ttft for c in calls if c.ttft is not None]
    latencies = [x for r in rounds for x in r.turn_latencies]
    return {
        "runs": len(results),
        "complete": sum(1 for r in results if r.status == "complete"),
        "passed": sum(1 for r in results if r.passed),
        "errors": sum(1 for r in results if r.status == "error"),
        "cancelled": sum(1 for r in results if r.status == "cancelled"),
        "rounds": len(rounds),
        "agent_turns": sum(r.agent_turns for r in rounds),
        "end_reasons": dict(reasons),
        "cue_user_rate": _round(reasons.get("cue_user", 0) / len(rounds)) if rounds else None,
        "rounds_with_repeated_speaker": sum(1 for r in rounds if r.repeated_speakers),
        "same_role_in_a_row": sum(r.same_role_in_a_row for r in rounds),
        "second_greetings": sum(r.second_greetings for r in rounds),
        "empty_turns": sum(r.empty_turns for r in rounds),
        "dropped_replies": sum(r.dropped_replies for r in rounds),  # dropped whole: not turns (engine/agent_reply.py)
        "parse_recoveries": sum(r.parse_recoveries for r in rounds),
        "dropped_actions": sum(r.dropped_actions for r in rounds),
        "invalid_picks": sum(r.invalid_picks for r in rounds),
        "director_corrections": sum(r.director_corrections for r in rounds),
        "tokens": dict(sorted(tokens.items())),
        "total_cost": round(sum(c.cost for c in calls), 6),
        "ttft_p50": _round(percentile(ttfts, 50)), "ttft_p95": _round(percentile(ttfts, 95)),
        "turn_latency_p50": _round(percentile(latencies, 50)),
        "turn_latency_p95": _round(percentile(latencies, 95)),
    }


def build_report(results: list[RunResult], meta: dict[str, Any]) -> dict[str, Any]:
    by_scenario: dict[str, list[RunResult]] = defaultdict(list)
    by_model: dict[str, list[RunResult]] = defaultdict(list)
    by_prompts: dict[str, list[RunResult]] = defaultdict(list)
    by_director: dict[str, list[RunResult]] = defaultdict(list)
    for result in results:
        by_scenario[result.scenario].append(result)
        by_model[result.model].append(result)
        by_prompts[result.prompts].append(result)
        by_director[result.director].append(result)
    judged = report_judge.judged(results)

    def summarise(group: list[RunResult]) -> dict[str, Any]:
        extra = {"judge": report_judge.summary(group)} if judged else {}
        return {**aggregate(group), "intervals": report_stats.intervals(group), **extra}

    def compared(groups: dict[str, list[RunResult]]) -> list[dict[str, Any]]:
        pairs = report_stats.comparisons(groups)
        if judged:
            for pair, scores in zip(pairs, report_judge.comparisons(groups), strict=True):
                pair["metrics"] += scores["metrics"]
        return pairs

    report: dict[str, Any] = {
        "meta": meta,
        "statistics": report_stats.METHODS,
        "judge": report_judge.overview(results),
        "overall": summarise(results),
        "by_scenario": {k: summarise(v) for k, v in sorted(by_scenario.items())},
        "by_model": {k: summarise(v) for k, v in sorted(by_model.items())},
        "by_prompts": {k: summarise(v) for k, v in sorted(by_prompts.items())},
        "by_director": {k: summarise(v) for k, v in sorted(by_director.items())},
        "comparisons": {"by_model": compared(by_model), "by_prompts": compared(by_prompts),
                        "by_director": compared(by_director)},
        "runs": [{"run_id": r.run_id, "scenario": r.scenario, "model": r.model, "prompts": r.prompts,
                  "director": r.director,
                  "repeat": r.repeat,
                  "status": r.status, "passed": r.passed, "failures": r.failures, "error": r.error,
                  "speaker_sequence": [round_.speakers for round_ in r.rounds],
                  "end_reasons": [round_.reason for round_ in r.rounds],
                  "transcript": r.transcript, "duration": round(r.duration, 3), "metrics": aggregate([r]),
                  **({"judge": report_judge.run_entry(r)} if judged else {})}
                 for r in sorted(results, key=lambda r: (r.scenario, r.model, r.prompts, r.repeat))],
    }
    report_tutoring.add_to_report(report, results)  # tutoring tasks and simulated learners, if any
    return report


def _markdown_safe(data: Any) -> Any:
    """``data`` with every string and key that came from outside made inert Markdown (the statistics'
    descriptions are maic's own text)."""
    if isinstance(data, str):
        return markdown_text(data)
    if isinstance(data, dict):
        return {markdown_text(str(k)): v if k == "statistics" else _markdown_safe(v) for k, v in data.items()}
    if isinstance(data, list):
        return [_markdown_safe(item) for item in data]
    return data


def report_markdown(report: dict[str, Any]) -> str:
    report = _markdown_safe(report)
    lines = ["# maic run report", ""]
    meta = report["meta"]
    lines += [f"- {one_line(str(key))}: {one_line(str(value))}" for key, value in meta.items()] + [""]
    lines += ["## By scenario", "", _table(report["by_scenario"]), "", "## By model", "",
              _table(report["by_model"]), "", "## By prompt set", "", _table(report["by_prompts"]), ""]
    if "by_director" in report:
        lines += ["## By director policy", "", _table(report["by_director"]), ""]
    lines += ["## Tokens by agent and model", "", _token_table(report["by_model"]), ""]
    lines += report_judge.markdown(report, GROUPINGS)
    lines += report_tutoring.markdown(report)
    lines += _uncertainty_markdown(report)
    lines += ["## Runs", "", "| run | status | speakers per round | end reasons | duration s |",
              "|---|---|---|---|---|"]
    for run in report["runs"]:
        speakers = " / ".join(" → ".join(seq) or "–" for seq in run["speaker_sequence"]) or "–"
        lines.append(f"| {_cell(run['run_id'])} | {_cell(run['status'])}{'' if run['passed'] else ' ✗'} | "
                     f"{_cell(speakers)} | {_cell(', '.join(run['end_reasons']) or '–')} | {run['duration']:.2f} |")
    lines.append("")
    failing = [r for r in report["runs"] if not r["passed"]]
    lines += ["## Failures", ""]
    if not failing:
        lines.append("None: every run completed and met its expectations.")
    for run in failing:
        problems = run["failures"] or [run["error"] or run["status"]]
        lines.append(f"- `{run['run_id']}`: " + one_line("; ".join(problems)))
    return "\n".join(lines) + "\n"


GROUPINGS = (("by_scenario", "By scenario"), ("by_model", "By model"), ("by_prompts", "By prompt set"),
             ("by_director", "By director policy"))


def _uncertainty_markdown(report: dict[str, Any]) -> list[str]:
    """Intervals when some group has two runs or more; comparisons where a report has two groups or more."""
    if "intervals" not in report["overall"] or report["overall"]["runs"] < report_stats.MIN_RUNS:
        return []
    lines = ["## Uncertainty (95% intervals)", "", *report_stats.methods_markdown(),
             *report_stats.intervals_markdown("Overall", {"all runs": report["overall"]})]
    for key, title in GROUPINGS:
        if len(report.get(key, {})) > 1:
            lines += report_stats.intervals_markdown(title, report[key])
    compared = [(key, title) for key, title in GROUPINGS[1:] if report.get("comparisons", {}).get(key)]
    if compared:
        methods = report["statistics"]
        lines += ["## Comparisons", "", f"Differences are first − second. Rates: {methods['rate_differences']}; "
                  f"means: {methods['mean_differences']}. *Larger than the noise*: "
                  f"{methods['larger_than_noise']}.", ""]
        for key, title in compared:
            lines += report_stats.comparisons_markdown(title, report["comparisons"][key], report_judge.LABELS)
    return lines


def _table(groups: dict[str, dict[str, Any]]) -> str:
    head = ("| name | runs | passed | rounds | agent turns | cue-user rate | repeats | same role | 2nd greetings "
            "| empty | recoveries | dropped | tokens | cost | ttft p50/p95 s | turn p50/p95 s | corrections |")
    rows = [head, "|" + "---|" * 17]
    for name, s in groups.items():
        total_tokens = sum(int(t["prompt"] + t["completion"]) for t in s["tokens"].values())

        def pair(a: float | None, b: float | None) -> str:
            return "–" if a is None else f"{a:.2f}/{(b or 0):.2f}"

        rows.append(f"| {_cell(name)} | {s['runs']} | {s['passed']} | {s['rounds']} | {s['agent_turns']} | "
                    f"{s['cue_user_rate'] if s['cue_user_rate'] is not None else '–'} | "
                    f"{s['rounds_with_repeated_speaker']} | {s['same_role_in_a_row']} | {s['second_greetings']} | "
                    f"{s['empty_turns']} | {s['parse_recoveries']} | "
                    f"{s['dropped_actions']} | {total_tokens} | {s['total_cost']:.4f} | "
                    f"{pair(s['ttft_p50'], s['ttft_p95'])} | {pair(s['turn_latency_p50'], s['turn_latency_p95'])} | "
                    f"{s.get('director_corrections', 0)} |")
    return "\n".join(rows)


def _token_table(groups: dict[str, dict[str, Any]]) -> str:
    rows = ["| model | who | calls | prompt | cached | completion | cost |", "|---|---|---|---|---|---|---|"]
    for name, s in groups.items():
        for who, t in s["tokens"].items():
            rows.append(f"| {_cell(name)} | {_cell(who)} | {t['calls']} | {t['prompt']} | {t['cached']} | "
                        f"{t['completion']} | {t['cost']:.4f} |")
    return "\n".join(rows)


def _cell(text: str) -> str:
    """Text for a Markdown table cell: one line, and a ``|`` cannot open a new column."""
    return text.replace("\n", " ").replace("|", "\\|")


def safe_strings(data: Any) -> Any:
    """``data`` with every string (keys too) cleaned and without API keys."""
    redact = redactor()

    def safe(item: Any) -> Any:
        if isinstance(item, str):
            return redact(clean(item))
        if isinstance(item, dict):
            return {safe(key): safe(value) for key, value in item.items()}
        if isinstance(item, list):
            return [safe(value) for value in item]
        return item

    return safe(data)


def finite(data: Any) -> Any:
    """``data`` with every NaN or infinite number as ``null``: report.json is strict JSON (``NaN`` and
    ``Infinity`` are not JSON, and strict readers refuse the whole file)."""
    if isinstance(data, float):
        return data if math.isfinite(data) else None
    if isinstance(data, dict):
        return {key: finite(value) for key, value in data.items()}
    if isinstance(data, list | tuple):
        return [finite(value) for value in data]
    return data


def write_reports(out: Path, results: list[RunResult], meta: dict[str, Any]) -> dict[str, Any]:
    report: dict[str, Any] = finite(safe_strings(build_report(results, meta)))
    write_atomic(out / "report.json", json.dumps(report, indent=1, ensure_ascii=False, allow_nan=False))
    write_atomic(out / "report.md", report_markdown(report))
    write_tables(out, results)
    report_tutoring.write_csvs(out, results, report)
    return report
