"""The judge's scores in a batch report: per group, per run, compared, and as Markdown.

Verdicts are yes/no (evaluation/judge.py), so each criterion is a **rate** over judged
turns (``answered`` over judged rounds with a learner message), with a Wilson
interval; the **turn score** (criteria met, 0–5) is a mean per run, averaged over
runs, with a bootstrap interval — the methods of report/report_stats.py.  Two groups'
rates are compared by a cluster bootstrap over runs, not as independent turns: the
turns of one run share its model and its class, so they are correlated.  A verdict
that could not be read is *missing*: counted, never scored.  The judge's calls are
summed here, apart from the class's tokens and cost.

report.json gets, only when some run was judged: ``judge`` at the top (models,
rubric versions, criteria, usage), ``judge`` in every group summary and in every run,
and the ``judge_*`` metrics in ``comparisons``.

Under another rubric than the default (evaluation/judge_rubrics.py: ``pedagogy``) a verdict is a
label per criterion: a criterion's rate is the share of judged turns given its *good* label
(``no`` for revealing the answer, ``encouraging`` for the tone), each group also gets the
distribution of every criterion's labels (``judge.labels``), the per-turn score is the number
of good labels (0–8, ``pedagogy_score``), and rounds are not judged on ``answered``.  The
top-level ``judge`` then names the rubric (``rubric``) and its criteria's labels; a default
report is unchanged.  A batch is reported on the rubric most of its judged runs used; runs
judged on another one count as not judged, and the report warns.
"""

from __future__ import annotations

from collections.abc import Callable
from statistics import fmean
from typing import Any

from ..evaluation.judge import CRITERIA, CRITERIA_LABELS, RoundVerdict, TurnVerdict
from ..evaluation.judge_rubrics import DEFAULT, RUBRICS, Rubric
from ..evaluation.run_results import CallStat, RunJudgement, RunResult
from ..untrusted import one_line
from . import report_stats, stats_markdown
from .batch_report import (
    BatchReport,
    Comparison,
    CriterionLabels,
    GroupJudge,
    JudgeOverview,
    JudgeUsage,
    MeanEntry,
    RateEntry,
    RunJudge,
)

SCALE = ("yes/no per criterion for each agent turn, and yes/no per round for whether the learner's message "
         "was answered; each with a one-line reason; one judge call per round")
SCALES = {"default": SCALE,
          "pedagogy": "a label per dimension (yes / to some extent / no; the tone encouraging / neutral / offensive) "
                      "for each teacher and assistant turn (students' turns are context, not judged), with a "
                      "one-line reason; one judge call per round"}


def rubric_of(results: list[RunResult]) -> Rubric:
    """The rubric most of the judged runs used (the default when none was judged, or on a tie)."""
    used = [r.judge.rubric for r in results if r.judge is not None]
    return RUBRICS[max(RUBRICS, key=lambda name: (used.count(name), name == DEFAULT.name))]  # type: ignore[arg-type]


def _judged_on(results: list[RunResult], rubric: Rubric) -> list[RunResult]:
    return [r for r in results if r.judge is not None and r.judge.rubric == rubric.name]


def _usable(turn: TurnVerdict, rubric: Rubric) -> bool:
    if rubric.boolean:
        return not turn.labels and turn.usable
    return all(turn.labels.get(c.name) in c.labels for c in rubric.criteria)


def _turns(results: list[RunResult], rubric: Rubric = DEFAULT) -> list[TurnVerdict]:
    return [t for r in _judged_on(results, rubric) if r.judge for v in r.judge.rounds for t in v.turns
            if _usable(t, rubric)]


def _criterion(name: str, rubric: Rubric = DEFAULT) -> report_stats.RateCount:
    good = rubric.criterion(name).good

    def count(results: list[RunResult]) -> tuple[int, int]:
        turns = _turns(results, rubric)
        if rubric.boolean:
            return sum(bool(getattr(t, name)) for t in turns), len(turns)
        return sum(t.labels.get(name) == good for t in turns), len(turns)

    return count


def _answered(results: list[RunResult]) -> tuple[int, int]:
    flags = [v.answered for r in _judged_on(results, DEFAULT) if r.judge for v in r.judge.rounds
             if v.answered is not None]
    return sum(flags), len(flags)


def _turn_score(result: RunResult) -> float | None:
    scores = [float(t.score) for t in _turns([result]) if t.score is not None]
    return fmean(scores) if scores else None


def good_labels(turn: TurnVerdict, rubric: Rubric) -> int:
    """How many of the rubric's criteria got their good label in a (usable) turn verdict."""
    return sum(turn.labels.get(c.name) == c.good for c in rubric.criteria)


def _score(rubric: Rubric) -> report_stats.PerRun:
    def score(result: RunResult) -> float | None:
        scores = [float(good_labels(t, rubric)) for t in _turns([result], rubric)]
        return fmean(scores) if scores else None

    return score


RATES: dict[str, report_stats.RateCount] = {**{f"judge_{name}": _criterion(name) for name in CRITERIA},
                                            "judge_answered": _answered}
MEANS: dict[str, report_stats.PerRun] = {"judge_turn_score": _turn_score}
LABELS = {**{f"judge_{name}": f"judge: {label}" for name, label in CRITERIA_LABELS.items()},
          "judge_answered": "judge: learner answered (rounds)", "judge_turn_score": "judge: turn score (0–5)"}
COMPARED = [*RATES, *MEANS]
DEFAULT_LABELS = dict(LABELS)  # report.json's judge.labels under the default rubric (LABELS names every rubric's)
_RUBRIC_RATES: dict[str, dict[str, report_stats.RateCount]] = {"default": RATES}
_RUBRIC_MEANS: dict[str, dict[str, report_stats.PerRun]] = {"default": MEANS}
for _rubric in RUBRICS.values():
    if _rubric.boolean:
        continue
    _RUBRIC_RATES[_rubric.name] = {f"judge_{c.name}": _criterion(c.name, _rubric) for c in _rubric.criteria}
    _RUBRIC_MEANS[_rubric.name] = {f"judge_{_rubric.name}_score": _score(_rubric)}
    LABELS |= {f"judge_{c.name}": f"judge: {c.label} ({c.good})" for c in _rubric.criteria}
    LABELS[f"judge_{_rubric.name}_score"] = f"judge: {_rubric.name} score (0–{len(_rubric.criteria)})"


def rates(rubric: Rubric) -> dict[str, report_stats.RateCount]:
    return _RUBRIC_RATES[rubric.name]


def means(rubric: Rubric) -> dict[str, report_stats.PerRun]:
    return _RUBRIC_MEANS[rubric.name]


def compared(rubric: Rubric) -> list[str]:
    return [*rates(rubric), *means(rubric)]


def judged(results: list[RunResult]) -> bool:
    return any(r.judge is not None for r in results)


def _wanted(roles: list[str], agent_turns: int, rubric: Rubric) -> int:
    """The turns of a round the rubric judges (its roles', or all)."""
    return agent_turns if rubric.roles is None else sum(role in rubric.roles for role in roles)


def _missing(results: list[RunResult], rubric: Rubric = DEFAULT) -> tuple[int, int]:
    """(turns, rounds) of judged runs without a usable verdict (whatever the reason)."""
    turns = rounds = 0
    for result in _judged_on(results, rubric):
        if result.judge is None:
            continue
        for summary in result.rounds:
            verdict = result.judge.verdict(summary.index + 1)
            usable = sum(_usable(t, rubric) for t in verdict.turns) if verdict else 0
            wanted = _wanted(summary.roles, summary.agent_turns, rubric)
            turns += max(wanted - usable, 0)
            if rubric.answered:
                rounds += summary.learner is not None and (verdict is None or verdict.answered is None)
            else:
                rounds += wanted > 0 and (verdict is None or verdict.status == "missing")
    return turns, rounds


def _rounds_judged(results: list[RunResult], rubric: Rubric) -> int:
    if rubric.answered:
        return _answered(results)[1]
    return sum(any(_usable(t, rubric) for t in v.turns) for r in _judged_on(results, rubric) if r.judge
               for v in r.judge.rounds)


def distribution(results: list[RunResult], rubric: Rubric) -> dict[str, dict[str, int]]:
    """Each criterion's labels over the judged turns: {criterion: {label: turns}}, every label listed."""
    turns = _turns(results, rubric)
    return {c.name: {label: sum(t.labels.get(c.name) == label for t in turns) for label in c.labels}
            for c in rubric.criteria}


def usage(calls: list[CallStat]) -> JudgeUsage:
    return JudgeUsage(calls=len(calls), prompt=sum(c.prompt_tokens for c in calls),
                      completion=sum(c.completion_tokens for c in calls), cached=sum(c.cached_tokens for c in calls),
                      cost=round(sum(c.cost for c in calls), 6), errors=sum(1 for c in calls if c.error_kind))


def summary(results: list[RunResult], rubric: Rubric | None = None) -> GroupJudge:
    """A group's judge scores: counts, each rate and mean with its 95% interval, and the judge's usage
    (``rubric``: the batch's, :func:`rubric_of` its runs when not given)."""
    rubric = rubric or rubric_of(results)
    judged_runs = _judged_on(results, rubric)
    enough = len(judged_runs) >= report_stats.MIN_RUNS
    turns_missing, rounds_missing = _missing(judged_runs, rubric)
    verdicts = [v for r in judged_runs if r.judge for v in r.judge.rounds]
    block = GroupJudge(
        runs_judged=len(judged_runs), runs_not_judged=len(results) - len(judged_runs),
        turns_judged=len(_turns(judged_runs, rubric)), turns_missing=turns_missing,
        rounds_judged=_rounds_judged(judged_runs, rubric), rounds_missing=rounds_missing,
        repaired_replies=sum(v.repaired for v in verdicts),
        run_errors=sum(1 for r in judged_runs if r.judge and r.judge.error),
        rates={name.removeprefix("judge_"): RateEntry.model_validate(report_stats.rate_entry(*count(judged_runs),
                                                                                             enough))
               for name, count in rates(rubric).items()},
        means={name.removeprefix("judge_"): MeanEntry.model_validate(report_stats.mean_entry(
            [v for v in map(per_run, judged_runs) if v is not None])) for name, per_run in means(rubric).items()},
        usage=usage([c for r in judged_runs if r.judge for c in r.judge.calls]))
    if not rubric.boolean:
        block.labels = distribution(judged_runs, rubric)
    return block


def run_entry(result: RunResult) -> RunJudge | None:
    """One run's judge: who judged with which rubric, its scores, and every round's verdict."""
    if result.judge is None:
        return None
    judge = result.judge
    entry = RunJudge(model=judge.model, rubric_version=judge.rubric_version,
                     rubric_fingerprint=judge.rubric_fingerprint, error=judge.error,
                     summary=summary([result], RUBRICS[judge.rubric]),
                     rounds=[RoundVerdict.model_validate(v.model_dump()) for v in judge.rounds])
    if judge.rubric != DEFAULT.name:
        entry.rubric = judge.rubric
    return entry


def overview(results: list[RunResult]) -> JudgeOverview | None:
    """The report's top-level ``judge``: ``None`` when no run was judged."""
    judges = [r.judge for r in results if r.judge is not None]
    if not judges:
        return None

    def distinct(pick: Callable[[RunJudgement], str]) -> list[str]:
        return sorted({pick(j) for j in judges})

    rubric = rubric_of(results)
    if rubric.boolean:  # yes/no criteria; the rubrics named only when some run was judged on another
        named: dict[str, object] = {"rubrics": distinct(lambda j: j.rubric)} if any(j.rubric != rubric.name
                                                                                   for j in judges) else {}
        criteria, labels = dict(CRITERIA_LABELS), DEFAULT_LABELS
    else:  # the rubric, each criterion's labels and good one; the labels of this rubric's metrics only
        named = {"rubric": rubric.name, "rubrics": distinct(lambda j: j.rubric),
                 "criterion_labels": {c.name: CriterionLabels(labels=list(c.labels), good=c.good)
                                      for c in rubric.criteria}}
        criteria = {c.name: f"{c.label} ({c.good})" for c in rubric.criteria}  # the rate is of the good label
        labels = {name: LABELS[name] for name in compared(rubric)}
    return JudgeOverview.model_validate({
        "models": distinct(lambda j: j.model), **named, "rubric_versions": distinct(lambda j: j.rubric_version),
        "rubric_fingerprints": distinct(lambda j: j.rubric_fingerprint),
        "rubric_sources": distinct(lambda j: j.rubric_source), "criteria": criteria, "scale": SCALES[rubric.name],
        "labels": labels, "runs_judged": len(judges), "runs_not_judged": len(results) - len(judges),
        "usage": usage([c for j in judges for c in j.calls])})


def _per_run_counts(results: list[RunResult], count: report_stats.RateCount) -> list[tuple[int, int]]:
    """(successes, trials) of each run with a trial: the clusters a rate is resampled by."""
    return [pair for pair in (count([r]) for r in results) if pair[1]]


def _resampled_rates(counts: list[tuple[int, int]], rng: Any) -> Any:  # numpy's Generator and array
    """The pooled rate of each resample of the runs (the runs drawn with replacement, their turns with them)."""
    import numpy as np

    data = np.asarray(counts, dtype=float)
    picks = rng.integers(0, len(data), size=(report_stats.RESAMPLES, len(data)))
    return data[picks, 0].sum(axis=1) / data[picks, 1].sum(axis=1)  # every run has a trial: no 0/0


def cluster_difference(first: list[tuple[int, int]],
                       second: list[tuple[int, int]]) -> report_stats.Interval | None:
    """Percentile cluster bootstrap of ``rate(first) - rate(second)`` over runs: a run's turns are
    correlated (one model, one class), so runs, not turns, are resampled (``None`` under MIN_RUNS runs)."""
    if len(first) < report_stats.MIN_RUNS or len(second) < report_stats.MIN_RUNS:
        return None
    import numpy as np

    rng = np.random.default_rng(report_stats.SEED)
    difference = _resampled_rates(first, rng) - _resampled_rates(second, rng)
    return report_stats.percentiles(difference, report_stats.CONFIDENCE)


def cluster_rate_difference(count: report_stats.RateCount, first: list[RunResult],
                            second: list[RunResult]) -> tuple[report_stats.Interval | None, str]:
    """A judge rate difference's interval: the runs are resampled, not the turns (see above)."""
    return cluster_difference(_per_run_counts(first, count), _per_run_counts(second, count)), "cluster bootstrap"


def comparisons(groups: dict[str, list[RunResult]]) -> list[Comparison]:
    """Every pair of groups on the judge's scores; rates compared by a cluster bootstrap over runs."""
    rubric = rubric_of([r for group in groups.values() for r in group])
    return [Comparison.model_validate(pair) for pair in report_stats.comparisons(
        groups, compared(rubric), rates=rates(rubric), means=means(rubric), rate_difference=cluster_rate_difference)]


# -- Markdown -----------------------------------------------------------------------------------
def _scores_row(name: str, block: GroupJudge, rubric: Rubric = DEFAULT) -> str:
    cells = [stats_markdown.with_interval(block.rates[c.removeprefix("judge_")].model_dump()) for c in rates(rubric)]
    cells += [stats_markdown.with_interval(block.means[c.removeprefix("judge_")].model_dump()) for c in means(rubric)]
    used = block.usage
    return (f"| {stats_markdown.cell(name)} | {block.runs_judged} | {block.turns_judged} | "
            f"{block.turns_missing} | {block.rounds_missing} | " + " | ".join(cells) +
            f" | {used.calls} | {used.prompt + used.completion} | {used.cost:.4f} |")


def _scores_table(title: str, groups: dict[str, GroupJudge | None], rubric: Rubric = DEFAULT) -> list[str]:
    head = ["name", "runs judged", "turns judged", "turns missing", "rounds missing",
            *(LABELS[c].removeprefix("judge: ") for c in compared(rubric)), "judge calls", "judge tokens",
            "judge cost"]
    lines = [f"### {title}", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += [_scores_row(name, block, rubric) for name, block in groups.items() if block is not None]
    return [*lines, ""]


def _labels_table(block: GroupJudge, rubric: Rubric) -> list[str]:
    """Each criterion's labels over all judged turns (the rubric's three-level criteria)."""
    lines = ["### Labels (all runs)", "", "| criterion | " + " | ".join(("label: turns",) * 3) + " |",
             "|---|---|---|---|"]
    for c in rubric.criteria:
        counts = (block.labels or {}).get(c.name, {})
        lines.append(f"| {c.label} (good: {c.good}) | " +
                     " | ".join(f"{label}: {counts.get(label, 0)}" for label in c.labels) + " |")
    return [*lines, ""]


def markdown(report: BatchReport, groupings: tuple[tuple[str, str], ...]) -> list[str]:
    """The report.md section on judged turns (nothing when no run was judged)."""
    judge = report.judge
    if not judge:
        return []

    def names(found: list[str]) -> str:
        return one_line(", ".join(found))

    rubric = RUBRICS.get(judge.rubric or DEFAULT.name, DEFAULT)
    shares = "" if rubric.boolean else "Each rate is the share of judged turns given the criterion's good label. "
    lines = ["## Judged turns", "",
             f"Judge: {names(judge.models)}; rubric {'' if rubric.boolean else rubric.name + ' '}"
             f"{names(judge.rubric_versions)} "
             f"(fingerprint {names(judge.rubric_fingerprints)}; {names(judge.rubric_sources)}). "
             f"Scale: {SCALES[rubric.name]}. {shares}Rates are of judged turns "
             "(answered: of judged rounds with a learner message), "
             "with a 95% Wilson interval (turns of one run are correlated, so these intervals are narrow); "
             "two groups' rates are compared by a cluster bootstrap over runs (runs resampled with their "
             "turns); the turn score is a mean over runs with a bootstrap interval. "
             "Missing verdicts (unusable replies) are counted, not scored. Judge calls are priced here, "
             "not in the class's tokens and cost.", ""]
    if len(judge.models) > 1 or len(judge.rubric_fingerprints) > 1 or len(judge.rubrics or []) > 1:
        lines += ["**Warning:** runs were judged by different judges or rubrics; their scores are not comparable.",
                  ""]
    lines += _scores_table("Overall", {"all runs": report.overall.judge}, rubric)
    if not rubric.boolean and report.overall.judge is not None:
        lines += _labels_table(report.overall.judge, rubric)
    for key, title in groupings:
        if len(report.grouping(key)) > 1:
            lines += _scores_table(title, {name: group.judge for name, group in report.grouping(key).items()},
                                   rubric)
    runs = {r.run_id: r.judge.summary for r in report.runs
            if r.judge is not None and (r.judge.rubric or DEFAULT.name) == rubric.name}
    lines += _scores_table("Per run", dict(runs), rubric)
    return lines
