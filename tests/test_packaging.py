"""Packaging that matches the product: matplotlib in a ``report`` extra (the charts; a batch runs without it),
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


NOTE = "maic: note: report.html has no charts without matplotlib: pip install 'maic-cli[report]'"


def test_without_matplotlib_run_report_and_merge_say_once_how_to_get_the_charts(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The extra is for the charts only: the commands run, write their files and exit as they would with it
    (tests/test_report_without_matplotlib.py does the same in a virtual environment without matplotlib)."""
    monkeypatch.chdir(tmp_path)
    batch = ["run", str(ROOT / "scenarios" / "qa_multi.yaml"), "--model", "demo", "--plain", "--out"]
    helped = CliRunner().invoke(app, [*batch, "with"])
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # what an import finds when it is not installed
    for command, folder in ((["run", *batch[1:]], "out"), (["report"], "out"), (["run", "--merge", "out", "--out"],
                                                                                  "merged")):
        result = CliRunner().invoke(app, [*command, folder])
        assert result.exit_code == helped.exit_code, result.output
        assert result.stderr.count(NOTE) == 1, result.stderr
        assert (tmp_path / folder / "report.json").is_file() and (tmp_path / folder / "report.md").is_file()
        assert "No charts here" in (tmp_path / folder / "report.html").read_text(encoding="utf-8")
    assert NOTE not in helped.stderr


def test_with_matplotlib_the_charts_are_available_and_require_names_a_missing_extra() -> None:
    from maic_cli.cli.extras import require
    from maic_cli.report.report_charts import available

    assert available()  # installed with the test extra
    with pytest.raises(Exception, match=r"maic-cli\[nothing\]"):
        require("no_such_module_maic", "nothing", "this")
