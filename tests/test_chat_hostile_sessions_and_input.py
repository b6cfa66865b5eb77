"""``maic chat`` against hostile session files, broken disks, bad input bytes and Ctrl-C."""

from __future__ import annotations

import json
import os
import pty
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from maic_cli.chat import setup as chat_setup
from maic_cli.chat.line_input import LineReader
from maic_cli.chat.setup import confirm_session_choices, new_session, resolve_model
from maic_cli.cli.app import app
from maic_cli.errors import InputError
from maic_cli.store.config import Settings, load_settings
from maic_cli.store.session import Session, SessionLock, load_session, save_session
from maic_cli.testing.openai_server import LoopbackOpenAIServer
from tests.helpers import decision, reply

runner = CliRunner()


def script(tmp_path: Path, *replies: object, name: str = "script.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(list(replies)), encoding="utf-8")
    return f"scripted:{path}"


def saved_session(path: Path, **fields: Any) -> Session:
    session = new_session(Settings(agents=["teacher"]), None, None)
    for name, value in fields.items():
        setattr(session, name, value)
    save_session(session, path)
    return session


def one_error_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.startswith("maic: error:")]
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr
    return lines[0]


# -- a session file never decides where a key is sent ------------------------------------------

def test_a_session_cannot_send_the_key_to_a_host_it_names(tmp_path: Path,
                                                         loopback_server: LoopbackOpenAIServer) -> None:
    session_file = tmp_path / "shared.json"
    saved_session(session_file, model="openai/loopback-model", api_base=loopback_server.base_url)
    result = runner.invoke(app, ["chat", "--session", str(session_file)], input="hello\n",
                           env={"OPENAI_API_KEY": "sk-secret-key"})
    assert result.exit_code == 2
    line = one_error_line(result.stderr)
    assert f"--api-base {loopback_server.base_url}" in line and "--model openai/loopback-model" in line
    assert "pass them again" in line
    assert loopback_server.requests == []


def test_passing_them_again_confirms(tmp_path: Path, loopback_server: LoopbackOpenAIServer) -> None:
    session_file = tmp_path / "shared.json"
    saved_session(session_file, model="openai/loopback-model", api_base=loopback_server.base_url)
    loopback_server.enqueue(reply("Hello!"), decision("USER"))
    result = runner.invoke(app, ["chat", "--session", str(session_file), "--model", "openai/loopback-model",
                                 "--api-base", loopback_server.base_url], input="@teacher hello\n",
                           env={"OPENAI_API_KEY": "sk-secret-key"})
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("Ms. Rivera: Hello!")
    assert loopback_server.headers[0]["Authorization"] == "Bearer sk-secret-key"


def test_a_session_model_that_reads_a_file_needs_confirmation_too(tmp_path: Path) -> None:
    session_file = tmp_path / "shared.json"
    saved_session(session_file, model=script(tmp_path, reply("hi")))
    result = runner.invoke(app, ["chat", "--session", str(session_file)], input="hello\n")
    assert result.exit_code == 2 and "--model scripted:" in one_error_line(result.stderr)
    assert load_session(session_file).classroom.messages == []


def test_a_session_file_choosing_a_model_or_server_the_user_did_not_needs_confirmation(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("maic_cli.llm.local.offline_available", lambda: False)
    settings = load_settings()
    def session(**fields: Any) -> Session:
        return Session(config=new_session(Settings(agents=["teacher"]), None, None).config, **fields)

    def session_choices(settings: Settings, resumed: Session) -> dict[str, str]:  # the model as maic chat parses it
        return chat_setup.session_choices(settings, resumed, resolve_model(settings, resumed))

    assert session_choices(settings, session(model="demo")) == {}
    assert session_choices(settings, session(model="local")) == {}
    assert session_choices(settings, session(model="openai/gpt-4o")) == {"--model": "openai/gpt-4o"}
    assert session_choices(settings, session(model="demo", api_base="http://x")) == {"--api-base": "http://x"}
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")  # the model the user's own key picks is the user's choice
    assert session_choices(load_settings(), session(model="openai/gpt-4o-mini")) == {}
    flags = load_settings({"model": "openai/gpt-4o", "api_base": "http://mine"})
    assert session_choices(flags, session(model="openai/evil", api_base="http://evil")) == {}
    assert session_choices(load_settings({"model": "openai/gpt-4o"}), session(api_base="http://evil")) == {
        "--api-base": "http://evil"}


def test_on_a_terminal_the_user_is_asked(tmp_path: Path) -> None:
    asked: list[str] = []
    choices = {"--api-base": "http://evil.example/v1\x1b]0;owned\x07"}

    def no(question: str) -> bool:
        asked.append(question)
        return False

    with pytest.raises(InputError, match="not used"):
        confirm_session_choices(tmp_path / "s.json", choices, no)
    assert "--api-base http://evil.example/v1" in asked[0] and "\x1b" not in asked[0]
    assert "API key" in asked[0]
    confirm_session_choices(tmp_path / "s.json", choices, lambda question: True)  # yes: used


# -- a session's transcript path is confined ----------------------------------------------------

def test_a_session_transcript_outside_maics_folders_is_not_written(tmp_path: Path, maic_home: Path) -> None:
    victim = tmp_path / "elsewhere" / "notes.txt"
    victim.parent.mkdir()
    victim.write_text("my notes\n", encoding="utf-8")
    for stored in (str(victim), str(tmp_path / "elsewhere" / "t.jsonl"), str(tmp_path / "x" / ".." / "notes.jsonl")):
        session_file = tmp_path / "sessions" / "class.json"
        session_file.parent.mkdir(exist_ok=True)
        saved_session(session_file, transcript=stored)
        result = runner.invoke(app, ["chat", "--model", "demo", "--session", str(session_file)], input="")
        assert result.exit_code == 0, result.stderr
        assert "transcript outside maic's folders" in result.stderr
        default = maic_home / "transcripts" / "class.jsonl"
        assert load_session(session_file).transcript == str(default) and default.is_file()
    assert victim.read_text(encoding="utf-8") == "my notes\n"
    assert not (tmp_path / "elsewhere" / "t.jsonl").exists() and not (tmp_path / "notes.jsonl").exists()


def test_a_transcript_beside_the_session_is_kept(tmp_path: Path) -> None:
    session_file = tmp_path / "class.json"
    beside = tmp_path / "class-log.jsonl"
    saved_session(session_file, transcript=str(beside))
    result = runner.invoke(app, ["chat", "--model", "demo", "--session", str(session_file)], input="")
    assert result.exit_code == 0 and "transcript outside" not in result.stderr
    assert json.loads(beside.read_text(encoding="utf-8").splitlines()[0])["format"] == "maic-transcript"


def test_transcript_flag_goes_anywhere_but_not_into_a_folder(tmp_path: Path) -> None:
    anywhere = tmp_path / "mine" / "log.txt"
    result = runner.invoke(app, ["chat", "--model", "demo", "--session", str(tmp_path / "a.json"),
                                 "--transcript", str(anywhere)], input="")
    assert result.exit_code == 0 and anywhere.is_file()
    for target in (tmp_path, tmp_path / "mine" / "log.txt" / "under-a-file.jsonl"):
        session_file = tmp_path / "b.json"
        result = runner.invoke(app, ["chat", "--model", "demo", "--session", str(session_file),
                                     "--transcript", str(target)], input="hi\n")
        assert result.exit_code == 2
        assert f"--transcript {target}: cannot record the transcript there" in one_error_line(result.stderr)
        assert not session_file.exists()


# -- a symlinked session file -----------------------------------------------------------------

def test_a_symlinked_session_is_locked_and_written_through(tmp_path: Path) -> None:
    real = tmp_path / "real" / "class.json"
    real.parent.mkdir()
    saved_session(real)
    link = tmp_path / "link.json"
    link.symlink_to(real)
    model = script(tmp_path, reply("Hi!"), decision("END"))
    result = runner.invoke(app, ["chat", "--model", model, "--session", str(link)], input="@teacher hi\n")
    assert result.exit_code == 0, result.stderr
    assert link.is_symlink() and link.resolve() == real
    assert [m.text for m in load_session(real).classroom.messages] == ["@teacher hi", "Hi!"]
    with SessionLock(real):
        result = runner.invoke(app, ["chat", "--model", "demo", "--session", str(link)], input="")
    assert result.exit_code == 1 and "open in another maic process" in result.stderr


# -- encodings -------------------------------------------------------------------------------

def test_invalid_utf8_on_stdin_is_replaced_and_the_rest_is_read(tmp_path: Path) -> None:
    model = script(tmp_path, reply("One."), decision("END"), reply("Two."), decision("END"))
    session_file = tmp_path / "class.json"
    result = runner.invoke(app, ["chat", "--model", model, "--session", str(session_file)],
                           input=b"@teacher caf\xe9 \xff\n@teacher next\n")
    assert result.exit_code == 0, result.stderr
    texts = [m.text for m in load_session(session_file).classroom.messages]
    assert texts == ["@teacher caf\ufffd \ufffd", "One.", "@teacher next", "Two."]


@pytest.mark.parametrize("chunk", [1, 2, 3, 65536])
def test_line_reader_over_a_pipe_splits_decodes_and_ends(monkeypatch: pytest.MonkeyPatch, chunk: int) -> None:
    monkeypatch.setattr("maic_cli.chat.line_input.CHUNK", chunk)  # characters and lines cut across reads
    read_end, write_end = os.pipe()
    os.write(write_end, "first\nsé©".encode() + b" \xff\r\nlast without newline")
    os.close(write_end)
    with os.fdopen(read_end, encoding="utf-8") as stream:
        reader = LineReader(stream)
        lines = [reader.readline() for _ in range(4)]
    assert lines == ["first\n", "s\u00e9\u00a9 \ufffd\r\n", "last without newline", ""]


# -- Ctrl-C at the plain prompt on a terminal ------------------------------------------------

def test_ctrl_c_at_the_plain_prompt_acts_at_once(tmp_path: Path) -> None:
    leader, follower = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "maic_cli", "chat", "--plain", "--model", "demo",
                             "--session", str(tmp_path / "class.json")], stdin=follower,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    os.close(follower)
    try:
        assert proc.stderr is not None
        assert proc.stderr.readline().startswith("maic: note: demo model")  # printed as the loop starts
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)  # Ctrl-C ends the chat without waiting for Enter
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(leader)
    assert proc.returncode == 130
    assert "Traceback" not in err and "Fatal Python error" not in err


# -- plain mode's exit code after a provider error -------------------------------------------

def test_plain_mode_exits_1_when_the_last_round_failed(tmp_path: Path) -> None:
    result = runner.invoke(app, ["chat", "--model", script(tmp_path, {"error": "auth"}),
                                 "--session", str(tmp_path / "a.json")], input="hello\n")
    assert result.exit_code == 1 and "authentication failed" in result.stderr.lower()
    recovered = script(tmp_path, {"error": "auth"}, decision("teacher"), reply("Back."), decision("END"),
                       name="recovered.json")
    result = runner.invoke(app, ["chat", "--model", recovered, "--session", str(tmp_path / "b.json")],
                           input="hello\nagain\n")
    assert result.exit_code == 0, result.stderr


# -- messages that said the wrong thing ------------------------------------------------------

def test_initiator_without_topic_is_an_error(tmp_path: Path) -> None:
    session_file = tmp_path / "class.json"
    result = runner.invoke(app, ["chat", "--model", "demo", "--session", str(session_file),
                                 "--initiator", "teacher"], input="")
    assert result.exit_code == 2 and "--initiator opens a discussion: use it with --topic" in result.stderr
    assert not session_file.exists()


def test_class_options_on_a_resumed_session_are_named_as_ignored(tmp_path: Path) -> None:
    session_file = tmp_path / "class.json"
    saved_session(session_file)
    result = runner.invoke(app, ["chat", "--model", "demo", "--session", str(session_file), "--agents", "teacher",
                                 "--topic", "Is math invented?"], input="")
    assert result.exit_code == 0
    notes = [line for line in result.stderr.splitlines() if "ignored" in line]
    assert notes == ["maic: note: --agents, --topic ignored: a resumed session keeps its class and settings"]
    assert load_session(session_file).config.discussion_topic is None
