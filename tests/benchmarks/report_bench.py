"""Benchmark: the CPU of a batch report's non-chart phases, for a batch folder given on the command line.

Run:  python tests/benchmarks/report_bench.py BATCH_DIR [REPEATS] [--from-files]

The batch's run files are loaded once (not timed); the folder's ``runs/`` and ``transcripts/`` are
copied to a temporary folder, where the tables are written.  The transcripts are read once before
timing and kept with their runs, as ``maic run`` keeps the transcripts it wrote (``--from-files``:
turns.csv reads them from the files each time, as ``maic report DIR`` does).  Then, ``REPEATS`` times
(default 5), each phase of report/reports.py ``write_reports`` is timed in CPU seconds
(``time.process_time``), the statistics' caches emptied first so that every repetition computes
its intervals as a fresh ``maic report`` does:

* build:    ``build_report`` (groups, intervals, comparisons, judge, tutoring, run rows);
* validate: the strings cleaned (before: ``BatchReport.model_validate(finite(safe_strings(model_dump())))``,
            now report/report_clean.py ``cleaned_report``, one walk over the model);
* markdown: ``report_markdown``;
* json:     ``BatchReport.to_json``;
* tables:   ``write_tables`` and ``report_tutoring.write_csvs``.

It prints the median of each phase and their total, and the load average.

Measured on the 1,000-run batch of the batch benchmark (one scenario, one model: every grouping has
one group), before (commit 27f6bde) and after the report was made cheaper, run in turn three times on the
shared 2-core machine (load average 1.4-1.9), CPU seconds, median of 5 each:

    before:  build 0.27-0.36  validate 0.09  markdown 0.07  json 0.08-0.12  tables 0.08-0.10  total 0.61-0.68
    after:   build 0.11-0.18  validate 0.03  markdown 0.03-0.05  json 0.03-0.04  tables 0.07  total 0.28-0.37

(2.2× on the median total.)  The same batch with its runs spread over 3 scenarios, 4 models, 2 prompt
sets and 2 directors (12 groups, 8 comparisons: more bootstraps, which are at numpy's speed now):
total 1.30-1.58 → 0.79-0.91 (build 0.85-1.09 → 0.56-0.66).  With ``--from-files`` the 1,000
transcripts are parsed each time (store/transcript.py, 0.6 s of tables) and the total is 1.26-1.36 → 0.98-1.08.
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def _phases(out: Path, results: list[Any]) -> list[tuple[str, Callable[[dict[str, Any]], None]]]:
    from maic_cli.report import report_tutoring, reports
    from maic_cli.report.report_tables import write_tables

    meta: dict[str, Any] = {"maic": "bench", "runs planned": len(results)}

    def build(state: dict[str, Any]) -> None:
        state["built"] = reports.build_report(results, meta)

    def validate(state: dict[str, Any]) -> None:
        try:
            from maic_cli.report.report_clean import cleaned_report
        except ImportError:  # the code before: dump, clean, validate again
            from maic_cli.report.batch_report import BatchReport

            dump = state["built"].model_dump(exclude_unset=True)
            state["report"] = BatchReport.model_validate(reports.finite(reports.safe_strings(dump)))  # type: ignore[attr-defined]
            return
        state["report"] = cleaned_report(state["built"])

    def markdown(state: dict[str, Any]) -> None:
        reports.report_markdown(state["report"])

    def json(state: dict[str, Any]) -> None:
        state["report"].to_json()

    def tables(state: dict[str, Any]) -> None:
        write_tables(out, results)
        report_tutoring.write_csvs(out, results, state["report"])

    return [("build", build), ("validate", validate), ("markdown", markdown), ("json", json), ("tables", tables)]


def _forget_statistics() -> None:
    from maic_cli.report import report_stats

    for name in ("_cached_draws", "_cached_bounds", "_cached_means"):
        cache = getattr(report_stats, name, None)
        if isinstance(cache, dict):
            cache.clear()
    forget = getattr(report_stats, "forget", None)
    if callable(forget):
        forget()


def main() -> None:
    if len([arg for arg in sys.argv[1:] if arg != "--from-files"]) < 1:
        raise SystemExit(__doc__)
    from_files = "--from-files" in sys.argv
    args = [arg for arg in sys.argv[1:] if arg != "--from-files"]
    folder = Path(args[0])
    repeats = int(args[1]) if len(args) > 1 else 5
    from maic_cli.evaluation.collector import fewer_collections
    from maic_cli.evaluation.run_results import load_runs

    results = sorted(load_runs(folder), key=lambda result: result.run_id + ".json")
    with tempfile.TemporaryDirectory() as temp:
        out = Path(temp)
        shutil.copytree(folder / "runs", out / "runs")
        if (folder / "transcripts").is_dir():
            shutil.copytree(folder / "transcripts", out / "transcripts")
        if not from_files:
            from maic_cli.report.report_tables import read_run_transcript

            for result in results:
                if (transcript := read_run_transcript(out, result)) is not None:
                    result.keep_recorded(transcript)
        phases = _phases(out, results)
        times: dict[str, list[float]] = {name: [] for name, _ in phases}
        for _ in range(repeats):
            _forget_statistics()
            state: dict[str, Any] = {}
            with fewer_collections():
                for name, phase in phases:
                    start = time.process_time()
                    phase(state)
                    times[name].append(time.process_time() - start)
    medians = {name: statistics.median(values) for name, values in times.items()}
    source = ", transcripts from files" if from_files else ""
    print(f"{len(results)} runs, {repeats} repetitions{source}, load average {os.getloadavg()[0]:.2f}; "
          "CPU seconds, median:")
    print("  " + "  ".join(f"{name} {value:.3f}" for name, value in medians.items())
          + f"  total {sum(medians.values()):.3f}")


if __name__ == "__main__":
    main()
