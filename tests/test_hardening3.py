"""Hardening 3 (issue 18): each class of bug a hostile user found, with a test that failed before its fix."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from maic_cli.cli.app import app
from maic_cli.engine.judge import CRITERIA
from tests.test_run import GOOD_ROUND, QA_SCENARIO, script, write

runner = CliRunner()


def verdict_with_reason(reason: str, turns: int = 2) -> str:
    body: dict[str, Any] = {"turns": [{"turn": n, "reason": reason, **{c: True for c in CRITERIA}}
                                      for n in range(1, turns + 1)],
                            "answered_reason": reason, "answered": True}
    return json.dumps(body)  # a lone surrogate is written as the JSON escape "\ud800", as a model emits it


# -- 1. a string from a model is encodable where it enters; a judge failure never touches the class's result --

def test_a_judge_reason_with_a_lone_surrogate_keeps_the_run_and_its_verdict(tmp_path: Path) -> None:
    scenario = write(tmp_path / "sky.yaml", QA_SCENARIO)
    out = tmp_path / "out"
    result = runner.invoke(app, ["run", str(scenario), "--model", script(tmp_path, *GOOD_ROUND), "--out", str(out),
                                 "--judge", script(tmp_path, verdict_with_reason("bad \ud800 half"), name="j.json"),
                                 "--plain"])
    assert result.exit_code == 0, result.output
    saved = json.loads(next((out / "runs").glob("*.json")).read_text(encoding="utf-8"))
    assert saved["status"] == "complete" and len(saved["rounds"]) == 1
    assert saved["judge"]["rounds"][0]["turns"][0]["reason"] == "bad \ufffd half"


def test_report_judge_with_a_lone_surrogate_saves_the_verdict(tmp_path: Path) -> None:
    scenario = write(tmp_path / "sky.yaml", QA_SCENARIO)
    out = tmp_path / "out"
    assert runner.invoke(app, ["run", str(scenario), "--model", script(tmp_path, *GOOD_ROUND), "--out", str(out),
                               "--plain"]).exit_code == 0
    result = runner.invoke(app, ["report", str(out), "--judge",
                                 script(tmp_path, verdict_with_reason("\udfff"), name="j.json")])
    assert result.exit_code == 0, result.output
    saved = json.loads(next((out / "runs").glob("*.json")).read_text(encoding="utf-8"))
    assert saved["judge"]["rounds"][0]["answered_reason"] == "\ufffd" and len(saved["rounds"]) == 1
