"""A scenario's paths stay below its folder: ``prompts:`` names a folder of its own (never the scenario's
folder itself), and ``lesson.file`` never leads out (no ``..``, no link)."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from tests.test_run import QA_SCENARIO, run

runner = CliRunner()


ROOT = Path(__file__).resolve().parent.parent


LESSON = (ROOT / "lessons" / "photosynthesis.yaml").read_text(encoding="utf-8")


def write_file(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_a_scenario_cannot_make_its_own_folder_the_prompt_set(tmp_path: Path) -> None:
    for value in (".", "./", "sub/.."):
        scenario = write_file(tmp_path / "s" / "sky.yaml", QA_SCENARIO + f"prompts: {value}\n")
        result = run(tmp_path, str(scenario), "--model", "demo", "--out", str(tmp_path / "o"))
        assert result.exit_code == 2 and f"{scenario}:" in result.stderr and "prompts:" in result.stderr
    (tmp_path / "s" / "here").symlink_to(tmp_path / "s")
    scenario = write_file(tmp_path / "s" / "sky.yaml", QA_SCENARIO + "prompts: here\n")
    result = run(tmp_path, str(scenario), "--model", "demo", "--out", str(tmp_path / "o"))
    assert result.exit_code == 2 and "is the scenario's own folder" in result.stderr


def test_a_lesson_file_never_leads_out_of_the_scenarios_folder(tmp_path: Path) -> None:
    write_file(tmp_path / "outside.yaml", LESSON)
    base = "class:\n  agents: [teacher, curious_student]\nlesson:\n  file: {}\n"
    scenario = write_file(tmp_path / "s" / "play.yaml", base.format("../outside.yaml"))
    result = run(tmp_path, str(scenario), "--model", "demo", "--out", str(tmp_path / "o"))
    assert result.exit_code == 2 and f"{scenario}:4: lesson.file:" in result.stderr and "no .." in result.stderr
    (tmp_path / "s" / "link.yaml").symlink_to(tmp_path / "outside.yaml")
    write_file(scenario, base.format("link.yaml"))
    result = run(tmp_path, str(scenario), "--model", "demo", "--out", str(tmp_path / "o"))
    assert result.exit_code == 2 and "leads outside the scenario's folder" in result.stderr
