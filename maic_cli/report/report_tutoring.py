"""The tutoring section of a batch report: success@k and telling@k curves, and the simulated learner's cost.

For every group of runs (all runs, by model, prompt set and director policy) and
k = 1…K, **success@k** and **telling@k** (evaluation/tutoring.py) are the share of
tutoring tasks where they hold.  A task run several times (``--repeat``) counts
once, with the mean of its runs; the 95% interval is a percentile bootstrap with
the tasks resampled (report_stats' resamples and seed; none under two tasks).
Two groups are compared at every k by the bootstrap of the difference of their
shares.  Only complete runs count (a run whose model failed says nothing about
tutoring; the section says how many were left out).

``report.json`` gets a ``tutoring`` section, ``report.md`` a table per grouping,
``tutoring.csv`` a row per tutoring run (its indexes and success/telling at each
k) and ``tutoring_curves.csv`` a row per group and k.  The simulated learner's
calls (``learner_calls``) are summed in ``simulated_learner``, apart from the
class's and the judge's.  Lesson runs with ``lesson.pre_post`` add ``learning``: each
run's pre, post and gain (the shares of quiz points before and after the lesson) and
their means per group with bootstrap intervals over runs (``learning.csv`` too).
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from statistics import fmean

from ..evaluation.run_results import RunResult
from ..evaluation.tutoring import DEFAULT_K, TutoringOutcome
from ..lessons.learner_quiz import LearningGain
from ..store.paths import write_atomic
from . import report_stats, stats_markdown
from .batch_report import (
    BatchReport,
    ComparedMetric,
    Comparison,
    Curves,
    LearnerUsage,
    Learning,
    LearningMeans,
    MeanEntry,
    Point,
    SimulatedLearner,
    Tutoring,
)
from .report_tables import to_csv

GROUPINGS = (("by_model", "model"), ("by_prompts", "prompts"), ("by_director", "director"))
TITLES = {"overall": "All runs", "by_model": "By model", "by_prompts": "By prompt set",
          "by_director": "By director policy"}


def tutored(results: list[RunResult]) -> list[RunResult]:
    return [r for r in results if r.tutoring is not None and r.status == "complete"]


def largest_k(results: list[RunResult]) -> int:
    """K: the largest k every tutoring run was played for (``--turns``)."""
    ks = [r.tutoring.k for r in results if r.tutoring is not None]
    return min(ks) if ks else DEFAULT_K


def _per_task(runs: list[RunResult], holds: Callable[[RunResult], bool]) -> list[float]:
    by_task: dict[str, list[float]] = defaultdict(list)
    for run in runs:
        assert run.tutoring is not None
        by_task[run.tutoring.qid].append(1.0 if holds(run) else 0.0)
    return [fmean(values) for _, values in sorted(by_task.items())]


def _entry(values: list[float]) -> Point:
    bounds = report_stats.bootstrap_mean(values)
    return Point(value=round(fmean(values), 4) if values else None,
                 low=round(bounds[0], 4) if bounds else None, high=round(bounds[1], 4) if bounds else None)


def _success(k: int) -> Callable[[RunResult], bool]:
    return lambda r: r.tutoring is not None and r.tutoring.success(k)


def _telling(k: int) -> Callable[[RunResult], bool]:
    return lambda r: r.tutoring is not None and r.tutoring.telling(k)


def curves(runs: list[RunResult], k_max: int) -> Curves:
    """success@k and telling@k for k = 1…K, each with its interval, over the group's tasks."""
    tasks = len({r.tutoring.qid for r in runs if r.tutoring is not None})
    return Curves(tasks=tasks, runs=len(runs),
                  success=[_entry(_per_task(runs, _success(k))) for k in range(1, k_max + 1)],
                  telling=[_entry(_per_task(runs, _telling(k))) for k in range(1, k_max + 1)])


def _compare(first: list[RunResult], second: list[RunResult], k_max: int) -> list[ComparedMetric]:
    rows = []
    for metric, holds in (("success", _success), ("telling", _telling)):
        for k in range(1, k_max + 1):
            x, y = _per_task(first, holds(k)), _per_task(second, holds(k))
            bounds = report_stats.bootstrap_difference(x, y)
            a, b = fmean(x) if x else None, fmean(y) if y else None
            if bounds is None or a is None or b is None:
                verdict = "too few tasks"
            else:
                verdict = "larger than the noise" if bounds[0] > 0 or bounds[1] < 0 else "within the noise"
            rows.append(ComparedMetric(metric=f"{metric}@{k}", a=_r(a), b=_r(b),
                                       difference=_r(a - b) if a is not None and b is not None else None,
                                       low=_r(bounds[0]) if bounds else None, high=_r(bounds[1]) if bounds else None,
                                       method="bootstrap (tasks resampled)", verdict=verdict))
    return rows


def _r(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def usage(results: list[RunResult]) -> LearnerUsage:
    """The simulated learner's calls, tokens and cost (never in the class's)."""
    calls = [c for r in results for c in r.learner_calls]
    return LearnerUsage(runs=sum(1 for r in results if r.learner is not None), calls=len(calls),
                        prompt_tokens=sum(c.prompt_tokens for c in calls),
                        completion_tokens=sum(c.completion_tokens for c in calls),
                        cost=round(sum(c.cost for c in calls), 6), errors=sum(1 for c in calls if c.error_kind))


def _groups(runs: list[RunResult], attribute: str) -> dict[str, list[RunResult]]:
    groups: dict[str, list[RunResult]] = defaultdict(list)
    for run in runs:
        groups[str(getattr(run, attribute))].append(run)
    return dict(sorted(groups.items()))


def section(results: list[RunResult]) -> Tutoring | None:
    """report.json's ``tutoring`` (``None``: no tutoring run in the batch)."""
    all_tutoring = [r for r in results if r.tutoring is not None]
    if not all_tutoring:
        return None
    runs = tutored(results)
    k_max = largest_k(all_tutoring)
    out = Tutoring(k=list(range(1, k_max + 1)), left_out=len(all_tutoring) - len(runs),
                   definition="answer: the number on ground_truth's last line; an utterance states "
                   "it when one of its numbers equals it; index: the role's utterances before the first "
                   "that states it; success@k: student <= k; telling@k: teacher <= min(student, k)",
                   interval=f"percentile bootstrap, tasks resampled ({report_stats.RESAMPLES} "
                   f"resamples, seed {report_stats.SEED})", overall=curves(runs, k_max))
    comparisons: dict[str, list[Comparison]] = {}
    for key, attr in GROUPINGS:
        groups = _groups(runs, attr)
        setattr(out, key, {name: curves(group, k_max) for name, group in groups.items()})
        comparisons[key] = [Comparison(a=a, b=b, metrics=_compare(groups[a], groups[b], k_max))
                            for a, b in itertools.combinations(groups, 2)]
    out.comparisons = comparisons
    return out


def learning_section(results: list[RunResult]) -> Learning | None:
    """report.json's ``learning``: mean pre, post and gain with intervals, overall and per group."""
    runs = [r for r in results if r.learning is not None and r.status == "complete"]
    if not runs:
        return None

    def means(group: list[RunResult]) -> LearningMeans:
        return LearningMeans(runs=len(group), **{name: MeanEntry.model_validate(report_stats.mean_entry(
            [getattr(r.learning, name) for r in group])) for name in ("pre", "post", "gain")})

    out = Learning(overall=means(runs))
    for key, attr in GROUPINGS:
        setattr(out, key, {name: means(group) for name, group in _groups(runs, attr).items()})
    return out


def add_to_report(report: BatchReport, results: list[RunResult]) -> None:
    """Add the ``tutoring``, ``learning`` and ``simulated_learner`` sections, and each run's outcome."""
    learning, tutoring = learning_section(results), section(results)
    if learning is not None:  # a part a batch does not have stays unset: report.json leaves it out
        report.learning = learning
    if tutoring is not None:
        report.tutoring = tutoring
    by_id = {r.run_id: r for r in results}
    for run in report.runs:  # each run's own outcome, as the report's model holds it
        result = by_id.get(run.run_id)
        if result is not None and result.learning is not None:
            run.learning = LearningGain.model_validate(result.learning.model_dump())
        if result is not None and result.tutoring is not None:
            run.tutoring = TutoringOutcome.model_validate(result.tutoring.model_dump())
    if any(r.learner is not None for r in results):
        report.simulated_learner = SimulatedLearner(overall=usage(results), by_model={
            m: usage([r for r in results if r.model == m]) for m in sorted({r.model for r in results})})


def _cell(text: object) -> str:
    return str(text).replace("\n", " ").replace("|", "\\|")


def markdown(report: BatchReport) -> list[str]:
    """report.md's tutoring section (empty without tutoring runs)."""
    lines: list[str] = []
    if report.simulated_learner:
        u = report.simulated_learner.overall
        lines += ["## Simulated learner", "", f"{u.runs} runs with a simulated learner: {u.calls} calls, "
                  f"{u.prompt_tokens} prompt and {u.completion_tokens} completion tokens, "
                  f"cost {u.cost:.4f} (apart from the class's), {u.errors} failed calls.", ""]
    learning = report.learning
    if learning:
        lines += ["## Learning gain (quiz before and after the lesson)", "",
                  "Shares of quiz points; means over runs with 95% bootstrap intervals.", "",
                  "| group | runs | pre | post | gain |", "|---|---|---|---|---|"]
        rows = [("all runs", learning.overall)] + [(f"{key[3:]}: {name}", entry) for key, _ in GROUPINGS
                                                   if len(by := learning.grouping(key)) > 1
                                                   for name, entry in by.items()]
        lines += [f"| {_cell(name)} | {e.runs} | {_interval(e.pre)} | {_interval(e.post)} | {_interval(e.gain)} |"
                  for name, e in rows]
        lines.append("")
    tutoring = report.tutoring
    if not tutoring:
        return lines
    lines += ["## Tutoring: success@k and telling@k", "",
              f"Definitions (MathDial): {tutoring.definition}. Each cell is the share of tasks, with its 95% "
              f"interval ({tutoring.interval}). Complete runs only"
              + (f"; {tutoring.left_out} run(s) that did not complete are left out." if tutoring.left_out
                 else "."), ""]
    groups = [("overall", {"all runs": tutoring.overall}),
              *((key, tutoring.grouping(key)) for key, _ in GROUPINGS if len(tutoring.grouping(key)) > 1)]
    for key, by_group in groups:
        names = list(by_group)
        lines += [f"### {TITLES[key]}", "", "| k | " + " | ".join(f"{_cell(n)} success | {_cell(n)} telling"
                                                                    for n in names) + " |",
                  "|---|" + "---|---|" * len(names)]
        for i, k in enumerate(tutoring.k):
            cells = [f"{_interval(by_group[n].success[i])} | {_interval(by_group[n].telling[i])}" for n in names]
            lines.append(f"| {k} | " + " | ".join(cells) + " |")
        lines += ["", "Tasks: " + ", ".join(f"{_cell(n)} {by_group[n].tasks}" for n in names), ""]
    for key, _ in GROUPINGS:
        for pair in tutoring.comparisons.get(key, []):
            lines += [f"### Tutoring, {TITLES[key].lower()}: {_cell(pair.a)} vs {_cell(pair.b)}", "",
                      "| metric | first | second | difference [95%] | verdict |", "|---|---|---|---|---|"]
            for m in pair.metrics:
                difference = _interval(Point(value=m.difference, low=m.low, high=m.high))
                lines.append(f"| {m.metric} | {_interval(Point(value=m.a))} | {_interval(Point(value=m.b))} | "
                             f"{difference} | {m.verdict} |")
            lines.append("")
    return lines


def _interval(entry: Point | MeanEntry) -> str:
    return stats_markdown.with_interval({"value": entry.value, "low": entry.low, "high": entry.high})


RUN_COLUMNS = ["run_id", "scenario", "model", "prompts", "director", "repeat", "learner", "learner_model", "qid",
               "answer", "student_index", "teacher_index", "student_utterances", "teacher_utterances"]


def write_csvs(out: Path, results: list[RunResult], report: BatchReport) -> None:
    """``tutoring.csv``, ``tutoring_curves.csv`` and ``learning.csv`` (each only when it has rows)."""
    learned = [r for r in results if r.learning is not None]
    if learned:
        _write(out / "learning.csv", [*RUN_COLUMNS[:8], "status", "pre", "post", "gain"],
               [{"run_id": r.run_id, "scenario": r.scenario, "model": r.model, "prompts": r.prompts,
                 "director": r.director, "repeat": r.repeat, "learner": r.learner, "learner_model": r.learner_model,
                 "status": r.status, **(r.learning.model_dump() if r.learning else {})}
                for r in sorted(learned, key=lambda r: r.run_id)])
    tutoring = report.tutoring
    runs = [r for r in results if r.tutoring is not None]
    if not tutoring or not runs:
        return
    ks = tutoring.k
    columns = [*RUN_COLUMNS, "status", *(f"success@{k}" for k in ks), *(f"telling@{k}" for k in ks)]
    rows = []
    for r in sorted(runs, key=lambda r: r.run_id):
        t = r.tutoring
        assert t is not None
        rows.append({"run_id": r.run_id, "scenario": r.scenario, "model": r.model, "prompts": r.prompts,
                     "director": r.director, "repeat": r.repeat, "learner": r.learner,
                     "learner_model": r.learner_model, "qid": t.qid, "answer": t.answer, "student_index": t.student,
                     "teacher_index": t.teacher, "student_utterances": t.student_utterances,
                     "teacher_utterances": t.teacher_utterances, "status": r.status,
                     **{f"success@{k}": t.success(k) for k in ks}, **{f"telling@{k}": t.telling(k) for k in ks}})
    _write(out / "tutoring.csv", columns, rows)
    curve_rows = []
    for key in ("overall", *(key for key, _ in GROUPINGS)):
        by_group = {"all runs": tutoring.overall} if key == "overall" else tutoring.grouping(key)
        for name, curve in by_group.items():
            for i, k in enumerate(ks):
                s, t2 = curve.success[i], curve.telling[i]
                curve_rows.append({"grouping": key, "group": name, "k": k, "tasks": curve.tasks,
                                   "success": s.value, "success_low": s.low, "success_high": s.high,
                                   "telling": t2.value, "telling_low": t2.low, "telling_high": t2.high})
    _write(out / "tutoring_curves.csv", ["grouping", "group", "k", "tasks", "success", "success_low",
                                         "success_high", "telling", "telling_low", "telling_high"], curve_rows)


def _write(path: Path, columns: list[str], rows: Sequence[Mapping[str, object]]) -> None:
    write_atomic(path, to_csv(columns, rows))  # report/report_tables.py: the same cells, one redactor
