"""The thin client (``--server``) against a real ``maic serve``: a turn whose connection fails before its
first event, or whose stream is cut mid-turn, is asked again with nothing half-said kept; a refusal (401,
a bad address) is one line and the session survives; ``maic chat --server`` keeps its session here."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web
from typer.testing import CliRunner

from maic_cli.cli.app import app
from maic_cli.store.session import load_session
from maic_cli.testing.loopback import LoopbackServer
from maic_cli.testing.openai_server import LoopbackOpenAIServer
from maic_cli.testing.serve_process import ServeProcess
from tests.helpers import decision, reply
from tests.test_serve import SCRIPT, batch, said


class FlakyFront(LoopbackServer):
    """Passes ``/v1/turn`` to ``upstream``, except that its first requests fail as ``faults`` say: ``drop``
    closes the connection before any answer, ``cut`` passes the first ``keep`` events and then dies."""

    name = "flaky-front"

    def __init__(self, upstream: str, faults: list[str], keep: int = 3) -> None:
        super().__init__()
        self.upstream, self.faults, self.keep = upstream, list(faults), keep
        self.requests = 0
        self._lock = threading.Lock()

    @property
    def url(self) -> str:
        return self.base_url.removesuffix("/v1")

    def routes(self, app: web.Application) -> None:
        app.router.add_post("/v1/turn", self._turn)

    async def _turn(self, request: web.Request) -> web.StreamResponse:
        body = await request.read()
        with self._lock:
            self.requests += 1
            fault = self.faults.pop(0) if self.faults else None
        if fault == "drop":
            assert request.transport is not None
            request.transport.close()
            await asyncio.sleep(0.1)
            return web.Response(status=500)
        async with aiohttp.ClientSession() as session, \
                session.post(self.upstream + "/v1/turn", data=body, headers=dict(request.headers)) as answer:
            response = web.StreamResponse(status=answer.status, headers={"Content-Type": answer.content_type})
            await response.prepare(request)
            sent = 0
            async for line in answer.content:
                await response.write(line)
                sent += line.startswith(b"data:")
                if fault == "cut" and sent >= self.keep:
                    assert request.transport is not None
                    request.transport.abort()  # the instance dies mid-stream
                    return response
            await response.write_eof()
            return response


@pytest.fixture
def model() -> Iterator[LoopbackOpenAIServer]:
    with LoopbackOpenAIServer(SCRIPT) as server:
        yield server


def test_a_failed_turn_is_asked_again_and_keeps_nothing_half_said(tmp_path: Path) -> None:
    with LoopbackOpenAIServer(SCRIPT) as here:
        local = batch(tmp_path, "local", "--model", "openai/loopback", "--api-base", here.base_url)
    # The director's picks are scripted per call, so a cut turn would take the next pick: the model here
    # answers every call of a cut turn again from a script that repeats it.
    repeated = [SCRIPT[0], SCRIPT[1], SCRIPT[0], SCRIPT[1], *SCRIPT[2:4], *SCRIPT[2:]]
    with LoopbackOpenAIServer(repeated) as there, \
            ServeProcess("--model", "openai/loopback", "--api-base", there.base_url) as server, \
            FlakyFront(server.url, ["drop", "cut", "ok", "cut"], keep=4) as front:
        remote = batch(tmp_path, "remote", "--model", "openai/loopback", "--server", front.url)
        assert front.requests == 5 + 3
    assert [step[:2] for step in said(remote)] == [step[:2] for step in said(local)]  # no partial text kept
    retried = [int(step[2]) for step in said(remote) if step[0] == "done"]
    assert retried == [2, 1, 0, 0, 0]
    assert remote["status"] == "complete" and remote["error"] is None


def test_a_server_that_never_answers_ends_the_round_in_one_error_line(tmp_path: Path) -> None:
    with FlakyFront("http://127.0.0.1:9", ["drop"] * 10) as front:
        scenario = tmp_path / "sky.yaml"
        scenario.write_text("id: sky\nclass: {agents: [teacher]}\nmessages: [\"Why?\"]\n", encoding="utf-8")
        result = CliRunner().invoke(app, ["run", str(scenario), "--out", str(tmp_path / "out"), "--plain",
                                          "--model", "openai/loopback", "--server", front.url])
        assert front.requests == 4  # the first attempt and 3 retries
    run = json.loads(next((tmp_path / "out" / "runs").glob("*.json")).read_text(encoding="utf-8"))
    assert run["status"] == "error" and "asked 4 times" in run["error"] and front.url.split("//")[1] in run["error"]
    assert result.exit_code == 1


TOKEN = "the-class-token-0123456789abcdef"


def test_maic_chat_through_a_server_keeps_its_session_and_a_401_is_one_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    session = tmp_path / "class.json"
    chat = ["chat", "--server", "", "--session", str(session), "--plain"]
    with LoopbackOpenAIServer([decision("teacher"), reply("Sunlight scatters."), decision("USER")]) as model, \
            ServeProcess("--model", "openai/loopback", "--api-base", model.base_url,
                         env={"MAIC_SERVE_TOKEN": TOKEN}) as server:
        chat[2] = server.url
        monkeypatch.setenv("MAIC_SERVER_TOKEN", "wrong-token-0123456789")
        refused = CliRunner().invoke(app, [*chat, "--agents", "teacher,curious_student"], input="Why?\n")
        assert refused.exit_code == 2 and "401 missing or wrong bearer token" in refused.stderr
        assert len(refused.stderr.strip().splitlines()) == 1 and "wrong-token" not in refused.output
        assert not session.exists()  # refused before anything was written
        monkeypatch.setenv("MAIC_SERVER_TOKEN", TOKEN)
        result = CliRunner().invoke(app, [*chat, "--agents", "teacher,curious_student"],
                                    input="Why is the sky blue?\n")
        assert result.exit_code == 0, result.output
        assert result.stdout.splitlines() == ["Ms. Rivera: Sunlight scatters."]
        assert len(model.requests) == 3
        assert load_session(session).model == "openai/loopback"  # named after the server's model
        monkeypatch.setenv("MAIC_SERVER_TOKEN", "wrong-token-0123456789")  # a token revoked mid-class
        again = CliRunner().invoke(app, [*chat, "--model", "openai/loopback"], input="And sunsets?\n")
        assert "401 missing or wrong bearer token" in again.stderr and "wrong-token" not in again.output
        assert len(model.requests) == 3
    kept = load_session(session)  # the session survives the refusal: the new question, nothing half-said
    assert [m.role for m in kept.classroom.messages] == ["user", "agent", "user"]
    transcript = Path(kept.transcript or "").read_text(encoding="utf-8")
    assert "Sunlight scatters." in transcript and TOKEN not in transcript


def test_a_bad_server_address_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    session = tmp_path / "class.json"
    for bad in ("ftp://127.0.0.1:8000", "http://user:token@127.0.0.1:8000", "127.0.0.1:8000"):
        result = CliRunner().invoke(app, ["chat", "--server", bad, "--session", str(session), "--plain"], input="hi\n")
        assert result.exit_code == 2 and "--server" in result.stderr
        assert "token@" not in result.stderr
    assert not session.exists()


class HostileServer(LoopbackServer):
    """Answers ``/v1/turn`` with an endless stream, a line without end or an event of the wrong shape."""

    name = "hostile-turn-server"

    def __init__(self, kind: str) -> None:
        super().__init__()
        self.kind = kind

    @property
    def url(self) -> str:
        return self.base_url.removesuffix("/v1")

    def routes(self, app: web.Application) -> None:
        app.router.add_post("/v1/turn", self._turn)

    async def _turn(self, request: web.Request) -> web.StreamResponse:
        await request.read()
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        delta = b'data: {"type":"text_delta","message_id":"m","content":"' + b"x" * 60_000 + b'"}\n\n'
        try:
            if self.kind == "endless":
                while True:
                    await response.write(delta)
            elif self.kind == "long line":
                while True:
                    await response.write(b"x" * 65536)
            else:
                await response.write(b'data: {"type":"done","director_state":"not a state"}\n\n')
        except (ConnectionError, RuntimeError):
            pass
        return response


@pytest.mark.parametrize(("kind", "says"), [("endless", "more than"), ("long line", "longer than"),
                                            ("bad event", "cannot read")])
def test_a_hostile_server_is_one_error_line_in_bounded_memory(tmp_path: Path, kind: str, says: str) -> None:
    scenario = tmp_path / "sky.yaml"
    scenario.write_text("id: sky\nclass: {agents: [teacher]}\nmessages: [\"Why?\"]\n", encoding="utf-8")
    with HostileServer(kind) as server:
        result = CliRunner().invoke(app, ["run", str(scenario), "--out", str(tmp_path / "out"), "--plain",
                                          "--model", "openai/loopback", "--server", server.url])
    run = json.loads(next((tmp_path / "out" / "runs").glob("*.json")).read_text(encoding="utf-8"))
    assert run["status"] == "error" and says in run["error"], run["error"]
    assert result.exit_code == 1
