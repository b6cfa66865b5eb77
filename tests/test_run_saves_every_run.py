"""``maic run`` never loses a run: any scenario file name gives a plain id, an id too long for a file name
is refused before any model call, and a run whose result cannot be saved fails the batch yet is reported."""

from __future__ import annotations

import errno
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from maic_cli.cli.app import app
from maic_cli.evaluation import batch
from maic_cli.evaluation.run_results import RunResult
from tests.test_run import GOOD_ROUND, QA_SCENARIO, script, write

runner = CliRunner()


@pytest.mark.parametrize(("name", "expected"), [("my scenario (copy).yaml", "my-scenario-copy"),
                                               ("física.yaml", "fisica"), ("😀.yaml", "scenario")])
def test_a_scenario_file_name_that_is_not_a_plain_id_still_saves_its_run(tmp_path: Path, name: str,
                                                                         expected: str) -> None:
    scenario = write(tmp_path / name, QA_SCENARIO.replace("id: sky\n", ""))
    out = tmp_path / "out"
    result = runner.invoke(app, ["run", str(scenario), "--model", script(tmp_path, *GOOD_ROUND), "--out", str(out),
                                 "--plain"])
    assert result.exit_code == 0, result.output
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report["overall"]["runs"] == 1 and report["runs"][0]["scenario"] == expected
    assert len(list((out / "runs").glob(f"{expected}__*.json"))) == 1


def test_a_long_scenario_id_is_refused_before_any_model_call(tmp_path: Path) -> None:
    scenario = write(tmp_path / "long.yaml", QA_SCENARIO.replace("id: sky", "id: " + "a" * 240))
    out = tmp_path / "out"
    result = runner.invoke(app, ["run", str(scenario), "--model", script(tmp_path, *GOOD_ROUND), "--out", str(out),
                                 "--plain"])
    assert result.exit_code == 2 and "long.yaml:1: id:" in result.stderr and "at most 80" in result.stderr
    assert not (out / "runs").exists()


def test_a_run_whose_result_cannot_be_saved_fails_the_batch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(out: Path, result: RunResult) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(batch, "save_run", refuse)
    scenario = write(tmp_path / "sky.yaml", QA_SCENARIO)
    out = tmp_path / "out"
    result = runner.invoke(app, ["run", str(scenario), "--model", script(tmp_path, *GOOD_ROUND), "--out", str(out),
                                 "--plain"])
    assert result.exit_code == 1 and "could not be saved: No space left on device" in result.output
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report["overall"]["runs"] == 1 and report["overall"]["errors"] == 1
    assert report["runs"][0]["metrics"]["rounds"] == 1  # the class it played is reported, not lost
