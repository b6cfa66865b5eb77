"""``maic report DIR…``: reports rebuilt from finished batches, nothing re-run, only maic's folders touched."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from maic_cli.cli.app import app
from tests.test_run import GOOD_ROUND, QA_SCENARIO, run, script, write

runner = CliRunner()


def batch(tmp_path: Path, name: str, repeat: int = 2) -> Path:
    out = tmp_path / name
    scenario = write(tmp_path / f"{name}.yaml", QA_SCENARIO.replace("id: sky", f"id: {name}"))
    result = run(tmp_path, str(scenario), "--model", script(tmp_path, *GOOD_ROUND * repeat, name=f"{name}.json"),
                 "--repeat", str(repeat), "--out", str(out))
    assert result.exit_code == 0, result.output
    return out


def test_one_batch_is_rebuilt_in_place_keeping_what_its_report_said(tmp_path: Path) -> None:
    out = batch(tmp_path, "sky")
    before = json.loads((out / "report.json").read_text(encoding="utf-8"))
    for name in ("report.md", "turns.csv", "rounds.csv"):
        (out / name).unlink()
    result = runner.invoke(app, ["report", str(out)])
    assert result.exit_code == 0, result.output
    after = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert after["overall"]["runs"] == before["overall"]["runs"] == 2
    assert after["meta"]["scenarios"] == before["meta"]["scenarios"] and "rebuilt by" in after["meta"]
    assert all((out / name).is_file() for name in ("report.md", "turns.csv", "rounds.csv"))
    assert len((out / "turns.csv").read_text(encoding="utf-8").splitlines()) == 1 + 2 * 2  # header + 2 turns × 2 runs


def test_several_batches_are_combined_into_their_own_folder(tmp_path: Path) -> None:
    one, two = batch(tmp_path, "sky"), batch(tmp_path, "sea")
    alone = runner.invoke(app, ["report", str(one), str(two)])
    assert alone.exit_code == 2 and "need --out" in alone.stderr
    combined = tmp_path / "all"
    result = runner.invoke(app, ["report", str(one), str(two), "--out", str(combined)])
    assert result.exit_code == 0, result.output
    report = json.loads((combined / "report.json").read_text(encoding="utf-8"))
    assert report["overall"]["runs"] == 4 and set(report["by_scenario"]) == {"sky", "sea"}


def test_a_folder_that_is_not_a_batch_is_refused_untouched(tmp_path: Path) -> None:
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "report.md").write_text("my notes", encoding="utf-8")
    result = runner.invoke(app, ["report", str(folder)])
    assert result.exit_code == 2 and "no maic batch there" in result.stderr
    assert [p.name for p in folder.iterdir()] == ["report.md"]
    assert (folder / "report.md").read_text(encoding="utf-8") == "my notes"
