"""A director hook (``--director module:function``) is loaded by its file path: the current folder never
goes on sys.path, so a planted module named like a dependency never runs."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from maic_cli.engine.policies import load_hook
from tests.test_run import GOOD_ROUND, QA_SCENARIO, script, write

runner = CliRunner()


ROOT = Path(__file__).resolve().parent.parent


HOOK = "def pick(agents, state, messages, config):\n    return None\n"


def test_a_hook_in_the_current_folder_is_loaded_by_file_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "myhook.py").write_text(HOOK, encoding="utf-8")
    (tmp_path / "planted_dependency_module.py").write_text("raise SystemExit('planted code ran')\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    before = list(sys.path)
    policy = load_hook("myhook:pick")
    assert policy.name == "myhook:pick" and policy.decide([], None, [], None) is None  # type: ignore[arg-type]
    assert sys.path == before
    assert importlib.util.find_spec("planted_dependency_module") is None  # the folder is not importable


def test_a_planted_module_named_like_a_dependency_never_runs(tmp_path: Path) -> None:
    """End to end, as the installed ``maic`` runs (no current folder on sys.path by Python itself): a
    received folder with ``matplotlib.py`` and the user's hook; the report draws its charts."""
    folder = tmp_path / "received"
    folder.mkdir()
    (folder / "myhook.py").write_text(HOOK, encoding="utf-8")
    marker = tmp_path / "PLANTED-RAN"
    (folder / "matplotlib.py").write_text(f"open({str(marker)!r}, 'w').close()\n", encoding="utf-8")
    scenario = write(folder / "sky.yaml", QA_SCENARIO)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MAIC_HOME": str(tmp_path / "home")}
    code = "import sys; from maic_cli.cli.main import main; sys.argv = ['maic'] + sys.argv[1:]; main()"
    done = subprocess.run([sys.executable, "-P", "-c", code, "run", str(scenario), "--model",
                           script(tmp_path, *GOOD_ROUND), "--director", "myhook:pick", "--out",
                           str(tmp_path / "out"), "--plain"], cwd=folder, env=env, capture_output=True, text=True,
                          timeout=240)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out" / "report.html").is_file() and not marker.exists()
