"""Lone surrogates in model text (a judge's reason, a run result, any reply object) become U+FFFD where
they enter, so a run is saved, judged and reported whole and a judge that fails keeps the class's result."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from maic_cli.cli.app import app
from maic_cli.evaluation.judge import CRITERIA
from maic_cli.evaluation.run_results import RunResult, load_runs, save_run
from maic_cli.replies.json_reply import first_json_object
from maic_cli.untrusted import clean, one_line
from tests.test_run import GOOD_ROUND, QA_SCENARIO, script, write

runner = CliRunner()


def verdict_with_reason(reason: str, turns: int = 2) -> str:
    body: dict[str, Any] = {"turns": [{"turn": n, "reason": reason, **{c: True for c in CRITERIA}}
                                      for n in range(1, turns + 1)],
                            "answered_reason": reason, "answered": True}
    return json.dumps(body)  # a lone surrogate is written as the JSON escape "\ud800", as a model emits it


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


def test_a_judge_that_fails_outright_leaves_the_saved_class_result(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    async def broken_judge(*args: object, **kwargs: object) -> None:
        raise RuntimeError("a bug in the judge")

    monkeypatch.setattr("maic_cli.evaluation.judging.judge_run", broken_judge)
    scenario = write(tmp_path / "sky.yaml", QA_SCENARIO)
    out = tmp_path / "out"
    result = runner.invoke(app, ["run", str(scenario), "--model", script(tmp_path, *GOOD_ROUND), "--out", str(out),
                                 "--judge", script(tmp_path, verdict_with_reason("ok"), name="j.json"), "--plain"])
    assert "Traceback" not in result.output
    saved = json.loads(next((out / "runs").glob("*.json")).read_text(encoding="utf-8"))
    assert saved["status"] == "complete" and len(saved["rounds"]) == 1 and saved["error"] is None
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report["overall"]["complete"] == 1 and report["overall"]["rounds"] == 1


def test_a_result_holding_a_lone_surrogate_is_still_saved(tmp_path: Path) -> None:
    result = RunResult(run_id="r1", scenario="s\ud800", scenario_path="x", model="m", repeat=1, status="complete",
                       failures=["round 1: \udfff"])
    save_run(tmp_path, result)
    loaded = load_runs(tmp_path)[0]
    assert loaded.scenario == "s\ufffd" and loaded.failures == ["round 1: \ufffd"]


def test_every_reply_object_a_model_sends_is_encodable() -> None:
    value, _ = first_json_object('{"comment": "half \\ud83d", "deep": {"k\\udc00": ["\\ud800"]}}',
                                 max_depth=6, max_repair=1000)
    assert value is not None and json.dumps(value, ensure_ascii=False).encode("utf-8")
    assert value == {"comment": "half \ufffd", "deep": {"k\ufffd": ["\ufffd"]}}
    repaired, was_repaired = first_json_object('{"comment": "cut \\ud83d', max_depth=6, max_repair=1000)
    assert was_repaired and repaired is not None and "\ud83d" not in repaired["comment"]
    assert clean("a\ud800b") == "a\ufffdb" and one_line("\udfff") == "\ufffd"
