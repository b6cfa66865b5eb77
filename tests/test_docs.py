"""The documentation site: the command reference is generated from the app, and the site builds strictly."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer

from maic_cli.cli.app import app
from maic_cli.cli.reference import reference_markdown

ROOT = Path(__file__).resolve().parent.parent


def _walk(command: Any, path: list[str]) -> list[tuple[list[str], Any]]:
    found = [(path, command)]
    if hasattr(command, "list_commands"):
        ctx = command.context_class(command, info_name=" ".join(path))
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            if sub is not None and not sub.hidden:
                found += _walk(sub, [*path, name])
    return found


def test_the_reference_names_every_command_and_option() -> None:
    text = reference_markdown()
    commands = _walk(typer.main.get_command(app), ["maic"])
    assert len(commands) > 20  # chat, replay, run, report, agents …, lesson …, learner …
    missing = []
    for path, command in commands:
        if f"`{' '.join(path)}`" not in text:
            missing.append(" ".join(path))
        for param in command.params:
            for opt in getattr(param, "opts", []):
                if param.param_type_name == "option" and opt not in ("-h", "--help") and opt not in text:
                    missing.append(f"{' '.join(path)} {opt}")
    assert missing == []


def test_the_reference_holds_no_markup_and_escapes_table_pipes() -> None:
    text = reference_markdown()
    assert "[bold]" not in text and "[/bold]" not in text
    for line in text.splitlines():
        if line.startswith("| `"):
            assert line.count(" | ") >= 1 and line.endswith(" |")


@pytest.mark.skipif(shutil.which("mkdocs") is None and not (Path(sys.executable).parent / "mkdocs").exists(),
                    reason="mkdocs is not installed (the docs extra)")
def test_the_site_builds_with_warnings_as_errors(tmp_path: Path) -> None:
    mkdocs = str(Path(sys.executable).parent / "mkdocs")
    if not Path(mkdocs).exists():
        mkdocs = shutil.which("mkdocs") or "mkdocs"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    result = subprocess.run([mkdocs, "build", "--strict", "-q", "-d", str(tmp_path / "site")], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    page = (tmp_path / "site" / "reference" / "commands" / "index.html").read_text(encoding="utf-8")
    assert "maic chat" in page and "--model" in page and "maic:commands" not in page
