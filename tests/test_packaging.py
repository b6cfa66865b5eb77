"""Packaging that matches the product: matplotlib in a ``report`` extra that the commands ask for by name,
lint and type tools in ``dev``, ``.[test]`` still enough for .ci/run, the test helpers out of the wheel."""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from maic_cli.cli.app import app

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def names(requirements: list[str]) -> set[str]:
    return {r.split(";")[0].split("[")[0].split("<")[0].split(">")[0].split("=")[0].strip().lower()
            for r in requirements}


def test_matplotlib_is_the_report_extra_and_lint_tools_the_dev_extra() -> None:
    project = PYPROJECT["project"]
    extras = project["optional-dependencies"]
    assert "matplotlib" not in names(project["dependencies"])
    assert "numpy" in names(project["dependencies"])  # the report's statistics, and lessons' search
    assert names(extras["report"]) == {"matplotlib"}
    assert names(extras["dev"]) == {"mypy", "ruff", "types-pyyaml"}
    assert {"pytest", "hypothesis"} <= names(extras["test"]) and "maic-cli[report,dev,docs]" in extras["test"]
    assert names(extras["docs"]) == {"mkdocs", "mkdocs-material"}


def _install(text: str) -> tuple[str, str]:
    """The CMAKE_ARGS and the extras of the install command in ``text``."""
    cmake = re.search(r'CMAKE_ARGS="([^"]+)"', text)
    extras = re.search(r"pip install (?:--quiet )?-e '\.\[([a-z,]+)\]'", text)
    assert cmake and extras, "no install command"
    return cmake.group(1), extras.group(1)


def test_the_ci_script_and_the_readme_install_the_same_way() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert _install(ci) == _install(readme)
    cmake, extras = _install(readme)
    assert {"test", "offline"} <= set(extras.split(","))
    assert "-DLLAVA_BUILD=OFF" in cmake and "tools/llama_cpp_lean.cmake" in cmake
    assert (ROOT / "tools" / "llama_cpp_lean.cmake").read_text(encoding="utf-8").count("set(LLAMA_BUILD_COMMON OFF)")
    assert "mypy" in ci and "ruff check" in ci and "mkdocs build --strict" in ci


def test_the_test_helpers_are_left_out_of_the_wheel() -> None:
    wheel = PYPROJECT["tool"]["hatch"]["build"]["targets"]["wheel"]
    assert "maic_cli/testing" in wheel["exclude"]
    imports = [p for p in (ROOT / "maic_cli").rglob("*.py") if "testing" not in p.parts
               and ("maic_cli.testing" in p.read_text(encoding="utf-8")
                    or "from ..testing" in p.read_text(encoding="utf-8"))]
    assert imports == []  # nothing that ships imports them


@pytest.mark.parametrize("command", [["run", "scenarios/qa_multi.yaml", "--model", "demo"], ["report", "runs/x"],
                                     ["run", "--merge", "a", "--merge", "b", "--out", "c"]], ids=" ".join)
def test_without_matplotlib_run_and_report_name_the_extra_in_one_line(
        command: list[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # what an import finds when it is not installed
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, command)
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        "maic: error: report.html's charts need matplotlib, which is not installed: pip install 'maic-cli[report]'"]
    assert [p.name for p in tmp_path.iterdir()] == ["maic_home"]  # refused before any run or folder


def test_with_matplotlib_the_check_passes() -> None:
    from maic_cli.cli.extras import require, require_report

    require_report()  # installed with the test extra
    with pytest.raises(Exception, match=r"maic-cli\[nothing\]"):
        require("no_such_module_maic", "nothing", "this")
