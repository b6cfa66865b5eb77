"""``POST /api/chat`` on a real ``maic serve`` process, driven with OpenMAIC's own request shapes.

One ``maic serve`` subprocess on 127.0.0.1 answers every test of this module; its model is a loopback
OpenAI-compatible server (litellm's real HTTP path) whose director replies are chosen per test.  The responses
are read as OpenMAIC's client reads them (data lines only, tests/openmaic_shapes.py)."""

from __future__ import annotations

import asyncio
import http.client
import json
import re
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from hypothesis import HealthCheck, given, settings

from maic_cli.testing.openai_server import LoopbackOpenAIServer, ServedReply, director_choices
from maic_cli.testing.serve_process import ServeProcess

from .openmaic_shapes import (
    agent_loop,
    agent_message,
    chat_bodies,
    client_events,
    discussion_request,
    qa_request,
    user_message,
)

SERVER_KEY = "sk-server-side-key-4711"
TEACHER = ('[{"type":"action","name":"wb_open","params":{}},'
           '{"type":"action","name":"wb_draw_text","params":{"content":"1/2 + 1/2 = 1","x":100,"y":80}},'
           '{"type":"text","content":"Both halves are the same size, because we cut the whole into equal parts."}]')
FRAME = re.compile(rb"(data: [^\r\n]+|:heartbeat)\n\n")


@dataclass
class Script:
    """What the loopback model answers: the director's pick from the choices it is offered, the agents' reply."""

    pick: Callable[[list[str]], str] = lambda choices: next((c for c in choices if c not in ("USER", "END")),
                                                            "USER") if "USER" not in choices else "USER"
    reply: str = TEACHER
    delay: float = 0.0  # seconds between the agent reply's chunks
    cut: threading.Event = field(default_factory=threading.Event)

    def respond(self, body: dict[str, Any]) -> ServedReply:
        choices = director_choices(body)
        if choices is not None:
            return ServedReply(json.dumps({"next_agent": self.pick(choices)}))
        return ServedReply(self.reply, chunk_size=12, delay=self.delay)


class WatchedModel(LoopbackOpenAIServer):
    """The loopback model, noting when a caller closes a reply's stream before its end."""

    def __init__(self, script: Script) -> None:
        super().__init__(responder=script.respond)
        self.script = script

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        try:
            return await super()._chat(request)
        except (ConnectionError, asyncio.CancelledError):
            self.script.cut.set()
            raise


@dataclass
class Served:
    """A real ``maic serve`` (maic_cli/testing/serve_process.py) on the loopback model."""

    server: ServeProcess
    model: WatchedModel

    @property
    def port(self) -> int:
        return self.server.port

    def log(self) -> str:
        return self.server.log()

    def post(self, body: Any, *, raw: bytes | None = None, headers: dict[str, str] | None = None,
             timeout: float = 30.0) -> tuple[int, bytes]:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            data = raw if raw is not None else json.dumps(body).encode()
            connection.request("POST", "/api/chat", body=data,
                               headers={"Content-Type": "application/json", **(headers or {})})
            response = connection.getresponse()
            return response.status, response.read()
        finally:
            connection.close()

    def get(self, path: str) -> tuple[int, str]:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        try:
            connection.request("GET", path)
            response = connection.getresponse()
            return response.status, response.read().decode()
        finally:
            connection.close()


def _serve(home: Path, model: WatchedModel, token: str | None = None, *more: str) -> ServeProcess:
    env = {"MAIC_HOME": str(home), "OPENAI_API_KEY": SERVER_KEY, "MAIC_SERVE_TOKEN": token or ""}
    return ServeProcess("--host", "127.0.0.1", "--model", "openai/loopback-model", "--api-base", model.base_url,
                        "--structured", "json_schema", *more, env=env)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with WatchedModel(Script()) as model, _serve(tmp_path_factory.mktemp("home"), model) as server:
        yield Served(server, model)


@pytest.fixture
def script(served: Served) -> Iterator[Script]:
    """The module's model script, fresh for each test."""
    fresh = Script()
    served.model.script = fresh
    served.model._responder = fresh.respond
    yield fresh


def _frames_are_data_lines_only(raw: bytes) -> None:
    assert b"\r" not in raw and b"event:" not in raw and b"\nid:" not in raw and not raw.startswith(b"id:")
    assert FRAME.sub(b"", raw) == b"", raw[:300]


def test_openmaics_client_loop_plays_a_question_to_the_end(served: Served, script: Script) -> None:
    raws: list[bytes] = []

    def send(body: dict[str, Any]) -> bytes:
        status, raw = served.post(body)
        assert status == 200
        raws.append(raw)
        return raw
    reason, streams = agent_loop(send, qa_request())
    assert reason == "cue_user" and len(streams) == 2
    for raw in raws:
        _frames_are_data_lines_only(raw)
    first, last = streams
    kinds = [e["type"] for e in first]
    assert kinds[:2] == ["thinking", "thinking"] and kinds[-2:] == ["agent_end", "done"]
    assert kinds.index("agent_start") < kinds.index("action") < kinds.index("text_delta")
    start = next(e["data"] for e in first if e["type"] == "agent_start")
    assert start["agentId"] == "default-1" and start["agentColor"] == "#3b82f6"
    assert [e["data"]["actionName"] for e in first if e["type"] == "action"] == ["wb_open", "wb_draw_text"]
    assert [e["data"]["params"] for e in first if e["type"] == "action"][1] == {
        "content": "1/2 + 1/2 = 1", "x": 100, "y": 80, "elementId": "wb_1"}  # drawn under maic's id
    assert "same size" in "".join(e["data"]["content"] for e in first if e["type"] == "text_delta")
    done = first[-1]["data"]
    assert (done["totalAgents"], done["totalActions"], done["agentHadContent"]) == (1, 2, True)
    assert [r["actionName"] for r in done["directorState"]["whiteboardLedger"]] == ["wb_open", "wb_draw_text"]
    assert [e["type"] for e in last] == ["thinking", "cue_user", "done"]
    assert last[-1]["data"]["directorState"]["turnCount"] == 1 and last[-1]["data"]["cueUserReceived"] is True
    # The second request carried the ledger back: its director saw what the teacher drew.
    director_call = served.model.requests[-1]
    assert director_choices(director_call) is not None
    assert "2 whiteboard actions this round" in director_call["messages"][0]["content"]


def test_the_browsers_model_and_key_are_never_used(served: Served, script: Script,
                                                   tmp_path: Path) -> None:
    """The request names another model server and a key: that server receives nothing, the key goes nowhere."""
    with LoopbackOpenAIServer(default="[]") as decoy:
        before = len(served.model.requests)
        body = qa_request(baseUrl=decoy.base_url, apiKey="sk-browser-secret-0042", model="openai:gpt-4o",
                          providerType="openai")
        reason, streams = agent_loop(lambda b: served.post(b)[1], body)
        assert reason == "cue_user" and streams[0][-1]["type"] == "done"
        assert decoy.requests == [] and decoy.headers == []
    used = served.model.headers[before:]
    assert used and all(h.get("Authorization") == f"Bearer {SERVER_KEY}" for h in used)
    assert "sk-browser-secret-0042" not in json.dumps(served.model.requests[before:])
    assert "sk-browser-secret-0042" not in served.log()


def test_a_discussion_opens_with_its_trigger_agent_under_its_own_id(served: Served, script: Script) -> None:
    script.reply = '[{"type":"text","content":"I think a half is a half, whatever the pizza."}]'
    before = len(served.model.requests)
    status, raw = served.post(discussion_request(trigger="gen-Stud_Nt2"))
    events = client_events(raw)
    assert status == 200 and events[-1]["type"] == "done"
    start = next(e["data"] for e in events if e["type"] == "agent_start")
    assert (start["agentId"], start["agentName"]) == ("gen-Stud_Nt2", "Kai")
    assert {e["data"]["agentId"] for e in events if e["data"].get("agentId")} == {"gen-Stud_Nt2"}
    calls = served.model.requests[before:]
    assert [director_choices(c) for c in calls] == [None]  # the trigger speaks first: no director call
    prompt = json.dumps(calls[0]["messages"])
    assert "pizza" in prompt and "Asks why, often." in prompt  # the topic, and Kai's persona as sent


def test_a_discussion_goes_round_the_table_then_hands_over_to_the_learner(served: Served, script: Script) -> None:
    """maic's discussion round through OpenMAIC's loop: the trigger agent opens, each agent speaks in turn (the
    director is offered only those who have not spoken this round), then the learner's turn."""
    script.reply = '[{"type":"text","content":"Here is another way to see it."}]'
    script.pick = lambda choices: next((c for c in choices if c not in ("USER", "END")), "USER")
    reason, streams = agent_loop(lambda b: served.post(b)[1], discussion_request(), max_turns=6)
    speakers = [next((e["data"]["agentId"] for e in s if e["type"] == "agent_start"), None) for s in streams]
    assert reason == "cue_user" and speakers == ["gen-Stud_Nt2", "gen-T3ach_r1", None]
    assert streams[-1][-1]["data"]["directorState"]["turnCount"] == 2


def test_the_empty_first_request_of_the_loop_is_answered_by_the_class(served: Served, script: Script) -> None:
    status, raw = served.post(qa_request(None))
    events = client_events(raw)
    assert status == 200
    assert [e["type"] for e in events if e["type"] in ("agent_start", "agent_end", "done")] == \
        ["agent_start", "agent_end", "done"]


def test_a_question_typed_into_a_running_session_reaches_the_class_one_request_late(served: Served,
                                                                                   script: Script) -> None:
    """OpenMAIC's quirk: the first request of its loop lacks the line just typed.  That request opens with the
    teacher (no director call, as OpenMAIC's route has an agent speak), so the loop goes on and the next
    request, which carries the question, is answered."""
    history = [user_message("What is a half?", 1),
               agent_message("default-1", "Ms. Rivera", "One of two equal parts.", 2)]
    before = len(served.model.requests)
    reason, streams = agent_loop(lambda b: served.post(b)[1], qa_request(None) | {"messages": history},
                                 late=user_message("And a quarter?", 3))
    assert reason == "cue_user" and len(streams) >= 3
    calls = served.model.requests[before:]
    assert director_choices(calls[0]) is None  # the first request: the teacher opens, nobody is asked
    assert next(e for e in streams[0] if e["type"] == "agent_start")["data"]["agentId"] == "default-1"
    assert "And a quarter?" not in json.dumps(calls[0]) and "And a quarter?" in json.dumps(calls[1])
    assert [e["type"] for e in streams[-1]] == ["thinking", "cue_user", "done"]


def test_a_failing_model_is_an_error_then_done_and_the_stream_closes(served: Served, script: Script) -> None:
    script.reply = ""
    served.model._responder = lambda body: ServedReply("upstream down", status=500) \
        if director_choices(body) is None else ServedReply('{"next_agent":"default-1"}')
    body = qa_request()
    body["directorState"] = {"turnCount": 2, "agentResponses": [], "whiteboardLedger": []}
    started = time.monotonic()
    status, raw = served.post(body)
    events = client_events(raw)
    assert status == 200 and [e["type"] for e in events][-2:] == ["error", "done"]
    assert events[-1]["data"]["directorState"]["turnCount"] == 2
    assert time.monotonic() - started < 20  # closed at once after done (litellm's retries included)
    _frames_are_data_lines_only(raw)


def _raw_request(served: Served, head: bytes, body: bytes = b"") -> bytes:
    with socket.create_connection(("127.0.0.1", served.port), timeout=20) as sock:
        try:
            sock.sendall(head + body)
        except (BrokenPipeError, ConnectionResetError):
            pass
        out = b""
        while chunk := sock.recv(65536):
            out += chunk
            if b"\r\n\r\n" in out and len(out) > 200:
                break
        return out


@pytest.mark.parametrize(("name", "body", "status", "words"), [
    ("deep JSON", b"[" * 100_000 + b"]" * 100_000, 400, b"nested"),
    ("deep object", json.dumps(json.loads("{" + '"a":{' * 60 + "}" * 61)).encode(), 400, b"nested"),
    ("a huge string", json.dumps({**qa_request(), "x": "y" * 300_000}).encode(), 413, b"string"),
    ("a crowd of agents", json.dumps(qa_request(agent_ids=tuple(f"a{n}" for n in range(40)))).encode(), 400,
     b"config.agentIds"),
    ("wrong types", json.dumps({**qa_request(), "config": {"agentIds": "default-1"}}).encode(), 400,
     b"config.agentIds"),
    ("a number for the state", json.dumps({**qa_request(), "storeState": 5}).encode(), 400, b"storeState"),
    ("missing fields", json.dumps({"messages": []}).encode(), 400, b"MISSING_REQUIRED_FIELD"),
    ("not JSON", b"{'messages': ", 400, b"not JSON"),
    ("unknown agents", json.dumps(qa_request(agent_ids=("someone",))).encode(), 400, b"INVALID_REQUEST"),
])
def test_a_hostile_body_is_a_4xx_and_the_server_lives(served: Served, script: Script, name: str, body: bytes,
                                                      status: int, words: bytes) -> None:
    code, raw = served.post(None, raw=body)
    assert code == status, (name, raw[:200])
    assert words in raw, (name, raw[:300])
    assert served.get("/healthz")[0] == 200


def test_thirty_megabytes_are_refused_before_they_are_read(served: Served, script: Script) -> None:
    head = (b"POST /api/chat HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\n\r\n" % (30 * 2**20))
    started = time.monotonic()
    answer = _raw_request(served, head, b"{" + b" " * 65_536)
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    assert time.monotonic() - started < 5
    status, raw = served.post(qa_request())
    assert status == 200 and client_events(raw)[-1]["type"] == "done"


def test_a_client_that_goes_away_cancels_its_turn_and_the_model_call(served: Served, script: Script) -> None:
    script.reply = json.dumps([{"type": "text", "content": "A long answer about halves. " * 40}])
    script.delay = 0.05  # about 6 s of streaming
    body = json.dumps(qa_request()).encode()
    with socket.create_connection(("127.0.0.1", served.port), timeout=20) as sock:
        sock.sendall(b"POST /api/chat HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                     b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        seen = b""
        while b"text_delta" not in seen:
            seen += sock.recv(4096)
    left = time.monotonic()
    assert script.cut.wait(10), "the model's stream was not closed"
    assert time.monotonic() - left < 3
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        metrics = served.get("/metrics")[1]
        if "maic_turns_in_flight 0" in metrics and 'maic_turns_total{outcome="cancelled"}' in metrics:
            break
        time.sleep(0.1)
    assert "maic_turns_in_flight 0" in metrics
    assert re.search(r'maic_turns_total\{outcome="cancelled"\} [1-9]', metrics)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(chat_bodies)
def test_any_body_is_a_4xx_or_a_stream_that_ends_with_done(served: Served, body: dict[str, Any]) -> None:
    served.model._responder = Script().respond
    status, raw = served.post(body)
    assert status in (200, 400), (status, raw[:300])
    if status == 200:
        _frames_are_data_lines_only(raw)
        events = client_events(raw)
        assert events[-1]["type"] == "done" and [e["type"] for e in events].count("done") == 1
    else:
        answer = json.loads(raw)
        assert answer["success"] is False and answer["errorCode"] in ("MISSING_REQUIRED_FIELD", "INVALID_REQUEST")


def test_with_a_token_the_route_wants_it_and_a_slow_turn_has_the_servers_heartbeat(tmp_path: Path) -> None:
    slow = Script(delay=0.05)  # the teacher's reply streams for about a second
    with WatchedModel(slow) as model, \
            _serve(tmp_path, model, "t0ken-for-the-class", "--heartbeat", "0.2") as process:
        server = Served(process, model)
        assert server.post(qa_request())[0] == 401
        status, raw = server.post(qa_request(), headers={"Authorization": "Bearer t0ken-for-the-class"})
        assert status == 200 and client_events(raw)[-1]["type"] == "done"
        assert raw.count(b"\n\n:heartbeat\n\n") >= 2  # OpenMAIC's comment, between whole frames
        _frames_are_data_lines_only(raw)
        assert "t0ken-for-the-class" not in server.log()
