"""Review fixes of the judge and the reports (issue 14 review): crafted results files, provider errors,
Ctrl-C while judging, transcripts that are not the run's, chart labels, the judge's reply reading."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from maic_cli.cli.app import app
from tests.test_judge import verdict
from tests.test_run import GOOD_ROUND, QA_SCENARIO, run, script, write

runner = CliRunner()


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


# -- 1. a results file never decides where maic writes ------------------------------------------------------
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
    from maic_cli.store.run_results import RunResult, save_run

    result = RunResult(run_id="../escape", scenario="s", scenario_path="s.yaml", model="m", repeat=1,
                       status="complete")
    with pytest.raises(InputError, match="not a plain name"):
        save_run(tmp_path / "out", result)
    assert not (tmp_path / "escape.json").exists()
