"""Nothing maic writes goes through a link it did not make or into a FIFO, and nothing it reads waits on a
FIFO or reads from a link to /dev/zero: sessions and their locks, exports, saves, templates, reports."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from maic_cli.cli.app import app
from maic_cli.engine.models import TurnConfig
from maic_cli.errors import InputError, SessionError
from maic_cli.files import read_bounded
from maic_cli.report.reports import previous_meta
from maic_cli.store.paths import open_private, write_atomic
from maic_cli.store.session import Session, load_session

runner = CliRunner()


def test_a_lock_link_in_a_received_folder_creates_nothing_at_its_target(tmp_path: Path) -> None:
    session = tmp_path / "received" / "lesson.json"
    session.parent.mkdir()
    saved_session = Session(config=TurnConfig(agent_ids=["teacher"]), model="demo")
    session.write_text(saved_session.model_dump_json(), encoding="utf-8")
    target = tmp_path / "victim" / "x"
    target.parent.mkdir()
    (session.parent / "lesson.json.lock").symlink_to(target)
    result = runner.invoke(app, ["chat", "--model", "demo", "--session", str(session)], input="")
    assert result.exit_code != 0 and "symbolic link" in result.stderr and "Traceback" not in result.stderr
    assert not target.exists()


@pytest.mark.parametrize("kind", ["link", "fifo"])
def test_files_maic_writes_never_go_through_a_link_or_into_a_fifo(tmp_path: Path, kind: str) -> None:
    target = tmp_path / "elsewhere.txt"
    target.write_text("keep me", encoding="utf-8")
    path = tmp_path / "out.md"
    if kind == "link":
        path.symlink_to(target)
    else:
        os.mkfifo(path)
    attempts: list[Callable[[], None]] = [lambda: open_private(path, "w").close(),
                                          lambda: open_private(path, "a").close(), lambda: write_atomic(path, "new")]
    for attempt in attempts:
        with pytest.raises(OSError, match="symbolic link" if kind == "link" else "not a regular file"):
            attempt()
    assert target.read_text(encoding="utf-8") == "keep me"
    assert path.is_symlink() if kind == "link" else stat.S_ISFIFO(os.lstat(path).st_mode)


def test_export_to_a_fifo_does_not_block_the_chat_and_save_never_replaces_a_link(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.md"
    os.mkfifo(fifo)
    link = tmp_path / "link.json"
    link.symlink_to(tmp_path / "target.json")
    stdin = f"/export {fifo}\n/save {link}\n/save {tmp_path / 'ok.json'}\n"
    result = runner.invoke(app, ["chat", "--model", "demo", "--session", str(tmp_path / "s.json")], input=stdin)
    assert result.exit_code == 0 and "Traceback" not in result.stderr
    assert f"{fifo}: cannot write: not a regular file" in result.stderr
    assert f"{link}: cannot save: a symbolic link" in result.stderr
    assert not (tmp_path / "target.json").exists() and (tmp_path / "ok.json").is_file()


def test_a_session_that_is_a_fifo_or_a_link_to_dev_zero_is_refused_not_read(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    zero = tmp_path / "zero.json"
    zero.symlink_to("/dev/zero")
    for path in (fifo, zero):
        with pytest.raises(SessionError, match="not a regular file"):
            load_session(path)
    result = runner.invoke(app, ["chat", "--model", "demo", "--session", str(fifo)], input="")
    assert result.exit_code == 1 and "not a regular file" in result.stderr
    shown = runner.invoke(app, ["prompts", "show", "agent", "teacher", "--session", str(zero)])
    assert shown.exit_code != 0 and "not a regular file" in shown.stderr and "Traceback" not in shown.stderr


def test_a_template_or_report_that_is_a_fifo_is_not_waited_on(tmp_path: Path) -> None:
    folder = tmp_path / "prompts" / "snippets"
    folder.mkdir(parents=True)
    os.mkfifo(folder / "speech.md")  # not a file: never opened (opening would wait for a writer)
    (folder / "extra.md").symlink_to("/dev/zero")  # not a file either: never read
    result = runner.invoke(app, ["prompts", "list", "--prompts", str(tmp_path / "prompts")])
    assert result.exit_code == 0, result.output
    assert "speech.md" in result.stdout and str(folder / "speech.md") not in result.stdout  # the built-in one
    with pytest.raises(InputError, match="not a regular file"):
        read_bounded(folder / "speech.md", 100)
    batch = tmp_path / "batch"
    (batch / "runs").mkdir(parents=True)
    os.mkfifo(batch / "report.json")
    assert previous_meta(batch) == {}  # a FIFO where report.json was: not waited on
