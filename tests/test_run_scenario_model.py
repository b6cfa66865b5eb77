"""A scenario that names its own model: ``maic run`` says so, with the server its key is sent to, and
honours ``MAIC_API_BASE`` as ``maic chat`` does; a canned (scripted) model needs no word."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from maic_cli.evaluation.run_results import load_runs
from maic_cli.testing.openai_server import LoopbackOpenAIServer, ServedReply
from tests.test_run import GOOD_ROUND, QA_SCENARIO, run, script, write

runner = CliRunner()


def test_run_honours_maic_api_base_and_says_the_scenarios_model(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key-000000")
    scenario = write(tmp_path / "sky.yaml", QA_SCENARIO + "model: openai/loopback\n")
    with LoopbackOpenAIServer(default=ServedReply(text="no", status=401)) as server:
        monkeypatch.setenv("MAIC_API_BASE", server.base_url)
        result = run(tmp_path, str(scenario), "--out", str(tmp_path / "out"))
        assert server.headers, "MAIC_API_BASE was not used: no call reached the server"
    assert result.exit_code == 1  # the provider refused: an error run, not a crash
    said = [line for line in result.stderr.splitlines() if "this scenario chooses" in line]
    assert said == [f"{scenario}: this scenario chooses --model openai/loopback at {server.base_url}; your "
                    "OPENAI_API_KEY is sent with its calls. Pass --model to choose the model yourself"]


def test_a_scenarios_canned_model_needs_no_word(tmp_path: Path) -> None:
    scenario = write(tmp_path / "sky.yaml", QA_SCENARIO + f"model: {script(tmp_path, *GOOD_ROUND)}\n")
    result = run(tmp_path, str(scenario), "--out", str(tmp_path / "out"))
    assert result.exit_code == 0 and "this scenario chooses" not in result.stderr
    assert len(load_runs(tmp_path / "out")) == 1
