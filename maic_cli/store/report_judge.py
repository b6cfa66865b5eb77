"""The judge's scores in a batch report: per group, per run, compared, and as Markdown.

Verdicts are yes/no (engine/judge.py), so each criterion is a **rate** over judged
turns (``answered`` over judged rounds with a learner message), with a Wilson
interval; the **turn score** (criteria met, 0–5) is a mean per run, averaged over
runs, with a bootstrap interval — the methods of store/report_stats.py.  Two groups'
rates are compared by a cluster bootstrap over runs, not as independent turns: the
turns of one run share its model and its class, so they are correlated.  A verdict
that could not be read is *missing*: counted, never scored.  The judge's calls are
summed here, apart from the class's tokens and cost.

report.json gets, only when some run was judged: ``judge`` at the top (models,
rubric versions, criteria, usage), ``judge`` in every group summary and in every run,
and the ``judge_*`` metrics in ``comparisons``.
"""

from __future__ import annotations

from collections.abc import Callable
from statistics import fmean
from typing import Any

from ..engine.judge import CRITERIA, CRITERIA_LABELS, TurnVerdict
from ..untrusted import one_line
from . import report_stats
from .run_results import CallStat, RunResult

SCALE = ("yes/no per criterion for each agent turn, and yes/no per round for whether the learner's message "
         "was answered; each with a one-line reason; one judge call per round")


def _turns(results: list[RunResult]) -> list[TurnVerdict]:
    return [t for r in results if r.judge for v in r.judge.rounds for t in v.turns if t.usable]


def _criterion(name: str) -> report_stats.RateCount:
    def count(results: list[RunResult]) -> tuple[int, int]:
        turns = _turns(results)
        return sum(bool(getattr(t, name)) for t in turns), len(turns)

    return count


def _answered(results: list[RunResult]) -> tuple[int, int]:
    flags = [v.answered for r in results if r.judge for v in r.judge.rounds if v.answered is not None]
    return sum(flags), len(flags)


def _turn_score(result: RunResult) -> float | None:
    scores = [float(t.score) for t in _turns([result]) if t.score is not None]
    return fmean(scores) if scores else None


RATES: dict[str, report_stats.RateCount] = {**{f"judge_{name}": _criterion(name) for name in CRITERIA},
                                            "judge_answered": _answered}
MEANS: dict[str, report_stats.PerRun] = {"judge_turn_score": _turn_score}
LABELS = {**{f"judge_{name}": f"judge: {label}" for name, label in CRITERIA_LABELS.items()},
          "judge_answered": "judge: learner answered (rounds)", "judge_turn_score": "judge: turn score (0–5)"}
COMPARED = [*RATES, *MEANS]


def judged(results: list[RunResult]) -> bool:
    return any(r.judge is not None for r in results)


def _missing(results: list[RunResult]) -> tuple[int, int]:
    """(turns, rounds) of judged runs without a usable verdict (whatever the reason)."""
    turns = rounds = 0
    for result in results:
        if result.judge is None:
            continue
        for summary in result.rounds:
            verdict = result.judge.verdict(summary.index + 1)
            usable = sum(t.usable for t in verdict.turns) if verdict else 0
            turns += max(summary.agent_turns - usable, 0)
            rounds += summary.learner is not None and (verdict is None or verdict.answered is None)
    return turns, rounds


def usage(calls: list[CallStat]) -> dict[str, Any]:
    return {"calls": len(calls), "prompt": sum(c.prompt_tokens for c in calls),
            "completion": sum(c.completion_tokens for c in calls), "cached": sum(c.cached_tokens for c in calls),
            "cost": round(sum(c.cost for c in calls), 6), "errors": sum(1 for c in calls if c.error_kind)}


def summary(results: list[RunResult]) -> dict[str, Any]:
    """A group's judge scores: counts, each rate and mean with its 95% interval, and the judge's usage."""
    judged_runs = [r for r in results if r.judge is not None]
    enough = len(judged_runs) >= report_stats.MIN_RUNS
    turns_missing, rounds_missing = _missing(judged_runs)
    verdicts = [v for r in judged_runs if r.judge for v in r.judge.rounds]
    return {
        "runs_judged": len(judged_runs), "runs_not_judged": len(results) - len(judged_runs),
        "turns_judged": len(_turns(judged_runs)), "turns_missing": turns_missing,
        "rounds_judged": _answered(judged_runs)[1], "rounds_missing": rounds_missing,
        "repaired_replies": sum(v.repaired for v in verdicts),
        "run_errors": sum(1 for r in judged_runs if r.judge and r.judge.error),
        "rates": {name.removeprefix("judge_"): report_stats.rate_entry(*count(judged_runs), enough)
                  for name, count in RATES.items()},
        "means": {"turn_score": report_stats.mean_entry(
            [v for v in map(_turn_score, judged_runs) if v is not None])},
        "usage": usage([c for r in judged_runs if r.judge for c in r.judge.calls]),
    }


def run_entry(result: RunResult) -> dict[str, Any] | None:
    """One run's judge: who judged with which rubric, its scores, and every round's verdict."""
    if result.judge is None:
        return None
    judge = result.judge
    return {"model": judge.model, "rubric_version": judge.rubric_version,
            "rubric_fingerprint": judge.rubric_fingerprint, "error": judge.error, "summary": summary([result]),
            "rounds": [v.model_dump() for v in judge.rounds]}


def overview(results: list[RunResult]) -> dict[str, Any] | None:
    """The report's top-level ``judge``: ``None`` when no run was judged."""
    judges = [r.judge for r in results if r.judge is not None]
    if not judges:
        return None

    def distinct(pick: Callable[[Any], str]) -> list[str]:
        return sorted({pick(j) for j in judges})

    return {"models": distinct(lambda j: j.model), "rubric_versions": distinct(lambda j: j.rubric_version),
            "rubric_fingerprints": distinct(lambda j: j.rubric_fingerprint),
            "rubric_sources": distinct(lambda j: j.rubric_source),
            "criteria": dict(CRITERIA_LABELS), "scale": SCALE, "labels": LABELS,
            "runs_judged": len(judges), "runs_not_judged": len(results) - len(judges),
            "usage": usage([c for j in judges for c in j.calls])}


def _per_run_counts(results: list[RunResult], count: report_stats.RateCount) -> list[tuple[int, int]]:
    """(successes, trials) of each run with a trial: the clusters a rate is resampled by."""
    return [pair for pair in (count([r]) for r in results) if pair[1]]


def _resampled_rates(counts: list[tuple[int, int]], rng: Any) -> Any:
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


def comparisons(groups: dict[str, list[RunResult]]) -> list[dict[str, Any]]:
    """Every pair of groups on the judge's scores; rates compared by a cluster bootstrap over runs."""
    return report_stats.comparisons(groups, COMPARED, rates=RATES, means=MEANS,
                                    rate_difference=cluster_rate_difference)


# -- Markdown -----------------------------------------------------------------------------------
def _scores_row(name: str, block: dict[str, Any]) -> str:
    cells = [report_stats.with_interval(block["rates"][c.removeprefix("judge_")]) for c in COMPARED[:-1]]
    cells.append(report_stats.with_interval(block["means"]["turn_score"]))
    used = block["usage"]
    return (f"| {report_stats.cell(name)} | {block['runs_judged']} | {block['turns_judged']} | "
            f"{block['turns_missing']} | {block['rounds_missing']} | " + " | ".join(cells) +
            f" | {used['calls']} | {used['prompt'] + used['completion']} | {used['cost']:.4f} |")


def _scores_table(title: str, groups: dict[str, dict[str, Any]]) -> list[str]:
    head = ["name", "runs judged", "turns judged", "turns missing", "rounds missing",
            *(LABELS[c].removeprefix("judge: ") for c in COMPARED), "judge calls", "judge tokens", "judge cost"]
    lines = [f"### {title}", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += [_scores_row(name, block["judge"]) for name, block in groups.items() if "judge" in block]
    return [*lines, ""]


def markdown(report: dict[str, Any], groupings: tuple[tuple[str, str], ...]) -> list[str]:
    """The report.md section on judged turns (nothing when no run was judged)."""
    judge = report.get("judge")
    if not judge:
        return []
    def names(key: str) -> str:
        return one_line(", ".join(judge[key]))

    lines = ["## Judged turns", "",
             f"Judge: {names('models')}; rubric {names('rubric_versions')} "
             f"(fingerprint {names('rubric_fingerprints')}; {names('rubric_sources')}). "
             f"Scale: {SCALE}. Rates are of judged turns (answered: of judged rounds with a learner message), "
             "with a 95% Wilson interval (turns of one run are correlated, so these intervals are narrow); "
             "two groups' rates are compared by a cluster bootstrap over runs (runs resampled with their "
             "turns); the turn score is a mean over runs with a bootstrap interval. "
             "Missing verdicts (unusable replies) are counted, not scored. Judge calls are priced here, "
             "not in the class's tokens and cost.", ""]
    if len(judge["models"]) > 1 or len(judge["rubric_fingerprints"]) > 1:
        lines += ["**Warning:** runs were judged by different judges or rubrics; their scores are not comparable.",
                  ""]
    lines += _scores_table("Overall", {"all runs": report["overall"]})
    for key, title in groupings:
        if len(report.get(key, {})) > 1:
            lines += _scores_table(title, report[key])
    runs = {r["run_id"]: {"judge": r["judge"]["summary"]} for r in report["runs"] if r.get("judge")}
    lines += _scores_table("Per run", runs)
    return lines
