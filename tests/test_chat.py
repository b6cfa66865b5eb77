"""``maic chat`` driven with the scripted model: pipes, slash commands, sessions, interruption."""

from __future__ import annotations

import asyncio
import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from rich.console import Console
from typer.testing import CliRunner, Result

from maic_cli.chat.run import run_chat
from maic_cli.chat.setup import new_session
from maic_cli.cli.app import app
from maic_cli.llm.spec import ModelSpec
from maic_cli.store.config import Settings
from maic_cli.store.session import SESSION_VERSION, SessionLock, load_session
from tests.helpers import action, decision, reply

runner = CliRunner()


def script(tmp_path: Path, *replies: object, name: str = "script.yaml") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(list(replies)), encoding="utf-8")
    return f"scripted:{path}"


def chat(tmp_path: Path, model: str, stdin: str, *args: str) -> tuple[Result, Path]:
    session = tmp_path / "class.json"
    result = runner.invoke(app, ["chat", "--model", model, "--session", str(session), *args], input=stdin)
    return result, session


def test_piped_multi_agent_round(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-key-that-must-never-be-stored")
    model = script(tmp_path, decision("teacher"),
                   reply("Sunlight scatters.", action("wb_draw_latex", latex="\\lambda^{-4}")),
                   decision("curious_student"), reply("Why blue and not violet?"), decision("USER"))
    result, session_file = chat(tmp_path, model, "Why is the sky blue?\n")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        "Ms. Rivera: Sunlight scatters. [drew formula]",
        "Mia: Why blue and not violet?",
    ]
    assert "Session saved:" in result.stderr and "\x1b" not in result.stdout
    session = load_session(session_file)
    assert [m.role for m in session.classroom.messages] == ["user", "agent", "agent"]
    assert session.classroom.store.whiteboard[0].params["latex"] == "\\lambda^{-4}"
    transcript = Path(session.transcript or "")
    assert transcript.is_file()
    for written in (session_file, transcript):
        assert "sk-test-key" not in written.read_text(encoding="utf-8")


def test_at_mention_makes_that_agent_speak_first(tmp_path: Path) -> None:
    model = script(tmp_path, reply("Knock knock."), decision("END"))
    result, _ = chat(tmp_path, model, "@class_clown tell us a joke\n")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("Leo: Knock knock.")


def test_at_mention_of_a_stranger_is_refused(tmp_path: Path) -> None:
    result, _ = chat(tmp_path, script(tmp_path), "@principal hello\n")
    assert result.exit_code == 0
    assert "no agent 'principal' in this class" in result.stderr


def test_cue_user_then_next_round(tmp_path: Path) -> None:
    model = script(tmp_path, decision("teacher"), reply("What do you think?"), decision("USER"),
                   decision("teacher"), reply("Exactly right."), decision("END"))
    result, session_file = chat(tmp_path, model, "Explain gravity\nThings fall down\n")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == ["Ms. Rivera: What do you think?", "Ms. Rivera: Exactly right."]
    assert len(load_session(session_file).classroom.messages) == 4


def test_class_whiteboard_export_save_model_and_help_work_in_a_piped_chat(tmp_path: Path) -> None:
    model = script(tmp_path, reply("Hi!", action("wb_draw_text", content="E=mc^2")), decision("END"))
    export = tmp_path / "class.md"
    copy = tmp_path / "copy.json"
    stdin = f"@teacher hi\n/class\n/whiteboard\n/export {export}\n/save {copy}\n/model\n/bogus\n/help\n/quit\n"
    result, _ = chat(tmp_path, model, stdin, "--agents", "teacher,note_taker")
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "teacher" in out and "note_taker" in out  # /class
    assert "[wb_1] text: E=mc^2" in out  # /whiteboard
    assert f"Exported to {export}" in out and "E=mc^2" in export.read_text()
    assert f"Saved to {copy}" in out and load_session(copy).classroom.messages
    assert f"Model: {model}" in out
    assert "unknown command /bogus" in result.stderr
    assert "/export FILE.md" in out  # /help


def test_resume_keeps_history_and_whiteboard(tmp_path: Path) -> None:
    first = script(tmp_path, reply("Let me draw.", action("wb_draw_table", data=[["a", "b"], ["1", "2"]])),
                   decision("END"), name="one.yaml")
    result, session_file = chat(tmp_path, first, "@teacher draw a table\n")
    assert result.exit_code == 0, result.output
    second = script(tmp_path, reply("As you can see on the board…"), decision("END"), name="two.yaml")
    result, _ = chat(tmp_path, second, "@teacher and now?\n/whiteboard\n")
    assert result.exit_code == 0, result.output
    assert "[wb_1] table: 2 rows" in result.stdout
    session = load_session(session_file)
    assert [m.text for m in session.classroom.messages] == [
        "@teacher draw a table", "Let me draw.", "@teacher and now?", "As you can see on the board…"]


def test_continue_resumes_the_latest_session(tmp_path: Path, maic_home: Path) -> None:
    first = script(tmp_path, reply("First."), name="one.json")
    runner.invoke(app, ["chat", "--model", first, "--agents", "teacher"], input="hello\n")
    second = script(tmp_path, reply("Second."), name="two.json")
    result = runner.invoke(app, ["chat", "--continue", "--model", second], input="again\n")
    assert result.exit_code == 0, result.output
    sessions = list((maic_home / "sessions").glob("*.json"))
    assert len(sessions) == 1
    assert [m.text for m in load_session(sessions[0]).classroom.messages][-1] == "Second."


def test_corrupt_session_is_refused_and_left_untouched(tmp_path: Path) -> None:
    session_file = tmp_path / "class.json"
    session_file.write_text('{"version": 1, "config": ', encoding="utf-8")
    before = session_file.read_bytes()
    result = runner.invoke(app, ["chat", "--model", "demo", "--session", str(session_file)], input="hi\n")
    assert result.exit_code == 1
    assert result.stderr.startswith(f"maic: error: {session_file}:1: not a valid session file")
    assert len(result.stderr.strip().splitlines()) == 1
    assert session_file.read_bytes() == before


def test_newer_session_version_is_refused(tmp_path: Path) -> None:
    session_file = tmp_path / "class.json"
    session_file.write_text(json.dumps({"version": SESSION_VERSION + 1}), encoding="utf-8")
    result = runner.invoke(app, ["chat", "--model", "demo", "--session", str(session_file)], input="hi\n")
    assert result.exit_code == 1 and "newer than this maic understands" in result.stderr


def test_second_process_on_the_same_session_is_refused(tmp_path: Path) -> None:
    session_file = tmp_path / "class.json"
    with SessionLock(session_file):
        result = runner.invoke(app, ["chat", "--model", "demo", "--session", str(session_file)], input="hi\n")
    assert result.exit_code == 1
    assert "open in another maic process" in result.stderr


def one_error_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.startswith("maic: error:")]
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr
    return lines[0]


def test_a_session_file_that_is_not_utf8_is_refused_untouched(tmp_path: Path) -> None:
    session_file = tmp_path / "class.json"
    session_file.write_bytes(b'{"version": 1, "name": "caf\xe9"}')
    result = runner.invoke(app, ["chat", "--model", "demo", "--session", str(session_file)], input="hi\n")
    assert result.exit_code == 1
    assert "not a valid session file (not UTF-8 text)" in one_error_line(result.stderr)
    assert session_file.read_bytes() == b'{"version": 1, "name": "caf\xe9"}'


@pytest.mark.parametrize("version", ['"1"', "true", "0", "[1]"])
def test_a_version_that_is_not_a_number_is_not_called_newer(tmp_path: Path, version: str) -> None:
    session_file = tmp_path / "class.json"
    session_file.write_text(f'{{"version": {version}}}', encoding="utf-8")
    result = runner.invoke(app, ["chat", "--model", "demo", "--session", str(session_file)], input="")
    line = one_error_line(result.stderr)
    assert result.exit_code == 1 and f"version {version} is not a version number" in line
    assert "newer" not in line


def test_an_unusable_maic_home_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("", encoding="utf-8")
    monkeypatch.setenv("MAIC_HOME", str(blocker / "maic"))
    result = runner.invoke(app, ["chat", "--model", "demo"], input="hi\n")
    assert result.exit_code == 1 and "cannot create the session's lock file" in one_error_line(result.stderr)


def test_a_lock_that_cannot_be_created_is_not_called_busy(tmp_path: Path) -> None:
    session_file = tmp_path / "class.json"
    (tmp_path / "class.json.lock").mkdir()  # cannot be opened as a lock file
    result = runner.invoke(app, ["chat", "--model", "demo", "--session", str(session_file)], input="")
    line = one_error_line(result.stderr)
    assert result.exit_code == 1 and "cannot create the session's lock file" in line
    assert "another maic process" not in line


def test_markup_and_escape_sequences_from_the_model_are_shown_literally(tmp_path: Path) -> None:
    nasty = "[bold red]LOUD[/bold red] \x1b[2J\x1b]0;owned\x07 done"
    result, _ = chat(tmp_path, script(tmp_path, reply(nasty)), "@teacher hi\n", "--agents", "teacher")
    assert result.stdout == "Ms. Rivera: [bold red]LOUD[/bold red]  done\n"


def test_provider_error_is_one_line_and_the_session_survives(tmp_path: Path) -> None:
    model = script(tmp_path, {"error": "rate_limit"})
    result, session_file = chat(tmp_path, model, "hello\n")
    assert result.exit_code == 1  # plain mode: the last round failed
    assert "maic: error: scripted:" in result.stderr and "rate limited (HTTP 429)" in result.stderr
    assert load_session(session_file).classroom.messages[0].text == "hello"


def test_discussion_mode_lets_the_initiator_open(tmp_path: Path) -> None:
    model = script(tmp_path, reply("Is math invented? I say discovered."), decision("USER"))
    result, session_file = chat(tmp_path, model, "", "--topic", "Is math invented?",
                                "--initiator", "deep_thinker")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("Theo: Is math invented?")
    assert load_session(session_file).config.discussion_topic == "Is math invented?"


def test_ctrl_c_during_a_stream_keeps_the_partial_message(tmp_path: Path) -> None:
    slow = {"reply": reply("This is a long and slow explanation " * 30), "chunk_size": 4, "chunk_delay": 0.02}
    model = script(tmp_path, slow)
    session_file = tmp_path / "class.json"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "maic_cli", "chat", "--model", model, "--agents", "teacher",
                             "--session", str(session_file)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env, text=True)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write("explain it slowly\n")
    proc.stdin.flush()
    started = proc.stdout.read(len("Ms. Rivera: This"))
    assert started == "Ms. Rivera: This"
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err
    assert "[interrupted]" in out
    session = load_session(session_file)
    last = session.classroom.messages[-1]
    assert last.interrupted and last.text.startswith("This")
    assert len(last.text) < 200
    assert time.monotonic() - sent < 5


def test_interactive_path_with_prompt_toolkit_pipe_input(tmp_path: Path) -> None:
    model_file = tmp_path / "s.json"
    model_file.write_text(json.dumps([decision("teacher"), reply("Hello from the live view!"),
                                      decision("END")]), encoding="utf-8")
    settings = Settings(agents=["teacher", "curious_student"])
    session = new_session(settings, None, None)
    session.model = f"scripted:{model_file}"
    path = tmp_path / "live.json"
    console = Console(file=io.StringIO(), width=100, height=30, color_system=None)

    async def main() -> None:
        with create_pipe_input() as pipe:
            pipe.send_text("Why is the sky blue?\r")
            pipe.send_text("/model demo\r")
            pipe.send_text("/quit\r")
            await run_chat(session, path, interactive=True, console=console, prompt_input=pipe,
                           prompt_output=DummyOutput())

    asyncio.run(main())
    screen = console.file.getvalue()  # type: ignore[attr-defined]
    assert "Hello from the live view!" in screen and "Ms. Rivera" in screen
    assert "Session saved:" in screen
    assert [m.role for m in load_session(path).classroom.messages] == ["user", "agent"]
    assert load_session(path).model == "demo" and "Model switched to demo" in screen


@pytest.mark.parametrize("flag", ["--initiator", "--agents"])
def test_bad_class_options_exit_2(tmp_path: Path, flag: str) -> None:
    args = ["--topic", "x", "--initiator", "ghost"] if flag == "--initiator" else ["--agents", "teacher,ghost"]
    result = runner.invoke(app, ["chat", "--model", "demo", "--session", str(tmp_path / "s.json"), *args],
                           input="")
    assert result.exit_code == 2 and "ghost" in result.stderr


def test_model_switch_keeps_the_chat_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import maic_cli.chat.run as chat_run
    from maic_cli.llm import factory

    calls: list[tuple[str, dict[str, object]]] = []
    real = factory.make_llm

    def recording(model: ModelSpec, **kwargs: object):  # type: ignore[no-untyped-def]
        calls.append((model.raw, kwargs))
        return real(model, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(chat_run, "make_llm", recording)
    result, _ = chat(tmp_path, "demo", "/model demo\n/quit\n", "--temperature", "0.3", "--structured", "off")
    assert result.exit_code == 0, result.output
    assert [model for model, _ in calls] == ["demo", "demo"]
    assert all(kw["temperature"] == 0.3 and kw["structured"] == "off" for _, kw in calls)
