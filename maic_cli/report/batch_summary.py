"""A batch's reports: saving them, merging batches (one path for ``run --merge`` and ``report --out``),
the exit-code rule, and the summary printed at the end.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from .. import __version__
from ..errors import InputError, MaicError
from ..evaluation.collector import fewer_collections
from ..untrusted import clean

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

    from ..evaluation.run_results import RunResult
    from .batch_report import BatchReport, MetaValue


def merge_results(folders: list[Path], out: Path) -> list[RunResult]:
    """The runs of ``folders``, each folder and each run counted once, for a report in ``out``."""
    from ..evaluation.run_results import load_runs

    seen: dict[Path, Path] = {}
    for folder in folders:
        real = folder.resolve()
        if real in seen:
            raise InputError(f"--merge {folder}: the same folder as --merge {seen[real]}; name each folder once")
        seen[real] = folder
    if out.resolve() in seen:
        raise InputError(f"--out {out}: one of the --merge folders; the merged report goes to its own folder")
    origin: dict[str, Path] = {}
    results = []
    for folder in folders:
        for result in load_runs(folder):
            if result.run_id in origin:
                raise InputError(f"run {clean(result.run_id)} is in both {origin[result.run_id]} and {folder}; "
                                 "merge each run once")
            origin[result.run_id] = folder
            results.append(result)
    return results


def merge_batches(folders: list[Path], out: Path) -> tuple[BatchReport, list[RunResult]]:
    """The one merge path (``maic run --merge`` and ``maic report A B --out``): the runs of ``folders``
    into the reports of ``out``, a folder of its own; exit with :func:`batch_exit_code` of the runs."""
    from ..evaluation.batch_folder import claim

    results = merge_results(folders, out)
    if not results:
        raise InputError(f"{', '.join(map(str, folders))}: no finished runs to report on")
    meta: dict[str, MetaValue] = {"merged": ", ".join(map(str, folders)), "maic": __version__,
                                  **shared_meta(folders)}
    claim(out, "--out", meta)
    return save_reports(out, results, meta), results


PER_BATCH = frozenset({"maic", "merged", "rebuilt by", "shard", "interrupted", "runs planned", "concurrency"})


def shared_meta(folders: list[Path]) -> dict[str, MetaValue]:
    """What the merged batches' reports all say alike about how they were run (scenarios, judge, turns …),
    each report.json read through the report model: a bad field is one line naming it, before anything is
    written."""
    from .reports import previous_meta

    first, *others = [previous_meta(folder) for folder in folders]
    return {key: value for key, value in first.items() if key not in PER_BATCH
            and all(key in meta and meta[key] == value and type(meta[key]) is type(value) for meta in others)}


def batch_exit_code(results: list[RunResult]) -> int:
    """One rule for a batch and for a merge of batches: 0 when every run passed, else 1."""
    return 0 if all(r.passed for r in results) else 1


def save_reports(folder: Path, results: list[RunResult], meta: dict[str, MetaValue]) -> BatchReport:
    from ..store.paths import write_atomic
    from . import chart_worker
    from .report_html import chart_plan, report_html  # imports matplotlib only when it draws
    from .reports import write_reports

    # In the order of their files (as load_runs reads them), not the order they finished in: the bootstrap's
    # resamples draw runs by position, so `maic report DIR` rebuilds the very intervals the batch wrote.
    results = sorted(results, key=lambda result: result.run_id + ".json")
    worker = chart_worker.take()  # a big batch's charts: drawn in another process while the files are written

    def built(report: BatchReport) -> None:
        if worker is not None:
            worker.submit([chart.job for chart in chart_plan(report, results)])

    with fewer_collections():
        try:
            report = write_reports(folder, results, meta, on_built=built)
            drawn = worker.result() if worker is not None else None
            write_atomic(folder / "report.html", report_html(report, results, drawn))
            return report
        except OSError as exc:
            raise MaicError(f"{folder}: cannot write the report: {exc.strerror or exc}") from None
        finally:
            if worker is not None:
                worker.close()


def summary_table(report: BatchReport, group: str = "by_scenario", name: str = "scenario") -> Table:
    """The batch at a glance, one row per scenario (or per prompt set, model …: ``group``)."""
    from rich.table import Table
    from rich.text import Text

    table = Table(title="maic run" if group == "by_scenario" else f"maic run by {name}", box=None, pad_edge=False)
    for column in (name, "runs", "passed", "errors", "rounds", "agent turns", "cue-user", "ttft p50",
                   "turn p50", "cost"):
        table.add_column(column, justify="left" if column == name else "right")
    for key, s in report.grouping(group).items():  # Text(key): a file's name is not Rich markup
        table.add_row(Text(key), str(s.runs), str(s.passed), str(s.errors), str(s.rounds), str(s.agent_turns),
                      "–" if s.cue_user_rate is None else f"{s.cue_user_rate:.0%}",
                      "–" if s.ttft_p50 is None else f"{s.ttft_p50:.2f}s",
                      "–" if s.turn_latency_p50 is None else f"{s.turn_latency_p50:.2f}s", f"${s.total_cost:.4f}")
    return table


def judge_table(report: BatchReport, group: str = "by_model", name: str = "model") -> Table | None:
    """The judge's scores at a glance (share of judged turns meeting each criterion), one row per model."""
    from rich.table import Table
    from rich.text import Text

    if report.judge is None or report.overall.judge is None:
        return None
    labels = report.judge.criteria  # the rubric's (report/report_judge.py); its rates, then its score
    names = list(report.overall.judge.rates)
    table = Table(title="judged turns", box=None, pad_edge=False)
    for column in (name, "turns", "missing", *(labels.get(c, c) for c in names), "score", "judge cost"):
        table.add_column(column, justify="left" if column == name else "right")
    for key, s in report.grouping(group).items():
        if (judge := s.judge) is None:
            continue
        rates = [judge.rates[c].value if c in judge.rates else None for c in names]
        score = next(iter(judge.means.values())).value if judge.means else None
        table.add_row(Text(key), str(judge.turns_judged), str(judge.turns_missing),
                      *("–" if rate is None else f"{rate:.0%}" for rate in rates),
                      "–" if score is None else f"{score:.2f}", f"${judge.usage.cost:.4f}")
    return table


def print_summary(report: BatchReport, console: Console) -> None:
    from rich.text import Text

    console.print(summary_table(report))
    if len(report.by_prompts) > 1:  # prompt sets compared: side by side
        console.print(summary_table(report, "by_prompts", "prompt set"))
    if (judged := judge_table(report)) is not None:
        console.print(judged)
    if report.tutoring:
        from .report_tutoring_html import tutoring_table

        console.print(tutoring_table(report.tutoring))
    failing = [r for r in report.runs if not r.passed]
    for run in failing[:20]:
        problems = run.failures or [run.error or run.status]
        console.print(Text.assemble(("✗ ", "red"), clean(f"{run.run_id}: " + "; ".join(problems))))
    if len(failing) > 20:
        console.print(f"… and {len(failing) - 20} more in report.md")
