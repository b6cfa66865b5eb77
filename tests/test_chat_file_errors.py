"""A chat whose files fail: a save or a transcript that cannot be written is said once, the class goes on
in memory, and the session file keeps its last good version."""

from __future__ import annotations

import asyncio
import errno
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import maic_cli.chat.loop as chat_loop
from maic_cli.chat.loop import ChatApp
from maic_cli.chat.setup import new_session
from maic_cli.cli.app import app
from maic_cli.engine.events import Event
from maic_cli.engine.round import RoundResult
from maic_cli.llm.factory import make_llm
from maic_cli.llm.spec import ModelSpec
from maic_cli.store.config import Settings
from maic_cli.store.session import Session, load_session, save_session
from maic_cli.ui.view import View
from tests.helpers import decision, reply
from tests.test_chat_hostile_sessions_and_input import one_error_line, saved_session, script

runner = CliRunner()

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
