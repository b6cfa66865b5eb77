"""The session is saved at boundaries (a learner message, a round, a lesson step), only when it changed,
and a ``maic chat`` killed (SIGKILL) at any moment leaves a session file that loads."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from maic_cli.cli.app import app
from maic_cli.engine.models import TurnConfig
from maic_cli.store import paths
from maic_cli.store import session as session_module
from maic_cli.store.session import Session, SessionFile, load_session
from tests.helpers import decision, reply


def count_writes(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Every write of a session file, in order (the session store's one writer, counted)."""
    written: list[Path] = []
    real = paths.write_atomic

    def counting(path: Path, text: str, *, durable: bool = True) -> None:
        written.append(path)
        real(path, text, durable=durable)

    monkeypatch.setattr(session_module, "write_atomic", counting)
    return written


def script(tmp_path: Path, *replies: object) -> str:
    path = tmp_path / "script.yaml"
    path.write_text(json.dumps(list(replies)), encoding="utf-8")
    return f"scripted:{path}"


def test_a_demo_round_with_two_agent_turns_is_written_at_most_agent_turns_plus_two_times(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    written = count_writes(monkeypatch)
    session_file = tmp_path / "class.json"
    result = CliRunner().invoke(app, ["chat", "--model", "demo", "--session", str(session_file)],
                                input="Why is the sky blue?\n/quit\n")
    assert result.exit_code == 0, result.output
    session = load_session(session_file)
    agent_turns = sum(1 for m in session.classroom.messages if m.role == "agent")
    assert agent_turns == 2
    assert written and set(written) == {session_file}
    assert len(written) <= agent_turns + 2  # not after every director and agent turn
    assert [m.role for m in session.classroom.messages] == ["user", "agent", "agent"]  # the last write holds all


def test_three_agent_turns_in_a_scripted_round_still_make_three_writes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The count does not grow with the turns: created, the learner's message, the round's end."""
    written = count_writes(monkeypatch)
    model = script(tmp_path, decision("teacher"), reply("Light scatters."), decision("curious_student"),
                   reply("Why blue?"), decision("teacher"), reply("Shorter waves."), decision("USER"))
    session_file = tmp_path / "class.json"
    result = CliRunner().invoke(app, ["chat", "--model", model, "--session", str(session_file)],
                                input="Why is the sky blue?\n")
    assert result.exit_code == 0, result.output
    assert len(load_session(session_file).classroom.messages) == 4
    assert len(written) == 3


def test_a_session_file_skips_a_save_with_nothing_new(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    written = count_writes(monkeypatch)
    session = Session(config=TurnConfig(agent_ids=["teacher"]))
    file, path = SessionFile(), tmp_path / "s.json"
    assert file.save(session, path) is True
    stamp = session.updated_at
    assert file.save(session, path) is False  # only the time stamp would differ
    session.classroom.add_learner_message("hello")
    assert file.save(session, path) is True
    assert (len(written), file.writes) == (2, 2)
    assert session.updated_at >= stamp
    assert load_session(tmp_path / "s.json").classroom.messages[0].text == "hello"


def test_slash_save_writes_a_copy_even_when_nothing_changed(tmp_path: Path) -> None:
    session_file, copy = tmp_path / "class.json", tmp_path / "copy.json"
    result = CliRunner().invoke(app, ["chat", "--model", "demo", "--session", str(session_file)],
                                input=f"hi\n/save\n/save {copy}\n/quit\n")
    assert result.exit_code == 0, result.output
    assert load_session(copy).classroom.messages == load_session(session_file).classroom.messages


def test_a_lesson_is_saved_per_scene_and_lecture_not_per_script_step(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Opening the fractions lesson plays its first slide's script (a dozen steps) and stops:
    created, the scene entered, the lecture ended — the count does not grow with the steps."""
    monkeypatch.setenv("MAIC_HOME", str(tmp_path / "home"))
    written = count_writes(monkeypatch)
    session_file = tmp_path / "class.json"
    result = CliRunner().invoke(app, ["chat", "--model", "demo", "--no-memory", "--lesson", "fractions",
                                      "--session", str(session_file)], input="/quit\n")
    assert result.exit_code == 0, result.output
    session = load_session(session_file)
    assert session.lesson is not None and session.lesson.progress.step >= 10  # the whole script was said
    assert len(written) <= 4  # it was 13: one write per script step


def test_a_lesson_killed_mid_lecture_resumes_from_its_last_saved_boundary(tmp_path: Path) -> None:
    """SIGKILL a real ``maic chat --lesson`` while a slow lecture streams: the file loads, and
    the next chat goes on from the scene's start without losing the class."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "MAIC_HOME": str(tmp_path / "home")}
    session_file = tmp_path / "class.json"
    proc = subprocess.Popen([sys.executable, "-m", "maic_cli", "chat", "--model", "demo", "--no-memory", "--lesson",
                             "fractions", "--session", str(session_file), "--plain", "--pace", "0.05"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    assert proc.stdout is not None
    deadline = time.monotonic() + 60
    seen = b""
    while b"three of them" not in seen and time.monotonic() < deadline:  # the lecture is streaming
        seen += os.read(proc.stdout.fileno(), 256)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    for stream in (proc.stdin, proc.stdout):
        if stream is not None:
            stream.close()
    assert b"Imagine one pizza" in seen and b"underneath" not in seen  # killed mid-lecture
    session = load_session(session_file)
    assert session.lesson is not None and session.lesson.progress.scene == 0
    assert not any(m.interrupted for m in session.classroom.messages)
    result = CliRunner().invoke(app, ["chat", "--model", "demo", "--no-memory", "--session", str(session_file)],
                                input="/quit\n", env={"MAIC_HOME": str(tmp_path / "home")})
    assert result.exit_code == 0, result.output
    assert "Imagine one pizza" in result.output  # the lecture plays again from the saved step
    assert load_session(session_file).lesson is not None


KILLS = 6


def test_a_chat_killed_at_random_moments_always_leaves_a_session_that_loads(tmp_path: Path) -> None:
    """SIGKILL a real ``maic chat`` (demo model, a stream of questions) at seeded random moments;
    each time the file on disk loads and holds whole learner turns only."""
    chance = random.Random(20)
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "MAIC_HOME": str(tmp_path / "home")}
    questions = "".join(f"Question number {n}?\n" for n in range(200))
    session_file = tmp_path / "class.json"
    loaded = 0
    for kill in range(KILLS):
        proc = subprocess.Popen([sys.executable, "-m", "maic_cli", "chat", "--model", "demo", "--session",
                                 str(session_file), "--plain"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, env=env)
        assert proc.stdin is not None
        proc.stdin.write(questions.encode())
        proc.stdin.flush()
        deadline = time.monotonic() + 30
        while not session_file.exists() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.01)  # the chat is under way (its file exists from its first moment)
        time.sleep(chance.uniform(0, 1.5))
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        proc.stdin.close()
        assert proc.returncode == -signal.SIGKILL, f"kill {kill}: the chat ended before it was killed"
        session = load_session(session_file)  # complete: never a half-written file
        roles = [m.role for m in session.classroom.messages]
        assert not any(m.interrupted for m in session.classroom.messages)
        answered = [i for i, role in enumerate(roles[:-1]) if role == "user" and roles[i + 1] == "agent"]
        # A learner turn is saved before its round: each kill may leave one unanswered (the next chat
        # resumes after it), never more.
        assert len(answered) >= roles.count("user") - (kill + 1)
        loaded += 1
    assert loaded == KILLS
