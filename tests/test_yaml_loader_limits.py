"""The one YAML loader bounds what it reads: regular files only, a size limit, alias bombs, deep nesting;
numbers of thousands of digits are one line, in YAML, JSON and a ``/slide`` argument alike."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from maic_cli.cli.app import app
from maic_cli.errors import InputError, SessionError
from maic_cli.evaluation.run_results import load_runs
from maic_cli.store.session import load_session
from maic_cli.yamlfile import MAX_YAML_BYTES, read_yaml
from tests.test_run import QA_SCENARIO, write

runner = CliRunner()
REPO = Path(__file__).parent.parent

BILLION_LAUGHS = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 10)}]\n" for i in range(8))


def maic(*args: str) -> subprocess.CompletedProcess[str]:
    """``maic ARGS`` in a subprocess with a timeout: a hang guard, not a timing assertion."""
    return subprocess.run([sys.executable, "-m", "maic_cli", *args], capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL, cwd=REPO)


def one_line(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr  # validate: "invalid  path: …"
    return lines[0]


@pytest.mark.parametrize("kind", ["fifo", "dev_zero"])
def test_agents_validate_refuses_what_is_not_a_regular_file_promptly(tmp_path: Path, kind: str) -> None:
    path = {"fifo": tmp_path / "p.yaml", "dev_zero": Path("/dev/zero")}[kind]
    if kind == "fifo":
        os.mkfifo(path)
    line = one_line(maic("agents", "validate", str(path)))
    assert f"{path}: not a regular file" in line


def test_a_folder_is_not_read_as_a_yaml_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="not a regular file"):
        read_yaml(tmp_path)


def test_a_router_that_is_a_fifo_is_refused_promptly(tmp_path: Path) -> None:
    fifo = tmp_path / "router.yaml"
    os.mkfifo(fifo)
    scenario = REPO / "scenarios" / "qa_multi.yaml"
    line = one_line(maic("run", str(scenario), "--router", str(fifo), "--model", "g", "--out", str(tmp_path / "o")))
    assert f"{fifo}: not a regular file" in line


def test_a_file_over_the_size_limit_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "big.yaml"
    path.write_text("persona: " + "x" * MAX_YAML_BYTES + "\n")
    with pytest.raises(InputError, match="larger than 1 MB"):
        read_yaml(path)


def test_an_alias_bomb_is_refused(tmp_path: Path) -> None:
    bomb = tmp_path / "router.yaml"
    bomb.write_text("model_list:\n  - model_name: g\n    litellm_params: {model: m}\nrouter_settings:\n"
                    + textwrap.indent(BILLION_LAUGHS, "  "))
    persona = tmp_path / "bomb.yaml"
    persona.write_text(BILLION_LAUGHS)
    assert "aliases expand to more than 1,000,000 values" in one_line(maic("agents", "validate", str(persona)))
    line = one_line(maic("run", str(REPO / "scenarios" / "qa_multi.yaml"), "--router", str(bomb), "--model", "g",
                         "--out", str(tmp_path / "o")))
    assert f"{bomb}: aliases expand to more than" in line


@pytest.mark.usefixtures("loader")
def test_an_alias_bomb_is_refused_by_either_loader(tmp_path: Path) -> None:
    path = tmp_path / "bomb.yaml"
    path.write_text(BILLION_LAUGHS)
    with pytest.raises(InputError, match="aliases expand to more than 1,000,000 values"):
        read_yaml(path)


@pytest.mark.usefixtures("loader")
@pytest.mark.parametrize("text", ["a: &a [*a]\n", "a: &a {b: *a}\n"])
def test_a_recursive_alias_is_refused(tmp_path: Path, text: str) -> None:
    path = tmp_path / "loop.yaml"
    path.write_text(text)
    with pytest.raises(InputError, match="aliases expand to more than"):
        read_yaml(path)


@pytest.fixture(params=["libyaml", "python"])
def loader(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Both loaders PyYAML may have: libyaml's, and the pure-Python one (without libyaml)."""
    if request.param == "python":
        monkeypatch.setattr("maic_cli.yamlfile.SAFE_LOADER", yaml.SafeLoader)


@pytest.mark.usefixtures("loader")
def test_deep_nesting_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "deep.yaml"
    path.write_text("[" * 50_000 + "]" * 50_000)
    with pytest.raises(InputError, match="nest"):  # libyaml: "exceeded maximum nesting depth"
        read_yaml(path)


def test_a_few_anchors_and_aliases_still_work(tmp_path: Path) -> None:
    path = tmp_path / "ok.yaml"
    path.write_text("base: &base {x: 1, y: [1, 2, 3]}\nuse: *base\nmore: [*base, *base]\n")
    data, _ = read_yaml(path)
    assert data["more"] == [data["base"], data["base"]] and data["use"] == {"x": 1, "y": [1, 2, 3]}


def test_persona_not_utf8_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "latin.yaml"
    path.write_bytes("name: Jos\xe9\n".encode("latin-1"))
    result = runner.invoke(app, ["agents", "validate", str(path)])
    assert result.exit_code == 2 and "not UTF-8 text" in result.stderr


def test_a_yaml_or_json_number_of_thousands_of_digits_is_a_one_line_error(tmp_path: Path) -> None:
    path = write(tmp_path / "s.yaml", QA_SCENARIO + "max_turns: " + "9" * 5000 + "\n")
    with pytest.raises(InputError, match=r"s.yaml:\d+: a number of 5,000 characters is out of range"):
        read_yaml(path)
    result = runner.invoke(app, ["run", str(path), "--model", "demo", "--plain"])
    assert result.exit_code == 2 and "out of range" in result.stderr and "unexpected" not in result.stderr
    session = tmp_path / "big.json"
    session.write_text('{"version": 1, "config": {"max_turns": ' + "9" * 5000 + "}}", encoding="utf-8")
    with pytest.raises(SessionError, match=r"big\.json"):
        load_session(session)
    runs = tmp_path / "batch" / "runs"
    runs.mkdir(parents=True)
    (runs / "r1.json").write_text('{"run_id": "r1", "repeat": ' + "9" * 5000 + "}", encoding="utf-8")
    with pytest.raises(InputError, match="damaged run result"):
        load_runs(tmp_path / "batch")


def test_slide_with_a_5000_digit_number_is_one_line_and_the_class_goes_on(tmp_path: Path) -> None:
    lesson = Path(__file__).resolve().parent.parent / "lessons" / "photosynthesis.yaml"
    result = runner.invoke(app, ["chat", "--model", "demo", "--lesson", str(lesson), "--session",
                                 str(tmp_path / "s.json")],
                           input="/slide " + "9" * 3990 + "\n/slide " + "9" * 5000 + "\n/outline\n")
    assert result.exit_code == 0, result.output
    assert "out of range" in result.stderr and "unexpected" not in result.output
    assert "at most 4,000 characters" in result.stderr  # past a learner line's bound: refused before /slide
