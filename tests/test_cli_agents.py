"""``maic --version``, ``maic agents …`` and persona loading with line-accurate errors."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from maic_cli import __version__
from maic_cli.cli.app import app
from maic_cli.errors import InputError
from maic_cli.store.personas import DEFAULT_CLASS, load_persona, load_registry
from tests.helpers import modules_imported_by

runner = CliRunner()


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


GOOD = """id: coach
name: Coach Kim
role: assistant
persona: Energetic and encouraging.
priority: 7
"""


def test_version_prints_maic_and_its_version() -> None:
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0 and result.stdout.strip() == f"maic {__version__}"


def test_help_does_not_import_litellm() -> None:
    modules = modules_imported_by(["--help"])
    assert "maic_cli.cli.run_cmd" in modules  # the check itself can see what was imported
    assert "litellm" not in modules


def test_default_class_of_six() -> None:
    registry = load_registry()
    assert set(DEFAULT_CLASS) <= set(registry.agents)
    roles = {registry.agents[i].role for i in DEFAULT_CLASS}
    assert roles == {"teacher", "assistant", "student"}
    assert len({registry.agents[i].avatar for i in DEFAULT_CLASS}) == 6
    assert len({registry.agents[i].color for i in DEFAULT_CLASS}) == 6


def test_list_shows_builtin_and_user_agents(maic_home: Path, tmp_path: Path) -> None:
    write(maic_home / "agents" / "coach.yaml", GOOD)
    extra = write(tmp_path / "mine" / "teacher.yaml", GOOD.replace("coach", "teacher").replace(
        "Coach Kim", "Dr. Override"))
    result = runner.invoke(app, ["agents", "list", "--agents-dir", str(extra.parent)])
    assert result.exit_code == 0, result.output
    assert "coach" in result.stdout and "Coach Kim" in result.stdout
    assert "Dr. Override" in result.stdout and "Ms. Rivera" not in result.stdout
    assert "class_clown" in result.stdout and "built-in" in result.stdout


def test_agents_show_prints_one_persona() -> None:
    result = runner.invoke(app, ["agents", "show", "deep_thinker"])
    assert result.exit_code == 0
    assert "Theo" in result.stdout and "student" in result.stdout and "wb_draw_text" in result.stdout


def test_show_unknown_agent_is_one_line_exit_2() -> None:
    result = runner.invoke(app, ["agents", "show", "nobody"])
    assert result.exit_code == 2
    assert result.stderr.startswith("maic: error: unknown agent id(s): nobody")
    assert len(result.stderr.strip().splitlines()) == 1


def test_the_built_in_agents_validate() -> None:
    result = runner.invoke(app, ["agents", "validate"])
    assert result.exit_code == 0, result.output
    assert "6 valid, 0 invalid" in result.stdout


def test_validate_reports_path_line_and_field(tmp_path: Path) -> None:
    bad = write(tmp_path / "bad.yaml", GOOD.replace("priority: 7", "priority: 42"))
    result = runner.invoke(app, ["agents", "validate", str(bad)])
    assert result.exit_code == 2
    assert f"{bad}:5: priority: Input should be less than or equal to 10" in result.stderr


def test_bad_persona_errors_name_the_line(tmp_path: Path) -> None:
    cases = {
        "role: assistant": ("role: janitor", 3, "role"),
        "name: Coach Kim": ("name: Coach Kim\ncolour: red", 3, "colour: unknown field"),
        "id: coach": ("id: Coach Kim!", 1, "id"),
        "priority: 7": ("priority: 7\nallowed_actions: [wb_open, fly]", 6, "allowed_actions"),
    }
    for old, (new, line, field) in cases.items():
        path = write(tmp_path / "p.yaml", GOOD.replace(old, new))
        try:
            load_persona(path)
        except InputError as exc:
            assert str(exc).startswith(f"{path}:{line}: {field}"), str(exc)
        else:
            raise AssertionError(f"{new!r} was accepted")


def test_missing_field_and_yaml_syntax_errors(tmp_path: Path) -> None:
    missing = write(tmp_path / "m.yaml", "id: x\nname: X\nrole: student\n")
    try:
        load_persona(missing)
    except InputError as exc:
        assert str(exc) == f"{missing}:1: persona: Field required"
    broken = write(tmp_path / "b.yaml", "id: x\nname: [unclosed\nrole: student\n")
    try:
        load_persona(broken)
    except InputError as exc:
        assert str(exc).startswith(f"{broken}:") and "YAML syntax" in str(exc)
    else:
        raise AssertionError("broken YAML was accepted")


def test_registry_rejects_a_missing_agents_dir(tmp_path: Path) -> None:
    result = runner.invoke(app, ["agents", "list", "--agents-dir", str(tmp_path / "nope")])
    assert result.exit_code == 2 and "no such agents folder" in result.stderr


def test_escape_in_a_persona_field_name_never_reaches_the_terminal(maic_home: Path) -> None:
    write(maic_home / "agents" / "coach.yaml", GOOD + '"\\e]0;pwned\\a\\e]52;c;aGk=\\a": 1\n')
    result = runner.invoke(app, ["agents", "list"])
    assert result.exit_code == 2
    assert "unknown field" in result.stderr and "coach.yaml:6" in result.stderr
    assert "\x1b" not in result.output and "\x07" not in result.output and "pwned" not in result.output


def test_escape_in_a_persona_file_name_never_reaches_the_terminal(tmp_path: Path) -> None:
    folder = tmp_path / "evil"
    write(folder / "coach\x1b]0;pwned\x07\u202e.yaml", GOOD)
    listed = runner.invoke(app, ["agents", "list", "--agents-dir", str(folder)], env={"COLUMNS": "400"})
    assert listed.exit_code == 0, listed.output
    assert "coach" in listed.stdout and "<U+202E>" in listed.stdout
    shown = runner.invoke(app, ["agents", "show", "coach", "--agents-dir", str(folder)])
    checked = runner.invoke(app, ["agents", "validate", str(folder)])
    assert shown.exit_code == 0 and checked.exit_code == 0 and "<U+202E>" in checked.stdout
    write(folder / "bad\x1b[2J.yaml", "id: [")
    broken = runner.invoke(app, ["agents", "list", "--agents-dir", str(folder)])
    invalid = runner.invoke(app, ["agents", "validate", str(folder)])
    assert broken.exit_code == 2 and invalid.exit_code == 2 and "YAML syntax" in broken.stderr
    for result in (listed, shown, checked, broken, invalid):
        assert "\x1b" not in result.output and "\x07" not in result.output and "\u202e" not in result.output


def test_error_lines_are_one_clean_line() -> None:
    result = runner.invoke(app, ["agents", "show", "x\x1b]0;pwned\x07\nsecond line"])
    assert result.exit_code == 2
    assert len(result.stderr.strip().splitlines()) == 1
    assert "\x1b" not in result.stderr and "pwned" not in result.stderr


def test_two_persona_files_with_one_id_in_a_folder_is_an_error(tmp_path: Path) -> None:
    first = write(tmp_path / "team" / "a_coach.yaml", GOOD)
    second = write(tmp_path / "team" / "b_coach.yaml", "# the same id again\n" + GOOD)
    result = runner.invoke(app, ["agents", "list", "--agents-dir", str(first.parent)])
    assert result.exit_code == 2
    assert f"{second}:2: id: duplicate of {first}" in result.stderr
    checked = runner.invoke(app, ["agents", "validate", str(first.parent)])
    assert checked.exit_code == 2 and f"{second}:2: id: duplicate of {first}" in checked.stderr
    assert "1 valid, 1 invalid" in checked.stdout


def test_list_shows_which_file_overrides_which(maic_home: Path, tmp_path: Path) -> None:
    mine = write(maic_home / "agents" / "teacher.yaml", GOOD.replace("coach", "teacher"))
    extra = write(tmp_path / "more" / "teacher.yaml", GOOD.replace("coach", "teacher").replace(
        "Coach Kim", "Dr. Override"))
    registry = load_registry([extra.parent])
    assert registry.sources["teacher"] == extra
    assert registry.overridden["teacher"][-1] == mine
    result = runner.invoke(app, ["agents", "list", "--agents-dir", str(extra.parent)], env={"COLUMNS": "300"})
    assert result.exit_code == 0, result.output
    row = next(line for line in result.stdout.splitlines() if "Dr. Override" in line)
    assert str(extra) in row and f"overrides {mine}" in row
    shown = runner.invoke(app, ["agents", "show", "teacher", "--agents-dir", str(extra.parent)],
                          env={"COLUMNS": "300"})
    assert f"from {extra} (overrides {mine})" in shown.stdout
    alone = runner.invoke(app, ["agents", "list"], env={"COLUMNS": "300"})
    row = next(line for line in alone.stdout.splitlines() if line.startswith("teacher"))
    assert "overrides built-in" in row


def test_validate_of_a_folder_without_personas_is_an_error(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    result = runner.invoke(app, ["agents", "validate", str(empty)])
    assert result.exit_code == 2
    assert f"no persona files (*.yaml) in {empty}" in result.stderr
