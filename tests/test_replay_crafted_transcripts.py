"""Crafted transcripts for ``maic replay`` (and --check, --export, the ``replay:`` model): a warning or
one line, never a traceback; export never overwrites its source; --step advances on one key."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from maic_cli.cli.app import app
from maic_cli.errors import InputError
from maic_cli.llm.replay import ReplayLLM
from maic_cli.store.transcript import read_transcript
from tests.test_transcripts import QA, record_class

runner = CliRunner()


def modes(tmp_path: Path) -> list[list[str]]:
    """Watching, checking and exporting read a transcript the same way."""
    return [[], ["--check"], ["--export", str(tmp_path / "export.md")]]


def replay(path: Path, *args: str) -> Result:
    return runner.invoke(app, ["replay", str(path), *args])


def with_line(transcript: Path, line: str, at: int = 2) -> Path:
    lines = transcript.read_text().splitlines()
    lines.insert(at - 1, line)
    transcript.write_text("\n".join(lines) + "\n")
    return transcript


@pytest.mark.parametrize(("line", "warning"), [
    ('{"t": 1, "kind": "learner"}', "damaged learner line (text: Field required)"),
    ('{"t": 1, "kind": "learner", "text": ["hi"]}', "damaged learner line (text: Input should be a valid string)"),
    ('{"t": "soon", "kind": "learner", "text": "hi"}', "damaged learner line (t: Input should be a valid number"),
    ('{"t": NaN, "kind": "round_end"}', "damaged round_end line (t: Input should be a finite number)"),
    ('{"t": 1, "kind": "round_end", "reason": 5}', "damaged round_end line (reason:"),
    ('{"t": 1, "kind": "round", "trigger": {"a": 1}}', "damaged round line (trigger:"),
    ('{"t": 1, "kind": "event", "event": {"type": ["x"]}}', "unknown event type ['x']"),
    ('{"t": 1, "kind": "event", "event": "agent_end"}', "unknown event type None"),
    ('{"t": 1, "kind": "event", "event": {"type": "agent_end"}}',
     "damaged event line (event.agent_end.message_id: Field required"),
    ('{"t": 1, "kind": "hologram"}', "unknown entry kind 'hologram'"),
    ('{"t": 1, "kind": 5}', "not a transcript entry"),
    ("[1, 2, 3]", "not a transcript entry"),
    ('{"t": 1, "kind": "llm_call", "reply": 5}', "damaged llm_call line (reply: Input should be a valid string)"),
    ('{"t": 1, "kind": "llm_call", "usage": {"cost": "lots"}}', "damaged llm_call line (usage.cost:"),
    ('{"t": 1, "kind": "learner\\u202e\\u001b]0;x\\u0007"}', "unknown entry kind 'learner\\u202e\\x1b]0;x\\x07'"),
])
def test_a_damaged_line_is_skipped_with_a_warning(tmp_path: Path, line: str, warning: str) -> None:
    transcript, _ = record_class(tmp_path, *QA)
    with_line(transcript, line, at=4)
    for mode in modes(tmp_path)[::2]:  # watching and exporting: everything else still shows
        result = runner.invoke(app, ["replay", str(transcript), *mode], catch_exceptions=False)
        assert result.exit_code == 0, result.output
        assert f"{transcript}:4: {warning}" in result.stderr
        assert "\x1b" not in result.stderr and "\u202e" not in result.stderr
    check = replay(transcript, "--check")
    assert check.exit_code in (0, 1) and "Traceback" not in check.output  # a skipped call may change the rerun


@pytest.mark.parametrize(("header", "message"), [
    ({"version": "1"}, ":1: header: version: a whole number is needed, not str"),
    ({"version": 1.5}, ":1: header: version: a whole number is needed, not float"),
    ({"version": 99}, "transcript version 99 is newer than this maic reads"),
    ({"created_at": "yesterday"}, ":1: header: created_at: Input should be a valid number"),
    ({"created_at": 1e300}, ":1: header: created_at: Input should be less than or equal to"),
    ({"agents": "teacher"}, ":1: header: agents: Input should be a valid list"),
    ({"agents": [{"id": "t", "name": "T", "role": "teacher", "persona": "p", "\x1b]0;x\x07": 1}]},
     ":1: header: agents.0.'\\x1b]0;x\\x07': Extra inputs are not permitted"),
])
def test_a_damaged_header_is_refused_in_one_line(tmp_path: Path, header: dict, message: str) -> None:
    transcript, _ = record_class(tmp_path, *QA)
    lines = transcript.read_text().splitlines()
    lines[0] = json.dumps({**json.loads(lines[0]), **header})
    transcript.write_text("\n".join(lines) + "\n")
    for mode in modes(tmp_path):
        result = replay(transcript, *mode)
        assert result.exit_code == 2, result.output
        error = result.stderr.strip().splitlines()
        assert len(error) == 1 and error[0].startswith(f"maic: error: {transcript}") and message in error[0], error
        assert "\x1b" not in result.stderr


@pytest.mark.parametrize("first", ['["header"]', '"header"', "42", "null"])
def test_a_header_that_is_not_an_object_is_refused(tmp_path: Path, first: str) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(first + "\n" + '{"t": 1, "kind": "learner", "text": "hi"}\n')
    for mode in modes(tmp_path):
        result = replay(path, *mode)
        assert result.exit_code == 2 and "not a maic transcript" in result.stderr


@pytest.mark.parametrize(("garbage", "message"), [
    (b"\xff\xfe\x00\x9c binary \x00 garbage", ":2: not a JSON line"),
    (b"[" * 100_000, ":2: not a JSON line"),  # nested deeper than the JSON parser's recursion
    (b"1" * 10_000, ":2: not a JSON line"),  # an int longer than Python converts
])
def test_garbage_inside_a_transcript_is_refused_in_one_line(tmp_path: Path, garbage: bytes, message: str) -> None:
    transcript, _ = record_class(tmp_path, *QA)
    lines = transcript.read_bytes().splitlines()
    transcript.write_bytes(b"\n".join([lines[0], garbage, *lines[1:]]) + b"\n")
    for mode in modes(tmp_path):
        result = replay(transcript, *mode)
        assert result.exit_code == 2, result.output
        assert result.stderr.strip().splitlines() == [f"maic: error: {transcript}{message} (not a maic transcript?)"]
    with pytest.raises(InputError, match="not a JSON line"):
        ReplayLLM.from_file(transcript)


def test_a_gigabyte_line_is_refused_without_reading_it_whole(tmp_path: Path) -> None:
    transcript, _ = record_class(tmp_path, *QA)
    header = transcript.read_text().splitlines()[0]
    with transcript.open("w") as handle:
        handle.write(header + "\n")
        handle.truncate(len(header) + 1 + 2**30)  # a sparse 1 GB second line, no newline
    result = replay(transcript)
    assert result.exit_code == 2
    assert f"{transcript}:2: a line longer than 64 MB" in result.stderr


@pytest.mark.parametrize("kind", ["fifo", "dev_zero", "folder"])
def test_a_transcript_that_is_not_a_regular_file_is_refused_promptly(tmp_path: Path, kind: str) -> None:
    path = {"fifo": tmp_path / "t.jsonl", "dev_zero": Path("/dev/zero"), "folder": tmp_path}[kind]
    if kind == "fifo":
        os.mkfifo(path)
    as_model = "\n".join([
        "import sys, pathlib", "from maic_cli.errors import MaicError", "from maic_cli.llm.replay import ReplayLLM",
        f"try:\n    ReplayLLM.from_file(pathlib.Path({str(path)!r}))",
        "except MaicError as exc:\n    print(f'maic: error: {exc}', file=sys.stderr)\n    sys.exit(exc.exit_code)"])
    for command in (["-m", "maic_cli", "replay", str(path)], ["-c", as_model]):
        # a subprocess with a timeout: a hang guard, not a timing assertion
        result = subprocess.run([sys.executable, *command], capture_output=True, text=True,
                                timeout=60, stdin=subprocess.DEVNULL, cwd=Path(__file__).parent.parent)
        assert result.returncode == 2, result.stderr
        assert result.stderr.strip().splitlines() == [f"maic: error: {path}: not a regular file "
                                                      "(a transcript is read from a plain file)"]


def test_replay_model_refuses_wrong_typed_replies_with_their_line(tmp_path: Path) -> None:
    transcript, _ = record_class(tmp_path, *QA)
    with_line(transcript, '{"t": 1, "kind": "llm_call", "reply": 5, "error_kind": null}', at=3)
    with pytest.raises(InputError, match=rf"{transcript}:3: llm_call: reply: Input should be a valid string"):
        ReplayLLM.from_file(transcript)
    chat = runner.invoke(app, ["chat", "--model", f"replay:{transcript}"], input="hi\n")
    assert chat.exit_code == 2 and f"{transcript}:3: llm_call: reply" in chat.stderr
    assert "Traceback" not in chat.output


def test_typed_entries_still_replay_and_check_the_same(tmp_path: Path) -> None:
    transcript, _ = record_class(tmp_path, *QA)
    read = read_transcript(transcript)
    assert read.warnings == []
    assert [e.kind for e in read.entries][:2] == ["learner", "round"]
    assert [c.purpose for c in read.calls()] == ["director", "agent", "director", "agent", "director"]
    assert replay(transcript, "--check").exit_code == 0


def test_export_never_overwrites_the_transcript_it_reads(tmp_path: Path) -> None:
    recorded, _ = record_class(tmp_path, *QA)
    source = tmp_path / "class.md"  # a transcript with an export's name
    recorded.rename(source)
    original = source.read_bytes()
    link = tmp_path / "link.md"
    link.symlink_to(source)
    for target in (source, tmp_path / "." / "class.md", link):
        result = replay(source, "--export", str(target))
        assert result.exit_code == 2, result.output
        assert "that is the transcript itself" in result.stderr
    assert source.read_bytes() == original
    assert replay(source, "--export", str(tmp_path / "other.md")).exit_code == 0


def test_step_advances_on_one_key_press(tmp_path: Path) -> None:
    import pty
    import re
    import select
    import time

    transcript, _ = record_class(tmp_path, *QA)
    leader, follower = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "maic_cli", "replay", str(transcript), "--step"],
                            stdin=follower, stdout=follower, stderr=follower, close_fds=True,
                            cwd=Path(__file__).parent.parent, env={**os.environ, "COLUMNS": "100", "LINES": "30"})
    os.close(follower)
    seen = b""

    def wait_for(text: str) -> None:  # waits on the condition; the deadline only guards a hang
        nonlocal seen
        deadline = time.monotonic() + 30
        while text not in re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", seen.decode(errors="replace")):
            assert time.monotonic() < deadline, f"never saw {text!r}"
            if select.select([leader], [], [], 0.5)[0]:
                seen += os.read(leader, 65536)

    try:
        wait_for("Why is the sky blue?")
        seen = b""
        os.write(leader, b" ")  # one key, no Enter
        wait_for("Sunlight scatters.")
        seen = b""
        os.write(leader, b"x")
        wait_for("Why not violet?")
        os.write(leader, b"q")
        assert proc.wait(timeout=30) == 0
    finally:
        proc.kill()
        proc.wait()
        os.close(leader)
