"""What maic writes is private and holds no API key: files 0600, folders 0700.

A provider that echoes the key in its error text must not put the key into an event, a
transcript or a report: the text is redacted where the error is made (``LLMError``).
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from maic_cli.cli.app import app
from maic_cli.engine.models import TurnConfig
from maic_cli.llm.port import LLMError
from maic_cli.llm.recording import CallRecord
from maic_cli.store.paths import open_private, private_dir, write_atomic
from maic_cli.store.transcript import TranscriptHeader, TranscriptWriter
from maic_cli.testing.openai_server import LoopbackOpenAIServer, ServedReply
from tests.helpers import agent, decision, reply

runner = CliRunner()
KEY = "live-key-0123456789-abcdefghij"  # not sk-shaped: found only because it is the key in use

SCENARIO = """id: sky
class:
  agents: [teacher, curious_student]
messages:
  - Why is the sky blue?
"""


@pytest.fixture
def permissive_umask() -> Iterator[None]:
    """Run as a user whose umask would make files world-readable (the common 022)."""
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_private_dir_creates_missing_folders_0700_and_leaves_existing_ones(
        tmp_path: Path, permissive_umask: None) -> None:
    existing = tmp_path / "mine"
    existing.mkdir(mode=0o755)
    target = existing / "a" / "b"
    assert private_dir(target) == target and private_dir(target) == target
    assert mode(existing / "a") == 0o700 and mode(target) == 0o700
    assert mode(existing) == 0o755


def test_open_private_creates_0600_and_respects_an_existing_files_mode(
        tmp_path: Path, permissive_umask: None) -> None:
    new = tmp_path / "d" / "new.txt"
    with open_private(new, "w") as handle:
        handle.write("x")
    with open_private(new) as handle:
        handle.write("y")
    assert new.read_text() == "xy" and mode(new) == 0o600 and mode(new.parent) == 0o700
    shared = tmp_path / "shared.txt"
    shared.write_text("s")
    shared.chmod(0o644)
    with open_private(shared, "w") as handle:
        handle.write("t")
    assert shared.read_text() == "t" and mode(shared) == 0o644
    with pytest.raises(ValueError):
        open_private(new, "r")


def test_write_atomic_and_transcripts_are_private(tmp_path: Path, permissive_umask: None) -> None:
    write_atomic(tmp_path / "new" / "result.json", "{}")
    assert mode(tmp_path / "new") == 0o700 and mode(tmp_path / "new" / "result.json") == 0o600
    header = TranscriptHeader(model="demo", produced_by="test", agents=[agent("t", "teacher")],
                              config=TurnConfig(agent_ids=["t"]))
    path = tmp_path / "logs" / "t.jsonl"
    writer = TranscriptWriter(path, header)
    writer.close()
    assert mode(path) == 0o600 and mode(path.parent) == 0o700


def test_a_batch_creates_only_private_files_and_folders(tmp_path: Path, permissive_umask: None) -> None:
    scenario = tmp_path / "sky.yaml"
    scenario.write_text(SCENARIO, encoding="utf-8")
    script = tmp_path / "script.json"
    script.write_text(json.dumps([decision("teacher"), reply("Scattering."), decision("END")]), encoding="utf-8")
    out = tmp_path / "results" / "today"
    result = runner.invoke(app, ["run", str(scenario), "--model", f"scripted:{script}", "--out", str(out),
                                 "--plain"])
    assert result.exit_code == 0, result.output
    created = [out, *out.rglob("*")]
    assert {p.name for p in created} >= {"report.md", "report.json", "runs", "transcripts"}
    for path in [tmp_path / "results", *created]:
        assert mode(path) == (0o700 if path.is_dir() else 0o600), path


def test_transcript_writer_redacts_the_error_of_a_call(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MISTRAL_API_KEY", KEY)
    header = TranscriptHeader(model="demo", produced_by="test", agents=[agent("t", "teacher")],
                              config=TurnConfig(agent_ids=["t"]))
    path = tmp_path / "t.jsonl"
    writer = TranscriptWriter(path, header)
    writer.call(CallRecord(purpose="agent", agent_id="t", messages=[], error_kind="auth",
                           error=f"raw error with {KEY}"))
    writer.round_finished("error", f"round error with {KEY}")
    writer.close()
    text = path.read_text(encoding="utf-8")
    assert KEY not in text and text.count("[redacted]") == 2


def test_llm_error_redacts_and_cleans_at_the_source(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    error = LLMError("auth", "openai/x", f"bad key {KEY} \x1b]0;pwned\x07 sk-abcdefghijklmnopqrstuvwxyz")
    assert KEY not in str(error) and "sk-abc" not in str(error) and "\x1b" not in str(error)
    assert error.detail == "bad key [redacted] [redacted]"


def test_a_provider_echoing_the_key_leaves_no_key_in_transcript_event_or_report(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    scenario = tmp_path / "sky.yaml"
    scenario.write_text(SCENARIO, encoding="utf-8")
    out = tmp_path / "out"
    hostile = f"Incorrect API key provided: {KEY} \x1b]0;pwned\x07\x1b[2J \u202eevil"
    with LoopbackOpenAIServer(default=ServedReply(text=hostile, status=401)) as server:
        result = runner.invoke(app, ["run", str(scenario), "--model", "openai/loopback", "--api-base",
                                     server.base_url, "--out", str(out), "--plain"])
        assert server.headers and server.headers[0]["Authorization"] == f"Bearer {KEY}"  # the key was in use
    assert result.exit_code == 1, result.output
    transcript = next((out / "transcripts").glob("*.jsonl")).read_text(encoding="utf-8")
    entries = [json.loads(line) for line in transcript.splitlines()]
    call = next(e for e in entries if e["kind"] == "llm_call")
    event = next(e["event"] for e in entries if e["kind"] == "event" and e["event"]["type"] == "error")
    markdown = (out / "report.md").read_text(encoding="utf-8")
    for text in (call["error"], event["message"], markdown):
        assert "[redacted]" in text and "Incorrect API key" in text
        assert "\x1b" not in text and "\u202e" not in text and "pwned" not in text
    for path in out.rglob("*"):
        if path.is_file():
            assert KEY not in path.read_text(encoding="utf-8"), path
    assert "&lt;U+202E&gt;evil" in markdown  # shown as <U+202E> by a Markdown viewer (report.md escapes HTML)
    assert KEY not in result.output and "\x1b" not in result.output


def test_a_chat_creates_only_private_files_and_folders(maic_home: Path, monkeypatch: pytest.MonkeyPatch,
                                                        permissive_umask: None) -> None:
    home = maic_home / "fresh"  # maic creates it
    monkeypatch.setenv("MAIC_HOME", str(home))
    result = runner.invoke(app, ["chat", "--model", "demo", "--plain"],
                           input=f"Why is the sky blue?\n/export {home / 'class.md'}\n")
    assert result.exit_code == 0, result.output
    created = [home, *home.rglob("*")]
    assert {p.suffix for p in created} >= {".json", ".jsonl", ".lock", ".md"}
    for path in created:
        assert mode(path) == (0o700 if path.is_dir() else 0o600), path


def test_an_explicit_api_key_is_redacted_like_an_environment_one() -> None:
    from maic_cli.llm.factory import make_llm
    from maic_cli.llm.spec import ModelSpec

    make_llm(ModelSpec.parse("openai/x"), api_key="explicit-key-1234567890", api_base="http://127.0.0.1:9")
    assert "explicit-key" not in str(LLMError("auth", "openai", "bad key explicit-key-1234567890"))


def test_the_input_history_is_private(tmp_path: Path, permissive_umask: None) -> None:
    from maic_cli.ui.input import open_history

    path = tmp_path / "home" / "history"
    open_history(path, note=lambda text: None)
    assert mode(path) == 0o600 and mode(path.parent) == 0o700
