"""``maic learner edit`` loses nothing: a rename onto another learner's file is refused, a profile that
changed while the editor was open (a chat of the learner ended) is not overwritten, the profile is read
bounded and only from a regular file (``/dev/zero``, a FIFO), the lock a chat takes is taken, and every
refusal is one line, exit 2, saying where the edited draft is kept."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from maic_cli.cli.app import app
from maic_cli.store.learner_edit import draft_path
from maic_cli.store.learner_profile import MAX_PROFILE_BYTES, LearnerProfile, load_profile, profile_path, save_profile

runner = CliRunner()
MAIN = "from maic_cli.cli.main import main; main()"


def editor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: str) -> None:
    """``$EDITOR``: a Python script run on the draft (``sys.argv[1]``)."""
    script = tmp_path / "editor.py"
    script.write_text("import sys, os, subprocess\np = sys.argv[1]\n" + code, encoding="utf-8")
    monkeypatch.setenv("EDITOR", f"{sys.executable} {script}")


RENAME_TO_BOB = "text = open(p).read()\nopen(p, 'w').write(text.replace('name: Alice', 'name: Bob'))\n"


def one_line_refusal(result: object) -> str:
    stderr: str = result.stderr  # type: ignore[attr-defined]
    assert result.exit_code == 2, (result.exit_code, result.output)  # type: ignore[attr-defined]
    assert stderr.count("\n") == 1 and "unexpected" not in stderr, stderr
    return stderr


def test_a_rename_onto_another_learner_is_refused_and_the_draft_kept(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    alice = save_profile(LearnerProfile(name="Alice", questions=["Why?"], sessions=2))
    bob = save_profile(LearnerProfile(name="Bob", questions=["Bob's own question"], sessions=7))
    before = bob.read_bytes()
    editor(tmp_path, monkeypatch, RENAME_TO_BOB)
    said = one_line_refusal(runner.invoke(app, ["learner", "edit", "alice"]))
    assert str(bob) in said and "another learner" in said and str(draft_path(alice)) in said
    assert bob.read_bytes() == before and alice.exists()  # neither is touched
    assert load_profile(draft_path(alice)).name == "Bob"  # the edit is kept

    draft_path(alice).unlink()
    editor(tmp_path, monkeypatch, RENAME_TO_BOB.replace("Bob", "Carol"))
    moved = runner.invoke(app, ["learner", "edit", "alice"])
    assert moved.exit_code == 0, moved.output
    carol = profile_path("Carol")
    assert load_profile(carol).questions == ["Why?"] and not alice.exists() and bob.read_bytes() == before
    assert not draft_path(alice).exists()


def test_a_chat_that_ends_while_the_editor_is_open_is_not_overwritten(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    alice = save_profile(LearnerProfile(name="Alice", level="school"))
    # The editor changes the draft; meanwhile a real chat of Alice ends and saves her memory.
    editor(tmp_path, monkeypatch, "text = open(p).read()\nopen(p, 'w').write(text.replace('school', 'university'))\n"
           f"subprocess.run([sys.executable, '-c', {MAIN!r}, 'chat', '--model', 'demo', '--name', 'Alice', "
           f"'--plain', '--session', {str(tmp_path / 's.json')!r}], input='What is light?\\n/quit\\n', "
           "text=True, check=True, capture_output=True)\n")
    said = one_line_refusal(runner.invoke(app, ["learner", "edit", "Alice"]))
    assert "changed while you edited it" in said and str(draft_path(alice)) in said
    kept = load_profile(alice)
    assert kept.questions == ["What is light?"] and kept.sessions == 1  # the chat's memory stays
    assert load_profile(draft_path(alice)).level == "university"  # and so does the edit


def test_an_earlier_draft_is_never_overwritten(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    alice = save_profile(LearnerProfile(name="Alice"))
    draft_path(alice).write_text("name: Alice\nlevel: my unsaved edit\n", encoding="utf-8")
    editor(tmp_path, monkeypatch, "open(p, 'w').write('name: Alice\\n')\n")
    said = one_line_refusal(runner.invoke(app, ["learner", "edit", "Alice"]))
    assert str(draft_path(alice)) in said
    assert "my unsaved edit" in draft_path(alice).read_text(encoding="utf-8")


def run_edit(home: Path, tmp_path: Path, name: str = "alice", timeout: float = 30) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "noop.py"
    script.write_text("pass\n", encoding="utf-8")
    env = {**os.environ, "MAIC_HOME": str(home), "EDITOR": f"{sys.executable} {script}"}
    return subprocess.run([sys.executable, "-c", MAIN, "learner", "edit", name], capture_output=True, text=True,
                          timeout=timeout, env=env)


@pytest.mark.parametrize("kind", ["dev-zero", "fifo", "huge", "folder", "dangling"])
def test_a_profile_that_is_not_a_small_regular_file_is_one_line(tmp_path: Path, maic_home: Path, kind: str) -> None:
    alice = profile_path("alice")
    alice.parent.mkdir(parents=True, exist_ok=True)
    if kind == "dev-zero":
        alice.symlink_to("/dev/zero")
    elif kind == "fifo":
        os.mkfifo(alice)
    elif kind == "huge":
        alice.write_text("name: alice\nlevel: " + "x" * MAX_PROFILE_BYTES + "\n", encoding="utf-8")
    elif kind == "folder":
        alice.mkdir()
    else:
        alice.symlink_to(tmp_path / "gone.yaml")
    began = time.monotonic()
    result = run_edit(maic_home, tmp_path)
    assert time.monotonic() - began < 20
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and "unexpected" not in result.stderr, \
        result.stderr
    assert not draft_path(alice).exists()


def test_an_edit_waits_for_a_chat_saving_the_profile_then_refuses(tmp_path: Path, maic_home: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    alice = save_profile(LearnerProfile(name="Alice"))
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time\nfrom maic_cli.store.learner_profile import "
                               "profile_lock\nfrom pathlib import Path\nwith profile_lock(Path(sys.argv[1])):\n"
                               "    print('held', flush=True)\n    time.sleep(30)\n", str(alice)],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        monkeypatch.setattr("maic_cli.store.learner_profile.LOCK_SECONDS", 0.5)
        editor(tmp_path, monkeypatch, "open(p, 'w').write('name: Alice\\nlevel: university\\n')\n")
        said = one_line_refusal(runner.invoke(app, ["learner", "edit", "Alice"]))
        assert "locked" in said and str(draft_path(alice)) in said
        assert load_profile(alice).level == ""
    finally:
        holder.kill()
        holder.wait()
        if holder.stdout is not None:
            holder.stdout.close()


@pytest.mark.parametrize("command", ['vim "', "   "])
def test_an_editor_that_is_not_a_command_is_one_line(monkeypatch: pytest.MonkeyPatch, command: str) -> None:
    alice = save_profile(LearnerProfile(name="Alice"))
    monkeypatch.setenv("VISUAL", command)
    one_line_refusal(runner.invoke(app, ["learner", "edit", "Alice"]))
    assert not draft_path(alice).exists()
