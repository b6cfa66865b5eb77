"""A batch's reports, made from its runs' results (``OUT/runs/<run_id>.json``, evaluation/run_results.py).

``report.json`` is
machine-readable; ``report.md`` is for people; ``turns.csv`` and ``rounds.csv``
(report/report_tables.py) are for analysis.  Judged runs add the judge's scores
(report/report_judge.py) to each of them; tutoring runs add success@k and telling@k
(report/report_tutoring.py).
Scenario names, models, agent ids and provider errors come from files and
providers: every string in a report is cleaned of terminal control sequences and
API keys; in report.md every such string is also made inert Markdown (HTML escaped, no link,
no code span: :func:`~maic_cli.untrusted.markdown_text`), and a table cell cannot break its table
(both in one walk over the built report: report/report_clean.py).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from ..errors import InputError
from ..evaluation.metrics import percentile
from ..evaluation.run_results import RunResult
from ..files import read_bounded
from ..store.paths import write_atomic
from ..untrusted import one_line
from . import report_judge, report_stats, report_tutoring, report_voice, stats_markdown
from .batch_report import (
    BatchReport,
    Comparison,
    Comparisons,
    GroupSummary,
    Intervals,
    MetaValue,
    Methods,
    ReportHead,
    RunRow,
    TokenUse,
)
from .report_clean import cleaned_report, inert_report
from .report_tables import write_tables


def _round(value: float | None, digits: int = 4) -> float | None:
    return None if value is None else round(value, digits)


def aggregate(results: list[RunResult]) -> GroupSummary:
    """The numbers a researcher would otherwise compute by hand from logs.

    One pass over the rounds and one over the calls, counting in local variables (a pydantic
    attribute assignment costs a microsecond; a batch of 1,000 runs aggregates each run, each group and
    the whole): the same sums, in the same order, as summing each field over the rounds."""
    reasons: dict[str, int] = {}
    agent_turns = repeated = same_role = greetings = empty = dropped_replies = recoveries = 0
    dropped_actions = invalid = corrections = rounds = 0
    latencies: list[float] = []
    for result in results:
        for r in result.rounds:
            rounds += 1
            reasons[r.reason] = reasons.get(r.reason, 0) + 1
            agent_turns += r.agent_turns
            repeated += 1 if r.repeated_speakers else 0
            same_role += r.same_role_in_a_row
            greetings += r.second_greetings
            empty += r.empty_turns
            dropped_replies += r.dropped_replies  # dropped whole: not turns (engine/agent_reply.py)
            recoveries += r.parse_recoveries
            dropped_actions += r.dropped_actions
            invalid += r.invalid_picks
            corrections += r.director_corrections
            latencies += r.turn_latencies
    tokens: dict[str, list[Any]] = {}  # prompt, completion, cached, cost, calls: as TokenUse holds them
    costs: list[float] = []
    ttfts: list[float] = []
    for result in results:
        for call in result.calls:
            who = "director" if call.purpose == "director" else f"agent:{call.agent_id}"
            if (entry := tokens.get(who)) is None:
                entry = tokens[who] = [0, 0, 0, 0.0, 0]
            entry[0] += call.prompt_tokens
            entry[1] += call.completion_tokens
            entry[2] += call.cached_tokens
            entry[3] = round(entry[3] + call.cost, 6)
            entry[4] += 1
            costs.append(call.cost)
            if call.ttft is not None:
                ttfts.append(call.ttft)
    # Built from values of the types the fields have (counts, floats, None): nothing to validate.
    return GroupSummary.model_construct(
        runs=len(results), complete=sum(1 for r in results if r.status == "complete"),
        passed=sum(1 for r in results if r.passed), errors=sum(1 for r in results if r.status == "error"),
        cancelled=sum(1 for r in results if r.status == "cancelled"), rounds=rounds,
        agent_turns=agent_turns, end_reasons=reasons,
        cue_user_rate=_round(reasons.get("cue_user", 0) / rounds) if rounds else None,
        rounds_with_repeated_speaker=repeated, same_role_in_a_row=same_role, second_greetings=greetings,
        empty_turns=empty, dropped_replies=dropped_replies, parse_recoveries=recoveries,
        dropped_actions=dropped_actions, invalid_picks=invalid, director_corrections=corrections,
        tokens={who: TokenUse.model_construct(prompt=entry[0], completion=entry[1], cached=entry[2], cost=entry[3],
                                              calls=entry[4]) for who, entry in sorted(tokens.items())},
        total_cost=round(sum(costs), 6),
        ttft_p50=_round(percentile(ttfts, 50)), ttft_p95=_round(percentile(ttfts, 95)),
        turn_latency_p50=_round(percentile(latencies, 50)), turn_latency_p95=_round(percentile(latencies, 95)))


def _run_row(result: RunResult, judged: bool) -> RunRow:
    row = RunRow(run_id=result.run_id, scenario=result.scenario, model=result.model, prompts=result.prompts,
                 director=result.director, repeat=result.repeat, status=result.status, passed=result.passed,
                 failures=result.failures, error=result.error,
                 speaker_sequence=[round_.speakers for round_ in result.rounds],
                 end_reasons=[round_.reason for round_ in result.rounds], transcript=result.transcript,
                 duration=round(result.duration, 3), metrics=aggregate([result]))
    if judged:
        row.judge = report_judge.run_entry(result)
    return row


def build_report(results: list[RunResult], meta: dict[str, MetaValue]) -> BatchReport:
    groups: dict[str, dict[str, list[RunResult]]] = {key: defaultdict(list) for key in GROUPINGS_BY}
    for result in results:
        for key, attribute in GROUPINGS_BY.items():
            groups[key][getattr(result, attribute)].append(result)
    judged = report_judge.judged(results)
    # Each run's counts and values computed once when a run is in several groups (else the plain metrics:
    # a batch with one group per grouping summarises its runs once, below).
    several = any(len(by_value) > 1 for by_value in groups.values())
    rates, means = report_stats.once_per_run() if several else (None, None)
    # A group of the same runs as one summarised before (a batch of one scenario and one model has five:
    # overall, its scenario, model, prompt set and director) is a copy of that summary.
    done: dict[tuple[int, ...], GroupSummary] = {}

    def summarise(group: list[RunResult]) -> GroupSummary:
        key = tuple(map(id, group))
        if (found := done.get(key)) is not None:
            return found.model_copy(deep=True)
        summary = aggregate(group)
        summary.intervals = Intervals.model_validate(report_stats.intervals(group, rates=rates, means=means))
        if judged:
            summary.judge = report_judge.summary(group)
        done[key] = summary
        return summary

    def summarised(key: str) -> dict[str, GroupSummary]:
        return {name: summarise(group) for name, group in sorted(groups[key].items())}

    def compared(key: str) -> list[Comparison]:
        pairs = [Comparison.model_validate(pair)
                 for pair in report_stats.comparisons(groups[key], rates=rates, means=means)]
        if judged:
            for pair, scores in zip(pairs, report_judge.comparisons(groups[key]), strict=True):
                pair.metrics += scores.metrics
        return pairs

    report = BatchReport(
        meta=meta, statistics=Methods.model_validate(report_stats.METHODS), judge=report_judge.overview(results),
        overall=summarise(results),
        by_scenario=summarised("by_scenario"), by_model=summarised("by_model"), by_prompts=summarised("by_prompts"),
        by_director=summarised("by_director"),
        comparisons=Comparisons(by_model=compared("by_model"), by_prompts=compared("by_prompts"),
                                by_director=compared("by_director")),
        runs=[_run_row(r, judged) for r in sorted(results, key=lambda r: (r.scenario, r.model, r.prompts, r.repeat))])
    report_tutoring.add_to_report(report, results)  # tutoring tasks and simulated learners, if any
    report_voice.add_to_report(report, results)  # maic run --voice: synthesis counted apart
    return report


GROUPINGS_BY = {"by_scenario": "scenario", "by_model": "model", "by_prompts": "prompts", "by_director": "director"}


def report_markdown(report: BatchReport) -> str:
    report = inert_report(report)
    lines = ["# maic run report", ""]
    lines += [f"- {one_line(str(key))}: {one_line(str(value))}" for key, value in report.meta.items()] + [""]
    lines += ["## By scenario", "", _table(report.by_scenario), "", "## By model", "",
              _table(report.by_model), "", "## By prompt set", "", _table(report.by_prompts), ""]
    if "by_director" in report.model_fields_set:
        lines += ["## By director policy", "", _table(report.by_director), ""]
    lines += ["## Tokens by agent and model", "", _token_table(report.by_model), ""]
    lines += report_judge.markdown(report, GROUPINGS)
    lines += report_tutoring.markdown(report)
    lines += report_voice.markdown(report)
    lines += _uncertainty_markdown(report)
    lines += ["## Runs", "", "| run | status | speakers per round | end reasons | duration s |",
              "|---|---|---|---|---|"]
    for run in report.runs:
        speakers = " / ".join(" → ".join(seq) or "–" for seq in run.speaker_sequence) or "–"
        lines.append(f"| {_cell(run.run_id)} | {_cell(run.status)}{'' if run.passed else ' ✗'} | "
                     f"{_cell(speakers)} | {_cell(', '.join(run.end_reasons) or '–')} | {run.duration:.2f} |")
    lines.append("")
    failing = [r for r in report.runs if not r.passed]
    lines += ["## Failures", ""]
    if not failing:
        lines.append("None: every run completed and met its expectations.")
    for run in failing:
        problems = run.failures or [run.error or run.status]
        lines.append(f"- `{run.run_id}`: " + one_line("; ".join(problems)))
    return "\n".join(lines) + "\n"


GROUPINGS = (("by_scenario", "By scenario"), ("by_model", "By model"), ("by_prompts", "By prompt set"),
             ("by_director", "By director policy"))


def _uncertainty_markdown(report: BatchReport) -> list[str]:
    """Intervals when some group has two runs or more; comparisons where a report has two groups or more."""
    if report.overall.intervals is None or report.overall.runs < report_stats.MIN_RUNS:
        return []
    lines = ["## Uncertainty (95% intervals)", "", *stats_markdown.methods_markdown(),
             *stats_markdown.intervals_markdown("Overall", _dumped({"all runs": report.overall}))]
    for key, title in GROUPINGS:
        if len(report.grouping(key)) > 1:
            lines += stats_markdown.intervals_markdown(title, _dumped(report.grouping(key)))
    compared = [(key, title) for key, title in GROUPINGS[1:] if getattr(report.comparisons, key)]
    if compared:
        methods = report.statistics
        lines += ["## Comparisons", "", f"Differences are first − second. Rates: {methods.rate_differences}; "
                  f"means: {methods.mean_differences}. *Larger than the noise*: {methods.larger_than_noise}.", ""]
        for key, title in compared:
            pairs = [pair.model_dump() for pair in getattr(report.comparisons, key)]
            lines += stats_markdown.comparisons_markdown(title, pairs, report_judge.LABELS)
    return lines


def _dumped(groups: dict[str, GroupSummary]) -> dict[str, dict[str, Any]]:
    """The groups as report/report_stats.py's Markdown tables read them."""
    return {name: group.model_dump() for name, group in groups.items()}


def _table(groups: dict[str, GroupSummary]) -> str:
    head = ("| name | runs | passed | rounds | agent turns | cue-user rate | repeats | same role | 2nd greetings "
            "| empty | recoveries | dropped | tokens | cost | ttft p50/p95 s | turn p50/p95 s | corrections |")
    rows = [head, "|" + "---|" * 17]

    def pair(a: float | None, b: float | None) -> str:
        return "–" if a is None else f"{a:.2f}/{(b or 0):.2f}"

    for name, s in groups.items():
        rows.append(f"| {_cell(name)} | {s.runs} | {s.passed} | {s.rounds} | {s.agent_turns} | "
                    f"{s.cue_user_rate if s.cue_user_rate is not None else '–'} | "
                    f"{s.rounds_with_repeated_speaker} | {s.same_role_in_a_row} | {s.second_greetings} | "
                    f"{s.empty_turns} | {s.parse_recoveries} | {s.dropped_actions} | {s.total_tokens} | "
                    f"{s.total_cost:.4f} | {pair(s.ttft_p50, s.ttft_p95)} | "
                    f"{pair(s.turn_latency_p50, s.turn_latency_p95)} | {s.director_corrections} |")
    return "\n".join(rows)


def _token_table(groups: dict[str, GroupSummary]) -> str:
    rows = ["| model | who | calls | prompt | cached | completion | cost |", "|---|---|---|---|---|---|---|"]
    for name, s in groups.items():
        for who, t in s.tokens.items():
            rows.append(f"| {_cell(name)} | {_cell(who)} | {t.calls} | {t.prompt} | {t.cached} | "
                        f"{t.completion} | {t.cost:.4f} |")
    return "\n".join(rows)


def _cell(text: str) -> str:
    """Text for a Markdown table cell: one line, and a ``|`` cannot open a new column."""
    return text.replace("\n", " ").replace("|", "\\|")


def write_reports(out: Path, results: list[RunResult], meta: dict[str, MetaValue],
                  on_built: Callable[[BatchReport], object] | None = None) -> BatchReport:
    """report.json, report.md and the CSVs of ``results``; the report, every string in it cleaned.
    ``on_built`` sees the report before any file is written (the charts start on it meanwhile)."""
    report = cleaned_report(build_report(results, meta))
    if on_built is not None:
        on_built(report)
    write_atomic(out / "report.json", report.to_json())
    write_atomic(out / "report.md", report_markdown(report))
    write_tables(out, results)
    report_tutoring.write_csvs(out, results, report)
    return report


MAX_REPORT_BYTES = 2**26  # a report.json larger than this was not written by maic for a batch it can rebuild


def load_report(path: Path) -> BatchReport:
    """A report.json read back through the model; a bad field is one line naming ``path`` and the field."""
    return _validated(BatchReport, path)


def previous_meta(folder: Path) -> dict[str, MetaValue]:
    """What the batch's last report said about how it was run (kept when the report is rebuilt): nothing
    when there is no report.json (or a FIFO, a folder … where it was); a bad ``meta`` field is one line."""
    path = folder / "report.json"
    try:
        data = read_bounded(path, MAX_REPORT_BYTES, "report")
    except (InputError, OSError):
        return {}
    return _validated(ReportHead, path, data).meta


Part = TypeVar("Part", bound=BaseModel)


def _validated(model: type[Part], path: Path, data: bytes | None = None) -> Part:
    try:
        return model.model_validate_json(read_bounded(path, MAX_REPORT_BYTES, "report") if data is None else data)
    except ValidationError as exc:
        raise InputError(f"{path}: {validation_problem(exc)}") from None
    except (OSError, ValueError) as exc:
        raise InputError(f"{path}: cannot read the report: {one_line(str(exc))[:200]}") from None


_UNION_TAGS = frozenset({"int", "float", "str", "bool", "none"})


def validation_problem(exc: ValidationError) -> str:
    """The first problem of a validation error as ``field a.b.0.c: message`` (one line, bounded)."""
    errors = exc.errors(include_url=False, include_input=False)
    if not errors:
        return "not a maic report"
    first = errors[0]
    loc = list(first["loc"])
    while len(loc) > 1 and isinstance(loc[-1], str) and (loc[-1] in _UNION_TAGS or "[" in loc[-1]):
        loc.pop()  # ``cost.int``: pydantic names the member of a union it tried; the field is ``cost``
    where = ".".join(str(part) for part in loc) or "(top level)"
    more = f" (and {len(errors) - 1} more problems)" if len(errors) > 1 else ""
    return one_line(f"field {where}: {first['msg']}")[:300] + more
