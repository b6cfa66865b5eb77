"""``maic chat`` against hostile session files, broken disks, bad input bytes and Ctrl-C."""

from __future__ import annotations

import asyncio
import errno
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

import maic_cli.chat.loop as chat_loop
from maic_cli.chat import setup as chat_setup
from maic_cli.chat.line_input import LineReader
from maic_cli.chat.loop import ChatApp
from maic_cli.chat.setup import confirm_session_choices, new_session, resolve_model
from maic_cli.cli.app import app
from maic_cli.engine.events import Event
from maic_cli.engine.round import RoundResult
from maic_cli.errors import InputError
from maic_cli.llm.factory import make_llm
from maic_cli.llm.spec import ModelSpec
from maic_cli.store.config import Settings, load_settings
from maic_cli.store.session import Session, SessionLock, load_session, save_session
from maic_cli.testing.openai_server import LoopbackOpenAIServer
from maic_cli.ui.view import View
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


# -- file-system errors -----------------------------------------------------------------------

class RecordingView(View):
    def __init__(self) -> None:
        self.calls: list[tuple[str, object]] = []

    def round_started(self) -> None:
        self.calls.append(("round_started", None))

    def on_event(self, event: Event) -> None:
        pass

    def round_finished(self, result: RoundResult | None = None) -> None:
        self.calls.append(("round_finished", result.reason if result else None))

    def info(self, text: str) -> None:
        self.calls.append(("info", text))

    def error(self, text: str) -> None:
        self.calls.append(("error", text))

    def block(self, title: str, lines: list[str]) -> None:
        self.calls.append(("block", title))

    def named(self, kind: str) -> list[object]:
        return [value for name, value in self.calls if name == kind]


def chat_app(tmp_path: Path, *replies: object) -> tuple[ChatApp, RecordingView, Path]:
    path = tmp_path / "class.json"
    session = saved_session(path, model=script(tmp_path, *replies))
    view = RecordingView()
    app_ = ChatApp(session=session, path=path, llm=make_llm(ModelSpec.parse(session.model)), make_client=make_llm,
                   view=view)
    return app_, view, path


def test_a_failed_save_mid_chat_keeps_the_class_and_retries(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    app_, view, path = chat_app(tmp_path, reply("One."), reply("Two."))  # one agent: no director call
    last_good = path.read_bytes()

    def disk_full(session: Session, target: Path) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(chat_loop, "save_session", disk_full)
    asyncio.run(app_.handle_line("@teacher first"))
    errors = view.named("error")
    assert len(errors) == 1 and "cannot save the session (No space left on device)" in str(errors[0])
    assert view.named("round_finished") == ["cue_user"]
    assert path.read_bytes() == last_good  # the file keeps its last good version
    assert [m.text for m in app_.session.classroom.messages] == ["@teacher first", "One."]  # kept in memory
    monkeypatch.setattr(chat_loop, "save_session", save_session)
    asyncio.run(app_.handle_line("@teacher second"))
    assert app_.save_error is None and f"Session saved again to {path}" in view.named("info")
    assert [m.text for m in load_session(path).classroom.messages][-1] == "Two."


def test_the_view_is_always_told_the_round_finished(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app_, view, _ = chat_app(tmp_path)

    async def broken_round(*args: object, **kwargs: object) -> RoundResult:
        raise RuntimeError("a bug in the engine")

    monkeypatch.setattr("maic_cli.engine.runner.run_round", broken_round)
    with pytest.raises(RuntimeError):
        asyncio.run(app_.handle_line("hello"))
    assert view.named("round_finished") == ["error"]


def test_a_chat_whose_saves_fail_says_so_once_and_exits_1(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def read_only(session: Session, target: Path) -> None:
        raise PermissionError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(chat_loop, "save_session", read_only)
    model = script(tmp_path, reply("Hi!"), decision("END"), reply("Again!"), decision("END"))
    session_file = tmp_path / "class.json"
    result = runner.invoke(app, ["chat", "--model", model, "--session", str(session_file)],
                           input="@teacher hi\n@teacher again\n")
    assert result.exit_code == 1 and "Traceback" not in result.stderr
    assert result.stdout.splitlines() == ["Ms. Rivera: Hi!", "Ms. Rivera: Again!"]
    errors = result.stderr.strip().splitlines()
    assert len(errors) == 2 and "cannot save the session (Read-only file system)" in errors[0]
    assert "could not be saved" in errors[1] and "last good version" in errors[1]
    assert load_session(session_file).classroom.messages == []  # the first (good) save is what is on disk


def test_save_to_a_place_that_cannot_be_written_is_one_line(tmp_path: Path) -> None:
    a_file = tmp_path / "a-file"
    a_file.write_text("x", encoding="utf-8")
    stdin = f"/save /\n/save {tmp_path}\n/save {a_file}/sub.json\n/save {tmp_path / 'ok.json'}\n"
    result = runner.invoke(app, ["chat", "--model", "demo", "--session", str(tmp_path / "s.json")], input=stdin)
    assert result.exit_code == 0 and "Traceback" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if "cannot save" in line]
    assert [e.split(": cannot save")[0] for e in errors] == ["maic: error: /", f"maic: error: {tmp_path}",
                                                           f"maic: error: {a_file}/sub.json"]
    assert f"Saved to {tmp_path / 'ok.json'}" in result.stdout


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


def test_a_transcript_that_cannot_be_written_stops_recording(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from maic_cli.store.transcript import TranscriptWriter

    def disk_full(self: TranscriptWriter, entry: object) -> None:  # the header (written at creation) goes in
        raise OSError(errno.ENOSPC, "No space left on device")

    def event_disk_full(self: TranscriptWriter, event: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(TranscriptWriter, "_write", disk_full)
    monkeypatch.setattr(TranscriptWriter, "event", event_disk_full)
    model = script(tmp_path, reply("Hi!"), reply("Again!"))
    session_file = tmp_path / "class.json"
    result = runner.invoke(app, ["chat", "--model", model, "--agents", "teacher", "--session", str(session_file)],
                           input="@teacher hi\n@teacher again\n")
    assert result.exit_code == 0 and "Traceback" not in result.stderr
    assert result.stdout.splitlines() == ["Ms. Rivera: Hi!", "Ms. Rivera: Again!"]
    assert "cannot write the transcript (No space left on device)" in one_error_line(result.stderr)
    assert [m.text for m in load_session(session_file).classroom.messages][-1] == "Again!"


def test_lines_that_arrive_after_the_transcript_is_closed_are_dropped(tmp_path: Path) -> None:
    from maic_cli.chat.recording import GuardedRecorder
    from maic_cli.llm.recording import CallRecord
    from maic_cli.store.transcript import TranscriptHeader, TranscriptWriter

    session = new_session(Settings(agents=["teacher"]), None, None)
    path = tmp_path / "t.jsonl"
    writer = TranscriptWriter(path, TranscriptHeader(model="demo", produced_by="demo", agents=session.agents,
                                                     config=session.config))
    reported: list[str] = []
    recorder = GuardedRecorder(writer)
    recorder.report = reported.append
    recorder.learner("hello")
    recorder.close()
    recorder.call(CallRecord(purpose="agent", agent_id="teacher", messages=[]))  # e.g. a stream finalized at exit
    kinds = [json.loads(line)["kind"] for line in path.read_text().splitlines()]
    assert reported == [] and kinds == ["header", "learner"]
