"""Damaged files and unexpected errors: one line or skipped, never a traceback; the terminal stays sane."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

import maic_cli.chat.loop as chat_loop
from maic_cli.chat.loop import ChatApp
from maic_cli.cli.app import app
from maic_cli.engine.runner import ClassRunner
from maic_cli.errors import SessionError
from maic_cli.llm.factory import make_llm
from maic_cli.llm.scripted import ScriptedLLM
from maic_cli.llm.spec import ModelSpec
from maic_cli.store.session import Session, load_session, save_session
from tests.helpers import reply
from tests.test_chat_hostile_sessions_and_input import runner, saved_session, script


def test_a_session_nested_too_deeply_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "deep.json"
    text = '{"version": 1, "x": ' + "[" * 100_000 + "]" * 100_000 + "}"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(SessionError) as caught:
        load_session(path)
    assert "nested too deeply" in str(caught.value) and "untouched" in str(caught.value)
    assert path.read_text(encoding="utf-8") == text


def test_a_transcript_with_foreign_bytes_is_appended_to_without_a_crash(tmp_path: Path) -> None:
    from maic_cli.engine.models import TurnConfig
    from maic_cli.store.transcript import TranscriptHeader, TranscriptWriter

    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"kind": "learner", "t": 2.5, "text": "caf\xe9"}\n{"t": ' + b"[" * 50_000 + b"\n")
    writer = TranscriptWriter(path, TranscriptHeader(model="demo", produced_by="demo", agents=[],
                                                     config=TurnConfig(agent_ids=[])))
    writer.learner("next")
    writer.close()
    last = json.loads(path.read_bytes().splitlines()[-1])
    assert last["text"] == "next" and last["t"] >= 2.5  # the clock continued from the old lines


def test_a_save_that_raises_at_a_rounds_end_leaves_the_live_terminal_sane(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Not a disk error (those are reported and retried) but a bug: the view still gives the terminal back."""
    import io

    from rich.console import Console
    from rich.live import Live

    from maic_cli.ui.live import LiveView
    from maic_cli.ui.views import ScreenState

    path = tmp_path / "class.json"
    session = saved_session(path, model=script(tmp_path, reply("One.")))
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=100, height=30, color_system=None)
    view = LiveView(console, ScreenState(classroom=session.classroom, agents={a.id: a for a in session.agents},
                                         model=session.model))
    app_ = ChatApp(session=session, path=path, llm=make_llm(ModelSpec.parse(session.model)), make_client=make_llm,
                   view=view)
    stdout = sys.stdout

    live_when_failing: list[bool] = []

    def broken_save(session: Session, target: Path) -> None:
        if any(m.role == "agent" for m in session.classroom.messages):  # the round's end: after the agent's turn
            live_when_failing.append(view._live is not None)
            raise RuntimeError("a bug while saving")
        save_session(session, target)

    async def main() -> set[asyncio.Task[object]]:
        monkeypatch.setattr(chat_loop, "save_session", broken_save)
        with pytest.raises(RuntimeError, match="a bug while saving"):
            await app_.handle_line("@teacher first")
        await asyncio.sleep(0)
        return {t for t in asyncio.all_tasks() if t is not asyncio.current_task() and not t.done()}

    assert asyncio.run(main()) == set()  # no ticker left running
    assert live_when_failing == [False]  # saved at the round's end: the live display was already given back
    assert sys.stdout is stdout  # output no longer redirected
    screen = out.getvalue()
    assert screen.rfind("\x1b[?25h") > screen.rfind("\x1b[?25l") >= 0  # the cursor hidden by Live is shown again
    with Live(console=console):  # no live display is left active on the console
        pass


def test_an_unexpected_error_is_one_line_never_a_traceback(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken_save(session: Session, target: Path) -> None:
        raise RuntimeError("a bug while saving")

    monkeypatch.setattr("maic_cli.chat.run.save_session", broken_save)
    result = runner.invoke(app, ["chat", "--model", "demo", "--plain", "--session", str(tmp_path / "s.json")],
                           input="hello\n")
    assert result.exit_code == 1
    lines = result.stderr.strip().splitlines()
    assert lines[-1] == ("maic: error: unexpected RuntimeError: a bug while saving "
                         "(a bug in maic; MAIC_DEBUG=1 shows the traceback)")
    assert "Traceback" not in result.stderr and not isinstance(result.exception, RuntimeError)
    monkeypatch.setenv("MAIC_DEBUG", "1")
    debug = runner.invoke(app, ["chat", "--model", "demo", "--plain", "--session", str(tmp_path / "t.json")],
                          input="hello\n")
    assert isinstance(debug.exception, RuntimeError)  # the traceback is there for whoever asked


def test_a_session_file_cannot_lift_the_turn_limit_or_switch_off_the_repeat_guard(tmp_path: Path) -> None:
    path = tmp_path / "hostile.json"
    saved_session(path)
    data = json.loads(path.read_text(encoding="utf-8"))
    data["config"]["allow_repeat_speaker"] = True
    path.write_text(json.dumps(data), encoding="utf-8")
    loaded = load_session(path)
    assert "allow_repeat_speaker" not in loaded.config.model_dump()  # a class setting no file holds
    played = ClassRunner(loaded.classroom, loaded.config, ScriptedLLM([]), agents={a.id: a for a in loaded.agents})
    assert played.round_context().allow_repeat_speaker is False  # only code (the runner's caller) allows repeats
    data["config"]["max_turns"] = 1_000_000_000
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(SessionError, match="max_turns"):
        load_session(path)
