"""What the reports read from a batch folder is checked before it is used: a results file never decides
where maic writes, a transcript is read only when it is the run's, impossible numbers are refused with
their file; one redactor per table; chart labels and groups are never shared between models or keys."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from maic_cli.cli.app import app
from maic_cli.evaluation.run_results import RunResult
from maic_cli.report.batch_report import BatchReport, RunRow
from tests.test_judge import verdict
from tests.test_run import GOOD_ROUND, QA_SCENARIO, run, script, write

runner = CliRunner()


def test_a_crafted_latency_is_refused_with_its_file_not_a_crash(tmp_path: Path) -> None:
    scenario = write(tmp_path / "sky.yaml", QA_SCENARIO)
    out = tmp_path / "out"
    assert run(tmp_path, str(scenario), "--model", script(tmp_path, *GOOD_ROUND), "--out", str(out)).exit_code == 0
    run_file = next((out / "runs").glob("*.json"))
    data = json.loads(run_file.read_text(encoding="utf-8"))
    for bad in (-1e308, "NaN", "Infinity"):
        data["rounds"][0]["turn_latencies"] = [0.5, bad]
        run_file.write_text(json.dumps(data).replace('"NaN"', "NaN").replace('"Infinity"', "Infinity"),
                            encoding="utf-8")
        result = runner.invoke(app, ["report", str(out)])
        assert result.exit_code == 2 and f"{run_file}: damaged run result" in result.stderr, result.output
        assert "Traceback" not in result.output and "\n" not in result.stderr.strip()


def batch(tmp_path: Path, repeat: int = 1) -> Path:
    scenario = write(tmp_path / "sky.yaml", QA_SCENARIO)
    out = tmp_path / "batch" / "out"
    result = run(tmp_path, str(scenario), "--model", script(tmp_path, *GOOD_ROUND), "--repeat", str(repeat),
                 "--out", str(out))
    assert result.exit_code == 0, result.output
    return out


def edit_run(path: Path, **changes: object) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    path.write_text(json.dumps({**data, **changes}), encoding="utf-8")


def test_a_run_id_that_is_not_its_file_name_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    out = batch(tmp_path)
    run_file = next((out / "runs").iterdir())
    edit_run(run_file, run_id="../../pwned", judge=None)
    judge = script(tmp_path, verdict(True, True), name="judge.json")
    result = runner.invoke(app, ["report", str(out), "--judge", judge])
    assert result.exit_code == 2 and run_file.name in result.stderr and "run_id" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "pwned.json").exists() and not list(tmp_path.rglob("pwned*"))


def test_a_run_id_matching_a_crafted_file_name_is_still_refused(tmp_path: Path) -> None:
    out = batch(tmp_path)
    run_file = next((out / "runs").iterdir())
    crafted = out / "runs" / "..json"  # stem "." : a run id that is not a plain name
    crafted.write_text(run_file.read_text(encoding="utf-8"), encoding="utf-8")
    edit_run(crafted, run_id=".")
    result = runner.invoke(app, ["report", str(out)])
    assert result.exit_code == 2 and "..json" in result.stderr


def test_save_run_refuses_a_target_outside_runs(tmp_path: Path) -> None:
    import pytest

    from maic_cli.errors import InputError
    from maic_cli.evaluation.run_results import save_run

    result = RunResult(run_id="../escape", scenario="s", scenario_path="s.yaml", model="m", repeat=1,
                       status="complete")
    with pytest.raises(InputError, match="not a plain name"):
        save_run(tmp_path / "out", result)
    assert not (tmp_path / "escape.json").exists()


def test_a_symlinked_transcript_is_not_read(tmp_path: Path) -> None:
    from maic_cli.evaluation.run_results import load_runs, transcript_path

    out = batch(tmp_path)
    transcript = next((out / "transcripts").iterdir())
    outside = tmp_path / "elsewhere.jsonl"
    transcript.rename(outside)
    transcript.symlink_to(outside)
    assert transcript_path(out, load_runs(out)[0]) is None


def test_a_transcript_of_another_scenario_is_neither_judged_nor_tabled(tmp_path: Path) -> None:
    import csv

    out = batch(tmp_path)
    transcript = next((out / "transcripts").iterdir())
    head, *body = transcript.read_text(encoding="utf-8").splitlines(keepends=True)
    transcript.write_text(json.dumps({**json.loads(head), "scenario": "other"}) + "\n" + "".join(body),
                          encoding="utf-8")
    result = runner.invoke(app, ["report", str(out), "--judge", script(tmp_path, verdict(True, True),
                                                                          name="judge.json")])
    assert result.exit_code == 0, result.output
    saved = json.loads(next((out / "runs").iterdir()).read_text(encoding="utf-8"))
    assert "not this run's" in saved["judge"]["error"] and saved["judge"]["calls"] == []
    with (out / "turns.csv").open(encoding="utf-8", newline="") as handle:
        assert {row["source"] for row in csv.DictReader(handle)} == {"summary"}


def test_turns_csv_holds_only_the_rounds_the_run_reports(tmp_path: Path) -> None:
    import csv

    out = batch(tmp_path)
    transcript = next((out / "transcripts").iterdir())
    head, *body = transcript.read_text(encoding="utf-8").splitlines(keepends=True)
    transcript.write_text(head + "".join(body) * 5, encoding="utf-8")  # five rounds recorded, one reported
    assert runner.invoke(app, ["report", str(out)]).exit_code == 0
    with (out / "turns.csv").open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert rows and {row["round"] for row in rows} == {"1"}


def test_a_table_looks_the_keys_up_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from maic_cli import untrusted
    from maic_cli.report import report_tables

    made: list[int] = []
    real = untrusted.redactor

    def counting() -> object:
        made.append(1)
        return real()

    monkeypatch.setattr(report_tables, "redactor", counting)
    text = report_tables.to_csv(["a", "b"], [{"a": "x", "b": "y"}] * 50)
    assert text.count("x,y") == 50 and len(made) == 1


def run_row(model: str, speakers: list[list[str]] | None = None) -> RunRow:
    """A run of a report, as the charts read it."""
    return RunRow(run_id="r", scenario="sky", model=model, prompts="builtin", director="llm", repeat=1,
                  status="complete", passed=True, speaker_sequence=speakers or [])


def test_two_models_sharing_a_file_name_get_their_own_chart_groups() -> None:
    from maic_cli.report.report_data import speaker_counts

    runs = [run_row("scripted:/a/brisk.json", [["teacher"]]),
            run_row("scripted:/b/brisk.json", [["student", "student"]])]
    counts = speaker_counts(BatchReport(runs=runs))
    assert len(counts) == 2 and sorted(sum(c.values()) for c in counts.values()) == [1, 2]


def test_keys_sharing_their_last_39_characters_keep_separate_labels() -> None:
    from maic_cli.report.report_data import display_names

    tail = "x" * 45
    names = display_names([f"a/{tail}", f"b/{tail}", "c"])
    assert len(set(names.values())) == 3 and names["c"] == "c"
    long_a, long_b = f"p:/a{tail}/m.json", f"p:/b{tail}/m.json"  # same short label, same last 39 characters
    names = display_names([long_a, long_b, "m.json"])
    assert len(set(names.values())) == 3 and names[long_b].endswith(" (2)")
    assert len(set(display_names(["p:/1/m.json", "p:/2/m.json", "m.json (2)"]).values())) == 3


def test_latency_groups_of_models_sharing_a_file_name_are_not_merged() -> None:
    from types import SimpleNamespace

    from maic_cli.report.report_data import turn_latencies

    def result(model: str, latency: float) -> SimpleNamespace:
        return SimpleNamespace(model=model, prompts="builtin", director="llm",
                               rounds=[SimpleNamespace(turn_latencies=[latency])])

    report = BatchReport(runs=[run_row("scripted:/a/m.json"), run_row("scripted:/b/m.json")])
    samples = turn_latencies(report, [result("scripted:/a/m.json", 1.0), result("scripted:/b/m.json", 2.0)])
    assert sorted(samples.values()) == [[1.0], [2.0]]


