"""A learner's line has a length bound (issue 35, finding 11): typing or pasting 50 KB or 1 MB into the prompt
stays fast and bounded, a piped line past the bound is refused in one line and nothing of it reaches the model,
and the plain reader keeps bounded memory for a line of any length."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from typer.testing import CliRunner

from maic_cli.chat.line_input import MAX_LEARNER_CHARS, LineReader
from maic_cli.cli.app import app
from maic_cli.store.session import load_session
from maic_cli.ui.input import make_prompt_session
from tests.helpers import decision, reply

runner = CliRunner()


def _typed(text: str, *, paste: bool = False) -> tuple[str, float]:
    async def ask() -> str:
        with create_pipe_input() as pipe:
            session = make_prompt_session(None, ["teacher"], commands={"/help": "show the commands"},
                                          input=pipe, output=DummyOutput(), max_chars=MAX_LEARNER_CHARS)
            answer = asyncio.ensure_future(session.prompt_async("you › "))
            # from a thread: a pipe holds 64 KB, and the prompt reads it only while the loop runs
            await asyncio.to_thread(pipe.send_text, f"\x1b[200~{text}\x1b[201~\r" if paste else text + "\r")
            return await answer

    start = time.perf_counter()
    answer = asyncio.run(ask())
    return answer, time.perf_counter() - start


def test_50_kb_typed_into_the_prompt_stays_at_the_bound_and_is_quick() -> None:
    answer, seconds = _typed("why is the sky blue " * 2500)  # 50,000 characters, key by key
    assert len(answer) == MAX_LEARNER_CHARS and answer.startswith("why is the sky blue")
    assert seconds < 20, seconds  # 35 s and 1.2 GB before the bound, on an idle machine


def test_a_1_mb_bracketed_paste_is_cut_to_the_bound() -> None:
    answer, seconds = _typed("x" * 1_000_000, paste=True)
    assert answer == "x" * MAX_LEARNER_CHARS
    assert seconds < 20, seconds


def test_a_line_at_the_bound_is_sent_whole() -> None:
    answer, _ = _typed("y" * MAX_LEARNER_CHARS, paste=True)
    assert answer == "y" * MAX_LEARNER_CHARS


def test_a_piped_line_past_the_bound_is_refused_in_one_line_and_nothing_is_sent(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps([reply("Short answer."), decision("END")]), encoding="utf-8")
    session_file = tmp_path / "class.json"
    huge = "why " * 250_000  # 1 MB on one line
    result = runner.invoke(app, ["chat", "--model", f"scripted:{script}", "--session", str(session_file)],
                           input=f"@teacher {huge}\n@teacher short one\n")
    assert result.exit_code == 0, result.stderr
    refusals = [line for line in result.stderr.splitlines() if f"at most {MAX_LEARNER_CHARS:,} characters" in line]
    assert len(refusals) == 1 and len(refusals[0]) < 200, result.stderr
    texts = [m.text for m in load_session(session_file).classroom.messages]
    assert texts == ["@teacher short one", "Short answer."]  # the scripted model answered only the short line


def test_the_plain_reader_keeps_a_line_of_any_length_in_bounded_memory(tmp_path: Path) -> None:
    read_end, write_end = os.pipe()
    code = ("import os,sys\n"
            "from maic_cli.chat.line_input import LineReader\n"
            "reader = LineReader(sys.stdin)\n"
            "first = reader.readline(); second = reader.readline()\n"
            "peak = [l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM:')][0]\n"
            "print(len(first), repr(second), peak)\n")
    proc = subprocess.Popen([sys.executable, "-c", code], stdin=read_end, stdout=subprocess.PIPE, text=True)
    os.close(read_end)
    with os.fdopen(write_end, "wb") as pipe:
        for _ in range(200):
            pipe.write(b"a" * 1_000_000)  # one line of 200 MB
        pipe.write(b"\nnext\n")
    out, _ = proc.communicate(timeout=120)
    length, second, peak_kb = out.split()
    assert int(length) == MAX_LEARNER_CHARS + 1 and second == "'next\\n'"
    # the child's own peak (VmHWM: ru_maxrss may carry the parent's from before the exec), well under 200 MB
    assert int(peak_kb) < 100_000, peak_kb


def test_the_reader_returns_short_lines_as_they_are(tmp_path: Path) -> None:
    read_end, write_end = os.pipe()
    os.write(write_end, b"one\n" + b"b" * (MAX_LEARNER_CHARS + 10) + b"\nthree")
    os.close(write_end)
    with os.fdopen(read_end, encoding="utf-8") as stream:
        reader = LineReader(stream)
        lines = [reader.readline() for _ in range(4)]
    assert lines == ["one\n", "b" * (MAX_LEARNER_CHARS + 1), "three", ""]
