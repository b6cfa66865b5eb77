"""``maic lesson check`` refuses, with its line, a class member or a discussion's initiator that
``maic chat`` would refuse."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from maic_cli.cli.app import app
from tests.test_run import write

runner = CliRunner()


ROOT = Path(__file__).resolve().parent.parent


LESSON = (ROOT / "lessons" / "photosynthesis.yaml").read_text(encoding="utf-8")


def test_lesson_check_refuses_an_unknown_agent_with_its_line(tmp_path: Path) -> None:
    path = write(tmp_path / "l.yaml", "agents: [teacher, nobody_here]\n" + LESSON)
    result = runner.invoke(app, ["lesson", "check", str(path)])
    assert result.exit_code == 2
    assert f"{path}:1: agents.1: unknown agent id 'nobody_here'" in result.stderr


def test_lesson_check_refuses_an_initiator_outside_the_class_with_its_line(tmp_path: Path) -> None:
    text = LESSON.replace("initiator: curious_student", "initiator: ghost", 1)
    assert "initiator: ghost" in text
    path = write(tmp_path / "l.yaml", "agents: [teacher, curious_student]\n" + text)
    line = next(n for n, row in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if "ghost" in row)
    result = runner.invoke(app, ["lesson", "check", str(path)])
    assert result.exit_code == 2
    assert f"{path}:{line}: scenes." in result.stderr and "'ghost' is not in the lesson's class" in result.stderr
    good = write(tmp_path / "ok.yaml", "agents: [teacher, curious_student]\n" + LESSON)
    assert runner.invoke(app, ["lesson", "check", str(good)]).exit_code == 0
