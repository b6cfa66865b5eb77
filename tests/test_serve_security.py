"""``maic serve`` under attack, as a real process: tokens, endpoints, hostile bodies (deep, huge, wrong
types, 30 MB, chunked without end), slow and idle connections, the cap on turns, a client that goes
away (its turn and the model call under it are cancelled), and hypothesis over ``/v1/turn`` bodies."""

from __future__ import annotations

import http.client
import json
import re
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from aiohttp import web
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from maic_cli.cli.app import app
from maic_cli.engine.models import Message, MessagePart, TurnConfig, TurnRequest
from maic_cli.serve.limits import MAX_BODY_BYTES, MAX_STRING
from maic_cli.serve.wire import encode_request
from maic_cli.testing.loopback import LoopbackServer
from maic_cli.testing.openai_server import LoopbackOpenAIServer, ServedReply
from maic_cli.testing.serve_process import ServeProcess
from tests.helpers import reply

TOKEN = "s3cret-token-for-the-class-0123456789"
GOOD = encode_request(TurnRequest(messages=[Message(role="user", parts=[MessagePart(kind="text", text="Why?")])],
                                  config=TurnConfig(agent_ids=["teacher", "curious_student"])))


def post(url: str, body: bytes, *, token: str | None = TOKEN, headers: dict[str, str] | None = None,
         path: str = "/v1/turn") -> tuple[int, bytes]:
    host, port = url.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=30)
    sent = {"Content-Type": "application/json", **({"Authorization": f"Bearer {token}"} if token else {}),
            **(headers or {})}
    connection.request("POST", path, body=body, headers=sent)
    answer = connection.getresponse()
    data = answer.read()
    connection.close()
    return answer.status, data


def get(url: str, path: str, token: str | None = None) -> tuple[int, str]:
    host, port = url.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=30)
    connection.request("GET", path, headers={"Authorization": f"Bearer {token}"} if token else {})
    answer = connection.getresponse()
    text = answer.read().decode()
    connection.close()
    return answer.status, text


@pytest.fixture(scope="module")
def model() -> Iterator[LoopbackOpenAIServer]:
    with LoopbackOpenAIServer(default=reply("Light scatters.")) as server:
        yield server


@pytest.fixture(scope="module")
def served(model: LoopbackOpenAIServer) -> Iterator[ServeProcess]:
    with ServeProcess("--model", "openai/loopback", "--api-base", model.base_url, "--director", "rules",
                      "--idle-timeout", "1", env={"MAIC_SERVE_TOKEN": TOKEN}) as server:
        yield server


def alive(server: ServeProcess) -> bool:
    return get(server.url, "/healthz")[0] == 200 and post(server.url, GOOD)[0] == 200


def test_every_route_but_healthz_wants_the_token(served: ServeProcess) -> None:
    assert get(served.url, "/healthz") == (200, '{"status": "ok"}')
    assert get(served.url, "/metrics")[0] == 401
    assert get(served.url, "/metrics", "wrong")[0] == 401
    status, body = post(served.url, GOOD, token=None)
    assert status == 401 and json.loads(body) == {"error": "missing or wrong bearer token"}
    assert post(served.url, GOOD, token=TOKEN[:-1])[0] == 401
    assert post(served.url, GOOD, token=TOKEN + "x")[0] == 401
    assert post(served.url, GOOD, headers={"Authorization": f"Basic {TOKEN}"}, token=None)[0] == 401
    assert post(served.url, GOOD, token=None, path="/nowhere")[0] == 401  # no route map for the tokenless
    status, body = post(served.url, GOOD)
    assert status == 200 and body.decode().endswith("\n\n") and b'"type":"done"' in body
    status, metrics = get(served.url, "/metrics", TOKEN)
    assert status == 200 and 'maic_request_errors_total{status="401"}' in metrics
    assert TOKEN not in served.log()


def test_listening_beyond_loopback_without_a_token_is_refused_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MAIC_SERVE_TOKEN", raising=False)
    result = CliRunner().invoke(app, ["serve", "--host", "0.0.0.0", "--model", "demo"])
    assert result.exit_code == 2
    assert "MAIC_SERVE_TOKEN" in result.output and len(result.output.strip().splitlines()) == 1


@pytest.mark.parametrize(("body", "status", "says"), [
    (b"[" * 100_000 + b"]" * 100_000, 400, "nested"),
    (json.dumps({"version": 1, "request": {"config": {"agent_ids": ["x" * (MAX_STRING + 1)]}}}).encode(), 413,
     "string longer"),
    (json.dumps({"version": 1, "request": {"config": {"agent_ids": list(range(30_000))}}}).encode(), 413, "items"),
    (json.dumps({"version": 1, "request": {"config": {"agent_ids": "teacher"}}}).encode(), 422, "agent_ids"),
    (json.dumps({"version": 1, "request": {"messages": 7, "config": {"agent_ids": []}}}).encode(), 422, "messages"),
    (json.dumps({"version": 2, "request": {}}).encode(), 400, "version"),
    (json.dumps({"request": {}}).encode(), 400, "version"),
    (b"\xff\xfe not utf-8", 400, "UTF-8"),
    (b"{'version': 1}", 400, "not JSON"),
    (b"1" * 5000, 400, "not valid JSON"),
    (b"[]", 400, "object"),
])
def test_hostile_bodies_are_4xx_and_the_server_lives(served: ServeProcess, body: bytes, status: int, says: str) -> None:
    answer, text = post(served.url, body)
    assert answer == status, text
    assert says in json.loads(text)["error"]
    assert alive(served)


def test_30_mb_is_refused_from_its_length_before_it_is_sent(served: ServeProcess) -> None:
    host, port = served.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as raw:
        raw.sendall(f"POST /v1/turn HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\n"
                    f"Content-Type: application/json\r\nContent-Length: {30 * 2**20}\r\n\r\n{{".encode())
        answer = raw.recv(4096).decode()  # the answer comes although 30 MB were announced and 1 byte sent
    assert answer.startswith("HTTP/1.1 413"), answer
    assert f"limit is {MAX_BODY_BYTES}" in answer
    assert alive(served)


def test_a_chunked_body_past_the_limit_is_refused_while_it_streams(served: ServeProcess) -> None:
    host, port = served.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=20) as raw:
        raw.sendall(f"POST /v1/turn HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\n"
                    "Transfer-Encoding: chunked\r\n\r\n".encode())
        chunk = b"a" * 2**20
        answer = b""
        try:
            for _ in range(40):  # up to 40 MB, never all of it
                raw.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        except OSError:
            pass  # the server closed the connection after answering
        answer = raw.recv(4096)
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    assert alive(served)


def test_slow_and_idle_connections_are_closed_and_starve_no_one(served: ServeProcess) -> None:
    host, port = served.url.removeprefix("http://").split(":")
    slow = [socket.create_connection((host, int(port)), timeout=10) for _ in range(50)]
    for i, connection in enumerate(slow):
        if i % 2:
            connection.sendall(b"POST /v1/turn HTTP/1.1\r\nHost: x\r\n")  # headers never finished
        else:  # headers done, the body never comes
            connection.sendall(f"POST /v1/turn HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\n"
                               "Content-Length: 100\r\n\r\n{".encode())
    started = time.monotonic()
    assert alive(served)  # answered while 50 connections dawdle
    assert time.monotonic() - started < 5
    time.sleep(1.5)
    for connection in slow:  # each was answered 408 or closed by the server (EOF), none left waiting
        data = connection.recv(4096)
        assert data == b"" or data.startswith(b"HTTP/1.1 408"), data[:100]
        connection.close()


class SlowModel(LoopbackServer):
    """Streams a reply a chunk every 50 ms for 20 s; records when its client closed the connection."""

    name = "slow-model"

    def __init__(self) -> None:
        super().__init__()
        self.started = threading.Event()
        self.closed = threading.Event()

    def routes(self, app: web.Application) -> None:
        app.router.add_post("/v1/chat/completions", self._chat)

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        import asyncio

        await request.read()
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        self.started.set()
        chunk: dict[str, Any] = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "slow",
                                 "choices": [{"index": 0, "delta": {"content": "["}, "finish_reason": None}]}
        try:
            await response.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
            chunk["choices"][0]["delta"]["content"] = '{"type": "text", "content": "'
            await response.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
            chunk["choices"][0]["delta"]["content"] = "la "
            for _ in range(400):
                await asyncio.sleep(0.05)
                await response.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
        except (ConnectionResetError, asyncio.CancelledError):
            self.closed.set()
            raise
        return response


@pytest.mark.parametrize("client", ["litellm", "direct"])
def test_a_client_that_goes_away_cancels_its_turn_and_the_model_call(client: str) -> None:
    with SlowModel() as slow, ServeProcess("--model", "openai/slow", "--api-base", slow.base_url, "--client", client,
                                           "--director", "rules") as server:
        host, port = server.url.removeprefix("http://").split(":")
        connection = http.client.HTTPConnection(host, int(port), timeout=30)
        connection.request("POST", "/v1/turn", body=GOOD, headers={"Content-Type": "application/json"})
        answer = connection.getresponse()
        assert answer.status == 200
        assert slow.started.wait(30)
        connection.close()  # the learner's terminal goes away mid-turn
        assert slow.closed.wait(10), "the model call went on after its client left"
        deadline = time.monotonic() + 10
        while 'maic_turns_total{outcome="cancelled"} 1' not in get(server.url, "/metrics")[1]:
            assert time.monotonic() < deadline
            time.sleep(0.1)
        assert "maic_turns_in_flight 0" in get(server.url, "/metrics")[1]


def test_past_the_cap_a_turn_is_503() -> None:
    with LoopbackOpenAIServer(default=ServedReply(text=reply("Slowly."), latency=3.0)) as model, \
            ServeProcess("--model", "openai/loopback", "--api-base", model.base_url, "--director", "rules",
                         "--max-concurrent", "1") as server:
        results: list[int] = []
        first = threading.Thread(target=lambda: results.append(post(server.url, GOOD, token=None)[0]))
        first.start()
        deadline = time.monotonic() + 10
        while "maic_turns_in_flight 1" not in get(server.url, "/metrics")[1]:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        status, body = post(server.url, GOOD, token=None)
        first.join()
    assert status == 503 and "running 1 turns" in json.loads(body)["error"]
    assert results == [200]


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner,
                                                                               max_size=4), max_leaves=20)
FIELDS = ["messages", "store_state", "config", "director_state", "user_profile", "model"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.one_of(
    JSON.map(lambda value: json.dumps(value).encode()),
    st.fixed_dictionaries({"version": st.just(1), "request": st.dictionaries(st.sampled_from(FIELDS), JSON)})
    .map(lambda value: json.dumps(value).encode()),
    st.builds(lambda field, value: _mutated(field, value), st.sampled_from(FIELDS), JSON),
    st.binary(max_size=200),
))
def test_any_body_is_answered_200_or_4xx(served: ServeProcess, body: bytes) -> None:
    status, text = post(served.url, body)
    assert status in (200, 400, 413, 422), text[:300]
    if status == 200:
        assert text.rstrip().endswith(b"}") and b'"type":"done"' in text.splitlines()[-2]
    else:
        assert json.loads(text)["error"]


def _mutated(field: str, value: Any) -> bytes:
    data = json.loads(GOOD)
    data["request"][field] = value
    return json.dumps(data).encode()


def test_the_server_is_alive_after_the_attacks(served: ServeProcess) -> None:
    assert alive(served)
    assert TOKEN not in served.log()


def test_an_unknown_route_is_one_json_line_and_metrics_count_tokens_and_durations(served: ServeProcess) -> None:
    status, body = post(served.url, GOOD, path="/v1/nowhere")
    assert status == 404 and json.loads(body) == {"error": "Not Found"}
    assert post(served.url, GOOD)[0] == 200
    status, text = get(served.url, "/metrics", TOKEN)
    assert status == 200
    prompt = int(re.search(r'maic_model_tokens_total\{kind="prompt"\} (\d+)', text).group(1))  # type: ignore[union-attr]
    assert prompt > 100
    count = int(re.search(r"maic_turn_duration_seconds_count (\d+)", text).group(1))  # type: ignore[union-attr]
    assert count >= 1 and f'maic_turn_duration_seconds_bucket{{le="+Inf"}} {count}' in text


def test_a_provider_key_never_reaches_a_client_or_the_log() -> None:
    key = "sk-provider-key-0123456789abcdefghij"
    with LoopbackOpenAIServer(default=ServedReply(text=f"Incorrect API key provided: {key}", status=401)) as model, \
            ServeProcess("--model", "openai/loopback", "--api-base", model.base_url, "--director", "rules",
                         env={"OPENAI_API_KEY": key}) as server:
        status, body = post(server.url, GOOD, token=None)
        log = server.log()
        assert model.headers and model.headers[0].get("Authorization") == f"Bearer {key}"  # the key was used
    assert status == 200 and b'"type":"error"' in body and b'"type":"done"' in body
    assert key.encode() not in body and key not in log


def test_a_slow_turn_gets_heartbeat_comments_that_the_client_skips(tmp_path: Any) -> None:
    with LoopbackOpenAIServer(default=ServedReply(text=reply("Slowly."), latency=1.5)) as model, \
            ServeProcess("--model", "openai/loopback", "--api-base", model.base_url, "--director", "rules",
                         "--heartbeat", "0.4") as server:
        status, body = post(server.url, GOOD, token=None)
        scenario = tmp_path / "sky.yaml"
        scenario.write_text("id: sky\nclass: {agents: [teacher]}\nmessages: [\"Why?\"]\n", encoding="utf-8")
        result = CliRunner().invoke(app, ["run", str(scenario), "--out", str(tmp_path / "out"), "--plain",
                                          "--model", "openai/loopback", "--server", server.url])
    assert status == 200 and body.count(b": heartbeat\n\n") >= 2
    frames = body.split(b"\n\n")[:-1]
    assert all(f.startswith((b"data: {", b": heartbeat")) and b"\n" not in f for f in frames)
    assert result.exit_code == 0, result.output


def test_a_request_never_chooses_the_model_its_address_or_its_key(served: ServeProcess,
                                                                   model: LoopbackOpenAIServer) -> None:
    with LoopbackOpenAIServer(default=reply("You should not hear this.")) as elsewhere:
        data = json.loads(GOOD)
        data["request"]["model"] = {"model": "openai/elsewhere", "temperature": 1.7, "max_tokens": 5,
                                    "api_base": elsewhere.base_url, "api_key": "sk-from-the-request-000000000"}
        data["request"]["api_base"] = elsewhere.base_url
        data["request"]["config"]["compact_prompts"] = True
        before = len(model.requests)
        status, body = post(served.url, json.dumps(data).encode())
        assert status == 200 and b"Light scatters." in body
        assert elsewhere.requests == []
    sent = model.requests[before]
    assert sent["model"] == "loopback" and sent.get("temperature") != 1.7 and sent.get("max_tokens") != 5
    assert "sk-from-the-request" not in json.dumps(model.headers[before])
