"""What ``maic report`` reads from a batch folder is checked before it is used."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from maic_cli.cli.app import app
from tests.test_run import GOOD_ROUND, QA_SCENARIO, script, write

runner = CliRunner()


def run(*args: str):
    return runner.invoke(app, ["run", *args, "--plain"])


def test_a_crafted_latency_is_refused_with_its_file_not_a_crash(tmp_path: Path) -> None:
    scenario = write(tmp_path / "sky.yaml", QA_SCENARIO)
    out = tmp_path / "out"
    assert run(str(scenario), "--model", script(tmp_path, *GOOD_ROUND), "--out", str(out)).exit_code == 0
    run_file = next((out / "runs").glob("*.json"))
    data = json.loads(run_file.read_text(encoding="utf-8"))
    for bad in (-1e308, "NaN", "Infinity"):
        data["rounds"][0]["turn_latencies"] = [0.5, bad]
        run_file.write_text(json.dumps(data).replace('"NaN"', "NaN").replace('"Infinity"', "Infinity"),
                            encoding="utf-8")
        result = runner.invoke(app, ["report", str(out)])
        assert result.exit_code == 2 and f"{run_file}: damaged run result" in result.stderr, result.output
        assert "Traceback" not in result.output and "\n" not in result.stderr.strip()
