"""A big batch draws its report's charts in a second process (report/chart_worker.py): the same bytes as
drawn in the batch's own process, and a worker that fails, dies or is interrupted changes nothing."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from maic_cli.evaluation.run_results import RunResult
from maic_cli.report import chart_worker
from maic_cli.report.batch_summary import save_reports
from maic_cli.report.report_charts import ChartJob, draw_job
from maic_cli.report.report_html import chart_plan, report_html
from tests.test_html_render import charts_in, page_for, round_summary, run_result


def judged_batch() -> list[RunResult]:
    """Two models, three repeats: every kind of chart (bars, intervals, boxes) with data in it."""
    return [run_result(model, k, [round_summary(0, ["teacher", "curious_student"], latencies=[0.1 * k, 0.3]),
                                  round_summary(1, ["teacher"], "end" if k % 2 else "max_turns",
                                                latencies=[0.05 * k + 0.01])])
            for model in ("a", "b$x$") for k in (1, 2, 3)]


def drawn_by(worker: chart_worker.ChartWorker, jobs: list[ChartJob]) -> list[str | None] | None:
    worker.submit(jobs)
    return worker.result()


@pytest.fixture
def no_waiting_worker() -> object:
    worker = chart_worker.take()  # none left by another test
    if worker is not None:
        worker.close()
    yield None
    worker = chart_worker.take()
    if worker is not None:
        worker.close()


def test_the_worker_draws_the_same_svg_bytes_as_this_process() -> None:
    results = judged_batch()
    report, page = page_for(results)
    jobs = [chart.job for chart in chart_plan(report, results)]
    drawn = drawn_by(chart_worker.ChartWorker(), jobs)
    assert drawn is not None and len(drawn) == 4 and all(svg and svg.startswith("<svg") for svg in drawn)
    assert drawn == [draw_job(job) for job in jobs]
    assert report_html(report, results, drawn) == page
    assert charts_in(page) == ["speakers", "end_reasons", "routing_model", "latency"]


def test_a_worker_killed_before_it_answers_leaves_the_charts_to_this_process() -> None:
    results = judged_batch()
    report, page = page_for(results)
    worker = chart_worker.ChartWorker()
    worker._proc.kill()
    drawn = drawn_by(worker, [chart.job for chart in chart_plan(report, results)])
    assert drawn is None
    assert report_html(report, results, drawn) == page  # drawn here instead: the same page


def test_an_answer_of_the_wrong_length_is_not_used() -> None:
    results = judged_batch()
    report, page = page_for(results)
    assert report_html(report, results, ["<svg/>"]) == page  # one chart for four: drawn here


def test_a_worker_nobody_gives_work_ends_when_its_input_closes() -> None:
    worker = chart_worker.ChartWorker()
    worker._proc.stdin.close()  # type: ignore[union-attr]
    assert worker._proc.wait(60) == 0


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_ctrl_c_reaches_the_worker_and_it_still_draws() -> None:
    results = judged_batch()
    report, _ = page_for(results)
    worker = chart_worker.ChartWorker()
    time.sleep(1.0)  # past the interpreter's start, into the worker's own code (a slow machine may need it)
    os.kill(worker._proc.pid, signal.SIGINT)
    time.sleep(0.2)
    assert worker._proc.poll() is None
    jobs = [chart.job for chart in chart_plan(report, results)]
    assert drawn_by(worker, jobs) == [draw_job(job) for job in jobs]


def test_only_a_big_batch_starts_a_worker_and_a_report_takes_it_once(no_waiting_worker: object) -> None:
    chart_worker.start(chart_worker.MIN_RUNS - 1)
    assert chart_worker.take() is None
    chart_worker.start(chart_worker.MIN_RUNS)
    worker = chart_worker.take()
    assert worker is not None and chart_worker.take() is None
    worker.close()
    assert worker._proc.poll() is not None


def test_save_reports_with_a_worker_writes_what_it_writes_without(tmp_path: Path, no_waiting_worker: object,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    answers: list[list[str | None] | None] = []
    real_result = chart_worker.ChartWorker.result

    def result(self: chart_worker.ChartWorker) -> list[str | None] | None:
        answers.append(real_result(self))
        return answers[-1]

    monkeypatch.setattr(chart_worker.ChartWorker, "result", result)
    results = judged_batch()
    meta: dict[str, object] = {"maic": "test"}
    save_reports(tmp_path / "alone", results, dict(meta))  # type: ignore[arg-type]
    chart_worker.start(chart_worker.MIN_RUNS)
    save_reports(tmp_path / "helped", results, dict(meta))  # type: ignore[arg-type]
    assert chart_worker.take() is None  # the report took the worker
    assert len(answers) == 1 and answers[0] is not None and len(answers[0]) == 4  # and the worker drew
    for name in ("report.html", "report.json", "report.md"):
        assert (tmp_path / "helped" / name).read_bytes() == (tmp_path / "alone" / name).read_bytes(), name


def test_the_worker_module_is_started_as_python_runs_it() -> None:
    """``python -m maic_cli.report.chart_worker`` with nothing on its input: exits 0 and prints nothing."""
    done = subprocess.run([sys.executable, "-m", "maic_cli.report.chart_worker"], input=b"",
                          capture_output=True, timeout=120)
    assert (done.returncode, done.stdout) == (0, b"")


def test_a_maic_cli_or_json_py_in_the_current_folder_never_runs_in_the_worker(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A batch folder a user was sent may hold anything: the child imports neither maic nor the standard library
    from the folder maic runs in (it did, through ``python -m``, and the report still came out right)."""
    marker = tmp_path / "ran"
    (tmp_path / "maic_cli").mkdir()
    for planted in (tmp_path / "maic_cli" / "__init__.py", tmp_path / "json.py", tmp_path / "pickle.py"):
        planted.write_text(f"open({str(marker)!r}, 'a').write({planted.name!r})\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))  # ignored by the child (python -I)
    results = judged_batch()
    report, _ = page_for(results)
    jobs = [chart.job for chart in chart_plan(report, results)]
    drawn = drawn_by(chart_worker.ChartWorker(), jobs)
    assert not marker.exists()
    assert drawn == [draw_job(job) for job in jobs]
