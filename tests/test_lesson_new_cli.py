"""``maic lesson new`` on the command line (Ctrl-C, where it writes, options, progress) and
``maic lesson check``."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from maic_cli.cli import lesson_cmd
from maic_cli.cli.app import app
from maic_cli.llm.port import LLMRequest, StreamPiece
from maic_cli.llm.scripted import ScriptedLLM
from maic_cli.store.lessons import load_lesson
from tests.lesson_steps import (
    REQUIREMENTS,
    SCRIPT,
    new,
    replies,
    script_file,
)

# -- Ctrl-C -----------------------------------------------------------------------------------------

class InterruptedLLM:
    """Serves the scripted replies, then raises ``interrupt`` in the middle of the next reply."""

    def __init__(self, items: list[str], interrupt: BaseException) -> None:
        self.model, self.inner, self.interrupt = "interrupted", ScriptedLLM(items), interrupt

    async def stream(self, request: LLMRequest) -> AsyncIterator[StreamPiece]:
        if self.inner.remaining == 0:
            yield StreamPiece(text='{"steps": [{"say": "Half')
            raise self.interrupt
        async for piece in self.inner.stream(request):
            yield piece


@pytest.mark.parametrize("interrupt", [KeyboardInterrupt(), asyncio.CancelledError()], ids=["sigint", "cancelled"])
def test_ctrl_c_mid_step_exits_130_and_leaves_no_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      interrupt: BaseException) -> None:
    import maic_cli.llm.factory

    client = InterruptedLLM(replies()[:3], interrupt)
    monkeypatch.setattr(maic_cli.llm.factory, "make_llm", lambda *args, **kwargs: client)
    out = tmp_path / "lesson.yaml"
    result = CliRunner().invoke(app, ["lesson", "new", "photosynthesis", "--scenes", "3", "--out", str(out),
                                      "--model", "openai/gpt-4o-mini", "--api-base", "http://127.0.0.1:9"])
    assert result.exit_code == 130, result.stderr
    assert client.inner.remaining == 0  # it really was in the fourth step
    assert list(tmp_path.iterdir()) == [tmp_path / "maic_home"]  # no file, no temp file


# -- where it writes ----------------------------------------------------------------------------------

def test_an_existing_file_is_kept_without_force_and_replaced_with_it(tmp_path: Path) -> None:
    out = tmp_path / "out" / "lesson.yaml"
    out.parent.mkdir()
    out.write_text("mine\n")
    result, _ = new(tmp_path, [])  # no replies: it must refuse before any call
    assert result.exit_code == 2
    assert "already exists; pass --force" in result.stderr and out.read_text() == "mine\n"
    result, _ = new(tmp_path, replies(), "--force")
    assert result.exit_code == 0, result.stderr
    assert load_lesson(out).title == REQUIREMENTS["title"]


def test_a_file_that_appears_while_generating_is_kept_and_the_lesson_goes_beside_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "out" / "lesson.yaml"
    out.parent.mkdir()
    original = lesson_cmd.generate

    async def meanwhile(*args: Any) -> Any:
        out.write_text("someone else's\n")  # another process takes the name during the model calls
        return await original(*args)

    monkeypatch.setattr(lesson_cmd, "generate", meanwhile)
    result, _ = new(tmp_path, replies())
    assert result.exit_code == 0, result.stderr
    assert out.read_text() == "someone else's\n"
    assert "appeared meanwhile; the lesson goes to" in result.stderr
    assert load_lesson(tmp_path / "out" / "lesson-2.yaml").title == REQUIREMENTS["title"]


def test_the_default_file_is_named_after_the_topic_in_the_current_folder(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["lesson", "new", "Photosynthesis: how plants eat!", "--scenes", "3",
                                      "--model", f"scripted:{script_file(tmp_path, replies())}"])
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == "photosynthesis-how-plants-eat.yaml"
    assert "into photosynthesis-how-plants-eat.yaml" in result.stderr.splitlines()[0]
    assert load_lesson(tmp_path / "photosynthesis-how-plants-eat.yaml").scenes


def test_bad_options_are_input_errors(tmp_path: Path) -> None:
    assert CliRunner().invoke(app, ["lesson", "new", "   "]).exit_code == 2
    assert CliRunner().invoke(app, ["lesson", "new", "x", "--scenes", "0"]).exit_code == 2
    too_long = CliRunner().invoke(app, ["lesson", "new", "x", "--language", "x" * 41])
    assert too_long.exit_code == 2 and "--language: give it in 1 to 40 characters" in too_long.stderr
    folder = tmp_path / "a-folder"
    folder.mkdir()
    result = CliRunner().invoke(app, ["lesson", "new", "x", "--out", str(folder), "--force"])
    assert result.exit_code == 2 and "not a regular file" in result.stderr
    (tmp_path / "a-file").write_text("")
    under_a_file = CliRunner().invoke(app, ["lesson", "new", "x", "--out", str(tmp_path / "a-file" / "l.yaml")])
    assert under_a_file.exit_code == 2 and "a-file is not a folder" in under_a_file.stderr


def test_model_text_is_cleaned_before_it_is_written(tmp_path: Path) -> None:
    hostile = {**REQUIREMENTS, "title": "Plants\x1b[2J\x1b]0;owned\x07 eat"}
    result, out = new(tmp_path, replies((0, json.dumps(hostile))), "--force")
    assert result.exit_code == 0, result.stderr
    assert "\x1b" not in out.read_text() and load_lesson(out).title == "Plants eat"


# -- lesson check ------------------------------------------------------------------------------------

def test_check_prints_the_outline_of_a_good_file() -> None:
    result = CliRunner().invoke(app, ["lesson", "check", "lessons/photosynthesis.yaml"])
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "How plants make food: photosynthesis"
    assert " 1. slide needs: What a plant needs [question, inputs, leaf] (7 script steps)" in lines
    assert " 5. quiz check: Check your understanding (3 questions, 7 points)" in lines
    assert any(line.startswith(" 4. discussion talk:") and "opened by curious_student" in line for line in lines)


def test_check_reports_a_bad_file_as_path_line_field(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("title: X\nscenes:\n  - type: slide\n    id: one\n    title: \"\\e[31mred\"\n"
                   "    script:\n      - spotlight: nowhere\n")
    result = CliRunner().invoke(app, ["lesson", "check", str(bad)])
    assert result.exit_code == 2
    assert result.stderr.startswith(f"maic: error: {bad}:")
    assert "nowhere" in result.stderr and "\x1b" not in result.stderr


def test_the_demo_model_is_refused_before_anything_runs(tmp_path: Path) -> None:
    out = tmp_path / "lesson.yaml"
    result = CliRunner().invoke(app, ["lesson", "new", "x", "--model", "demo", "--out", str(out)])
    assert result.exit_code == 2 and "cannot write lesson text" in result.stderr and not out.exists()


# -- progress ------------------------------------------------------------------------------------------

def progress_events() -> list[Any]:
    from maic_cli.authoring.generation import Progress

    return [Progress("start", "outline", 2, None), Progress("retry", "outline", 2, None, "[bold]x\x1b[2J"),
            Progress("done", "outline", 2, None), Progress("done", "scene 1/3 (slide): elements", 3, 7)]


def test_progress_in_a_pipe_is_plain_lines_with_the_problem_cleaned() -> None:
    import io

    from maic_cli.cli.lesson_progress import StepReporter

    stream = io.StringIO()
    reporter = StepReporter(stream, live=False)
    with reporter.running():
        for event in progress_events():
            reporter(event)
    assert stream.getvalue().splitlines() == [
        "maic: step 2 outline …", "maic: step 2 outline: reply unusable ([bold]x); asking again",
        "maic: step 2 outline done", "maic: step 3/7 scene 1/3 (slide): elements done"]


def test_progress_on_a_terminal_shows_done_steps_and_prints_no_markup() -> None:
    import io

    from maic_cli.cli.lesson_progress import StepReporter

    stream = io.StringIO()
    reporter = StepReporter(stream, live=True)
    with reporter.running():
        for event in progress_events():
            reporter(event)
    text = stream.getvalue()
    assert "✓ step 2 outline" in text and "✓ step 3/7 scene 1/3 (slide): elements" in text
    assert "reply unusable ([bold]x); asking again" in text and "\x1b[2J" not in text


def test_a_real_sigint_during_a_step_exits_130_and_leaves_no_file(tmp_path: Path) -> None:
    """The signal itself, in a subprocess: sent once the lecture step has started (read from the
    progress lines, no sleep); that step's reply streams slowly enough never to finish first."""
    import os
    import signal
    import subprocess
    import sys

    slow = {"reply": json.dumps(SCRIPT), "chunk_size": 1, "chunk_delay": 0.5}
    items = replies((3, [slow]))
    out = tmp_path / "out" / "lesson.yaml"
    with subprocess.Popen([sys.executable, "-m", "maic_cli", "lesson", "new", "photosynthesis", "--scenes", "3",
                           "--model", f"scripted:{script_file(tmp_path, items)}", "--out", str(out)],
                          stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
                          env={**os.environ, "MAIC_HOME": str(tmp_path / "home")}) as proc:
        assert proc.stderr is not None
        seen = []
        for line in proc.stderr:
            seen.append(line)
            if "lecture …" in line:
                proc.send_signal(signal.SIGINT)
                break
        rest = proc.stderr.read()
        assert proc.wait(timeout=60) == 130, "".join(seen) + rest
    assert "Traceback" not in rest and not out.parent.exists()


def test_an_unwritable_folder_is_refused_before_any_call(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["lesson", "new", "p", "--scenes", "3", "--model",
                                      f"scripted:{script_file(tmp_path, [])}", "--out", "/proc/maic-lesson.yaml"])
    assert result.exit_code == 2 and "cannot write in /proc" in result.stderr  # no replies were needed


def test_the_default_name_leaves_out_control_sequences() -> None:
    assert str(lesson_cmd.default_out("\x1b[31mred\x1b[0m plants")) == "red-plants.yaml"
