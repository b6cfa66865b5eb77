"""``maic report DIR…``: rebuild the reports of finished batches without running anything.

One folder: its report.json, report.md, turns.csv and rounds.csv are written again
from its ``runs/`` results (after an upgrade of maic, or to get the new tables and
intervals for an old batch).  Several folders: their runs are combined into
``--out``, as ``maic run --merge`` does, each folder and each run counted once.
Only maic's own batch folders are read or written.

``--judge MODEL`` first judges the stored transcripts of one batch (no class is
re-run; evaluation/judging.py) and keeps the verdicts in its ``runs/`` results.  A run already
judged by the same model with the same rubric keeps its verdicts (so an interrupted
judging continues where it stopped, and judging again costs nothing); ``--rejudge``
judges every run again.  The rubric comes from ``--prompts DIR``, else
``$MAIC_HOME/prompts``, else the built-in one.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from .. import __version__
from ..errors import InputError
from ..untrusted import clean
from .errors import EXIT_INTERRUPTED, friendly

if TYPE_CHECKING:
    from ..evaluation.run_results import RunResult

def judge_batch(folder: Path, results: list[RunResult], model: str, *, api_base: str | None, prompts: Path | None,
                rejudge: bool, concurrency: int, rubric: str = "default") -> tuple[int, int]:
    """Judge a finished batch's transcripts in place; (judged, skipped)."""
    import asyncio

    from ..evaluation.judge import ATTEMPTS
    from ..evaluation.judging import judge_folder, make_judge, say_error_runs_not_judged
    from ..store.prompts import load_prompt_set

    judging = make_judge(model, load_prompt_set(prompts), api_base=api_base, rubric=rubric)
    todo = judging.to_judge(results, rejudge=rejudge)
    say_error_runs_not_judged(results)
    if todo:
        typer.echo(f"Judging {len(todo)} runs ({sum(len(r.rounds) for r in todo)} rounds, up to {ATTEMPTS} judge "
                   f"calls each) with {clean(model)}", err=True)
    saved: list[str] = []
    try:
        asyncio.run(judge_folder(judging, folder, todo, rejudge=rejudge, concurrency=concurrency, saved=saved))
    except KeyboardInterrupt:
        typer.echo(f"Interrupted: {len(saved)} of {len(todo)} runs judged and saved; the reports were not "
                   "rebuilt (run the same command to continue)", err=True)
        raise typer.Exit(EXIT_INTERRUPTED) from None
    return len(todo), sum(r.status == "complete" for r in results) - len(todo)


@friendly
def report(
    folders: list[Path] = typer.Argument(..., help="Output folders of maic run (batches)."),
    out: Path = typer.Option(None, "--out", help="With several folders: where the combined report goes."),
    judge: str = typer.Option(None, "--judge", help="Judge the batch's stored transcripts with this model "
                              "first (one folder; runs judged by it with this rubric are kept)."),
    judge_api_base: str = typer.Option(None, "--judge-api-base", help="Base URL of an OpenAI-compatible server "
                                       "for the judge."),
    rejudge: bool = typer.Option(False, "--rejudge", help="With --judge: judge every run again."),
    prompts: Path = typer.Option(None, "--prompts", help="With --judge: a prompt-set folder whose judge/ "
                                 "templates override the built-in rubric (default: $MAIC_HOME/prompts)."),
    concurrency: int = typer.Option(4, "--concurrency", "-j", min=1, max=512, help="Runs judged at once."),
    rubric: str = typer.Option("default", "--rubric", help="With --judge: the rubric, default or pedagogy (the "
                               "BEA 2025 tutor dimensions, teacher-side turns)."),
) -> None:
    """Rebuild the reports (md, json, csv) of one or more finished batches; nothing is re-run."""
    from rich.console import Console

    from ..evaluation.batch_folder import is_batch_folder
    from ..evaluation.run_results import load_runs
    from ..report import chart_worker
    from ..report.batch_summary import batch_exit_code, merge_batches, print_summary, save_reports
    from ..report.reports import previous_meta
    from .extras import say_if_no_charts

    for folder in folders:
        if not folder.is_dir() or not is_batch_folder(folder):
            raise InputError(f"{folder}: no maic batch there (no runs/ folder); nothing was changed")
    if judge and (len(folders) > 1 or out is not None):
        raise InputError("--judge judges one batch in place: judge each folder, then combine them with --out")
    if (rejudge or prompts is not None or judge_api_base or rubric != "default") and not judge:
        raise InputError("--rejudge, --prompts, --judge-api-base and --rubric go with --judge MODEL")
    if not judge:  # a big report's charts: drawn in another process while the runs load
        chart_worker.start_for(folders)
    if len(folders) == 1 and out is None:
        target, results = folders[0], load_runs(folders[0])
        meta = {**previous_meta(target), "rebuilt by": f"maic {__version__}"}
        if judge:
            judged, skipped = judge_batch(target, results, judge, api_base=judge_api_base, prompts=prompts,
                                          rejudge=rejudge, concurrency=concurrency, rubric=rubric)
            meta["judge"] = judge
            typer.echo(f"Judged {judged} runs" + (f"; {skipped} already judged by {judge} with this rubric "
                                                  "(--rejudge to judge them again)" if skipped else ""), err=True)
    elif out is None:
        raise InputError("several folders need --out: the combined report goes to its own folder")
    else:  # combining batches: the same merge, and the same exit code, as `maic run --merge`
        summary, results = merge_batches(folders, out)
        say_if_no_charts(out)
        print_summary(summary, Console() if sys.stdout.isatty() else Console(width=160))
        typer.echo(f"Report: {out / 'report.html'}, {out / 'report.md'}, {out / 'report.json'}, turns.csv and "
                   "rounds.csv", err=True)
        raise typer.Exit(batch_exit_code(results))
    if not results:
        raise InputError(f"{', '.join(map(str, folders))}: no finished runs to report on")
    summary = save_reports(target, results, meta)
    say_if_no_charts(target)
    print_summary(summary, Console() if sys.stdout.isatty() else Console(width=160))
    typer.echo(f"Report: {target / 'report.html'}, {target / 'report.md'}, {target / 'report.json'}, turns.csv and "
               "rounds.csv", err=True)
