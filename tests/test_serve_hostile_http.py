"""``maic serve`` attacked through HTTP itself: lengths that lie, compressed bombs and broken encodings, bodies
and headers sent a byte at a time, hundreds of idle connections, a client gone mid-body, methods, paths that try
to walk out of the routes, HTTP/1.0 and pipelined requests — each against a real ``maic serve``, bounded."""

from __future__ import annotations

import asyncio
import json
import socket
import time
import zlib
from collections.abc import Iterator
from typing import Any

import pytest
from aiohttp import web
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from maic_cli.testing.loopback import LoopbackServer
from maic_cli.testing.openai_server import LoopbackOpenAIServer
from maic_cli.testing.serve_process import ServeProcess
from tests.helpers import reply

from .openmaic_shapes import qa_request
from .serve_hostile import (
    DONE,
    GOOD,
    TOKEN,
    address,
    alive,
    body_of,
    cpu_seconds,
    get,
    head,
    raw,
    status_of,
    wait_for,
)

IDLE = 2.0  # the server's --idle-timeout in this module


@pytest.fixture(scope="module")
def served() -> Iterator[ServeProcess]:
    with LoopbackOpenAIServer(default=reply("Light scatters.")) as model, \
            ServeProcess("--model", "openai/loopback", "--api-base", model.base_url, "--director", "rules",
                         "--idle-timeout", str(IDLE), env={"MAIC_SERVE_TOKEN": TOKEN}) as server:
        yield server


def _bomb(encoding: str, megabytes: int) -> bytes:
    """``megabytes`` MB of zeros, compressed (about a thousand times smaller).  Each MB is flushed whole, so after
    the first every MB compresses to the same bytes: repeated, not recompressed (the trailer's checksum is then
    wrong, which a server finds only after inflating it all)."""
    squeezer = zlib.compressobj(9, zlib.DEFLATED, 31 if encoding == "gzip" else 15)
    block = b"\0" * 2**20
    first = squeezer.compress(block) + squeezer.flush(zlib.Z_FULL_FLUSH)
    steady = squeezer.compress(block) + squeezer.flush(zlib.Z_FULL_FLUSH)
    assert squeezer.compress(block) + squeezer.flush(zlib.Z_FULL_FLUSH) == steady
    return first + steady * (megabytes - 1) + squeezer.flush()


@pytest.mark.parametrize("encoding", ["gzip", "deflate"])
def test_a_compressed_bomb_costs_the_server_nothing(served: ServeProcess, encoding: str) -> None:
    """2 GB of zeros in 2 MB of gzip: refused without being inflated (no client of maic compresses a body), so
    the server spends next to no CPU on it (inflating it cost 2.2 s; with the 1 s linger, 0.7 s)."""
    bomb = _bomb(encoding, 2000)
    before = cpu_seconds(served)
    answer = raw(served, head("POST", "/v1/turn", length=len(bomb), extra=f"Content-Encoding: {encoding}\r\n"
                              .encode()) + bomb, wait=30)
    spent = cpu_seconds(served) - before
    assert 400 <= status_of(answer) < 500, answer[:200]
    assert spent < 0.3, f"{spent:.2f} s of server CPU for a {len(bomb)} byte request"
    assert alive(served)


@pytest.mark.parametrize("encoding", ["gzip", "deflate", "br", "zstd", "compress", "x-unknown", "gzip, gzip"])
def test_a_body_in_an_encoding_is_a_4xx_never_a_500(served: ServeProcess, encoding: str) -> None:
    answer = raw(served, head("POST", "/v1/turn", length=5, extra=f"Content-Encoding: {encoding}\r\n".encode())
                 + b"hello")
    assert 400 <= status_of(answer) < 500, answer[:200]
    assert alive(served)


def test_identity_encoding_is_a_plain_body(served: ServeProcess) -> None:
    answer = raw(served, head("POST", "/v1/turn", length=len(GOOD), extra=b"Content-Encoding: identity\r\n") + GOOD,
                 wait=15)
    assert status_of(answer) == 200 and DONE in answer


@pytest.mark.parametrize(("name", "request_bytes"), [
    ("shorter than said", head("POST", "/v1/turn", length=len(GOOD) - 10) + GOOD),
    ("negative", head("POST", "/v1/turn", length=None, extra=b"Content-Length: -1\r\n") + GOOD),
    ("not a number", head("POST", "/v1/turn", length=None, extra=b"Content-Length: 12abc\r\n") + GOOD),
    ("overflowing", head("POST", "/v1/turn", length=None, extra=b"Content-Length: " + b"9" * 40 + b"\r\n") + GOOD),
    ("two lengths", head("POST", "/v1/turn", length=len(GOOD), extra=b"Content-Length: 5\r\n") + GOOD),
    ("length and chunked", head("POST", "/v1/turn", length=5, extra=b"Transfer-Encoding: chunked\r\n")
     + b"%x\r\n" % len(GOOD) + GOOD + b"\r\n0\r\n\r\n"),
    ("chunk size a lie", head("POST", "/v1/turn", extra=b"Transfer-Encoding: chunked\r\n")
     + b"ffffffffffffffffff\r\n" + GOOD + b"\r\n0\r\n\r\n"),
    ("chunk size not hex", head("POST", "/v1/turn", extra=b"Transfer-Encoding: chunked\r\n")
     + b"zz\r\n" + GOOD + b"\r\n0\r\n\r\n"),
    ("no length at all", head("POST", "/v1/turn") + GOOD),
])
def test_a_lying_length_is_answered_and_the_server_lives(served: ServeProcess, name: str,
                                                         request_bytes: bytes) -> None:
    answer = raw(served, request_bytes, wait=IDLE + 5)
    assert answer == b"" or 400 <= status_of(answer) < 500 or (status_of(answer) == 200 and DONE in answer), \
        (name, answer[:300])
    assert b"500 Internal" not in answer
    assert alive(served)


def test_a_length_longer_than_the_body_is_408_then_closed(served: ServeProcess) -> None:
    """The body never completes: 408 within the server's timeout, and the connection is closed with it (not
    left open for the rest of a body that is not coming)."""
    with socket.create_connection(address(served), timeout=IDLE + 10) as sock:
        sock.sendall(head("POST", "/v1/turn", length=len(GOOD) + 10, close=False) + GOOD)
        started = time.monotonic()
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
        took = time.monotonic() - started
    assert status_of(answer) == 408, answer[:200]
    assert took < IDLE + 2, f"the connection stayed open {took:.1f} s"


def test_a_chunked_body_is_a_body(served: ServeProcess) -> None:
    chunks = b"".join(b"%x\r\n%s\r\n" % (len(part), part) for part in (GOOD[:100], GOOD[100:]))
    answer = raw(served, head("POST", "/v1/turn", extra=b"Transfer-Encoding: chunked\r\n") + chunks + b"0\r\n\r\n",
                 wait=15)
    assert status_of(answer) == 200 and DONE in answer


def _trickle(served: ServeProcess, prefix: bytes, payload: bytes, seconds: float) -> tuple[str, float]:
    """Send ``prefix`` and then ``payload`` a byte every 0.25 s until the server stops the connection or
    ``seconds`` pass; how it ended and when."""
    with socket.create_connection(address(served), timeout=seconds + 5) as sock:
        sock.sendall(prefix)
        started = time.monotonic()
        for byte in payload:
            try:
                sock.sendall(bytes([byte]))
            except OSError:
                return "closed", time.monotonic() - started
            sock.settimeout(0.25)
            try:
                data = sock.recv(4096)
                return ("answered " + data[:12].decode("latin-1") if data else "closed"), time.monotonic() - started
            except TimeoutError:
                pass
            if time.monotonic() - started > seconds:
                return "still open", time.monotonic() - started
    return "sent all", time.monotonic() - started


def test_slowloris_headers_are_cut_off(served: ServeProcess) -> None:
    ended, took = _trickle(served, b"", head("POST", "/v1/turn", length=len(GOOD), extra=b"X-Pad: " + b"a" * 200
                                             + b"\r\n"), seconds=IDLE * 4)
    assert ended in ("closed", "answered HTTP/1.1 408", "answered HTTP/1.0 408"), ended
    assert took < IDLE * 2.5


def test_slowloris_body_is_cut_off(served: ServeProcess) -> None:
    ended, took = _trickle(served, head("POST", "/v1/turn", length=len(GOOD)), GOOD, seconds=IDLE * 4)
    assert ended.startswith("answered HTTP/1.1 408") or ended == "closed", ended
    assert took < IDLE * 2.5


def test_six_hundred_idle_connections_starve_no_one(served: ServeProcess) -> None:
    """Hundreds of connections that say nothing, half a head, or a head and half a body: a real client still
    gets its turn at once, and the server closes each dawdler within its idle timeout."""
    dawdlers: list[socket.socket] = []
    try:
        for i in range(600):
            sock = socket.create_connection(address(served), timeout=10)
            if i % 3 == 1:
                sock.sendall(b"POST /v1/turn HTTP/1.1\r\nHost: x\r\n")
            elif i % 3 == 2:
                sock.sendall(head("POST", "/v1/turn", length=1000, close=False) + b"{")
            dawdlers.append(sock)
        started = time.monotonic()
        assert alive(served)
        assert time.monotonic() - started < 3
        time.sleep(IDLE + 2.5)
        still_open = 0
        for sock in dawdlers:
            sock.settimeout(0.05)
            try:
                data = sock.recv(4096)
                while data:  # an answer (408) then the close
                    assert data.startswith(b"HTTP/1.1 408") or b"HTTP/" not in data[:5], data[:80]
                    data = sock.recv(4096)
            except TimeoutError:
                still_open += 1
            except OSError:
                pass
        assert still_open == 0, f"{still_open} of 600 idle connections still open after the idle timeout"
    finally:
        for sock in dawdlers:
            sock.close()
    assert alive(served)


def test_a_client_gone_mid_body_leaves_nothing_in_flight(served: ServeProcess) -> None:
    for _ in range(20):
        with socket.create_connection(address(served), timeout=5) as sock:
            sock.sendall(head("POST", "/v1/turn", length=len(GOOD), close=False) + GOOD[: len(GOOD) // 2])
    assert alive(served)
    assert "maic_turns_in_flight 0" in get(served, "/metrics")[1]


@pytest.mark.parametrize("method", ["OPTIONS", "TRACE", "PUT", "DELETE", "PATCH", "PROPFIND", "FOO"])
def test_other_methods_are_refused_and_run_no_turn(served: ServeProcess, method: str) -> None:
    """A method the routes know of is one JSON refusal (405); one HTTP does not (FOO) is the parser's 400."""
    answer = raw(served, head(method, "/v1/turn", length=len(GOOD)) + GOOD)
    if method == "FOO":
        assert status_of(answer) == 400, answer[:200]
    else:
        assert status_of(answer) in (404, 405), answer[:200]
        assert body_of(answer).startswith(b'{"error": ')
    assert DONE not in answer


def test_head_and_get_of_a_turn_run_no_turn(served: ServeProcess) -> None:
    for method in ("HEAD", "GET"):
        answer = raw(served, head(method, "/v1/turn"))
        assert status_of(answer) == 405 and DONE not in answer
    assert status_of(raw(served, head("HEAD", "/healthz", token=None))) == 200


@pytest.mark.parametrize("path", ["/v1/turn/", "//v1/turn", "/v1/./turn", "/v1/../v1/turn", "/V1/TURN",
                                  "/v1/turn%2f", "/healthz/../metrics", "/healthz%2f..%2fmetrics", "/healthz/",
                                  "/healthz/..%2fmetrics", "/%2e%2e/%2e%2e/etc/passwd", "/../../etc/passwd",
                                  "/healthz;/metrics", "/metrics%00", "/healthz?/../metrics", "/healthz#/metrics"])
def test_paths_never_walk_past_the_token(served: ServeProcess, path: str) -> None:
    """Without the token, only ``/healthz`` itself answers; nothing reaches ``/metrics`` or a file."""
    answer = raw(served, head("GET", path, token=None))
    status = status_of(answer)
    assert status in (400, 401, 404) or (status == 200 and body_of(answer) == b'{"status": "ok"}'), \
        (path, answer[:200])
    assert b"maic_turns_total" not in answer and b"root:" not in answer


def test_pipelined_requests_are_answered_in_order(served: ServeProcess) -> None:
    turn = head("POST", "/v1/turn", length=len(GOOD), close=False) + GOOD
    answer = raw(served, turn + turn + head("GET", "/healthz", token=None), wait=20)
    assert answer.count(b"HTTP/1.1 200") == 3 and answer.count(DONE) == 2
    assert answer.endswith(b'{"status": "ok"}')


def test_http_1_0_keep_alive_and_a_turn_over_http_1_0(served: ServeProcess) -> None:
    answer = raw(served, b"GET /healthz HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET /healthz HTTP/1.0\r\n\r\n")
    assert answer.count(b'{"status": "ok"}') == 2
    turn = head("POST", "/v1/turn", length=len(GOOD), close=False).replace(b"HTTP/1.1", b"HTTP/1.0") + GOOD
    answer = raw(served, turn, wait=20)
    assert status_of(answer) == 200 and answer.rstrip().endswith(b"}") and DONE in answer


@pytest.mark.parametrize("line", [b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", b"GET /healthz HTTP/9.9\r\n\r\n",
                                  b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + b"\0" * 64,  # a TLS hello
                                  b"GET " + b"/a" * 10_000 + b" HTTP/1.1\r\n\r\n",
                                  b"GET /healthz HTTP/1.1\r\n" + b"X-A: b\r\n" * 500 + b"\r\n",
                                  b"GET /healthz HTTP/1.1\r\nX-Big: " + b"a" * 70_000 + b"\r\n\r\n"])
def test_odd_protocol_bytes_are_refused_and_the_server_lives(served: ServeProcess, line: bytes) -> None:
    answer = raw(served, line, wait=5)
    assert b"500 Internal" not in answer
    assert alive(served)


class _SlowModel(LoopbackServer):
    """Streams a reply a word every 50 ms for 20 s; counts the calls it saw start and those whose client hung up."""

    name = "hostile-slow-model"

    def __init__(self) -> None:
        super().__init__()
        self.started = 0
        self.closed = 0

    def routes(self, app: web.Application) -> None:
        app.router.add_post("/v1/chat/completions", self._chat)

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        await request.read()
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        self.started += 1
        chunk: dict[str, Any] = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "slow",
                                 "choices": [{"index": 0, "delta": {"content": '[{"type": "text", "content": "'},
                                              "finish_reason": None}]}
        try:
            for _ in range(400):
                await response.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
                chunk["choices"][0]["delta"]["content"] = "la "
                await asyncio.sleep(0.05)
        except (ConnectionResetError, asyncio.CancelledError):
            self.closed += 1
        return response


@pytest.mark.parametrize("path", ["/v1/turn", "/api/chat"])
def test_thirty_clients_leaving_at_once_cancel_thirty_model_calls(path: str) -> None:
    body = GOOD if path == "/v1/turn" else json.dumps(qa_request()).encode()
    with _SlowModel() as slow, ServeProcess("--model", "openai/slow", "--api-base", slow.base_url, "--director",
                                            "rules", env={"MAIC_SERVE_TOKEN": ""}) as server:
        clients = []
        for _ in range(30):
            sock = socket.create_connection(address(server), timeout=10)
            sock.sendall(head("POST", path, token=None, length=len(body), close=False) + body)
            clients.append(sock)
        assert wait_for(lambda: slow.started == 30, 30), slow.started
        for sock in clients:
            sock.close()
        assert wait_for(lambda: slow.closed == 30, 15), f"{slow.closed} of 30 model calls closed"
        assert wait_for(lambda: "maic_turns_in_flight 0" in get(server, "/metrics", token=None)[1], 10)
        assert 'maic_turns_total{outcome="cancelled"} 30' in get(server, "/metrics", token=None)[1]


@pytest.mark.parametrize(("path", "token", "length", "extra", "status"), [
    ("/v1/turn", TOKEN, 30 * 2**20, b"", 413),
    ("/api/chat", TOKEN, 30 * 2**20, b"", 413),
    ("/v1/turn", None, 100, b"", 401),
    ("/v1/turn", "wrong", 100, b"", 401),
    ("/v1/turn", TOKEN, 100, b"Content-Encoding: gzip\r\n", 415),
])
def test_100_continue_is_never_an_invitation_to_send_what_is_refused(served: ServeProcess, path: str,
                                                                     token: str | None, length: int, extra: bytes,
                                                                     status: int) -> None:
    """A client that waits for ``100 Continue`` before its body is told at once why not, without a 100."""
    answer = raw(served, head("POST", path, token=token, length=length, extra=b"Expect: 100-continue\r\n" + extra),
                 wait=5)
    assert b"100 Continue" not in answer and status_of(answer) == status, answer[:200]


def test_100_continue_invites_a_body_the_server_reads(served: ServeProcess) -> None:
    with socket.create_connection(address(served), timeout=15) as sock:
        sock.sendall(head("POST", "/v1/turn", length=len(GOOD), extra=b"Expect: 100-continue\r\n"))
        assert sock.recv(4096) == b"HTTP/1.1 100 Continue\r\n\r\n"
        sock.sendall(GOOD)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    assert status_of(answer) == 200 and DONE in answer
    assert status_of(raw(served, head("POST", "/v1/turn", length=len(GOOD), extra=b"Expect: tea\r\n") + GOOD)) == 417


@pytest.mark.parametrize("request_line", [b"GET http://evil.test/metrics HTTP/1.1",
                                          b"GET http://evil.test/healthz/../metrics HTTP/1.1",
                                          b"GET //evil.test/metrics HTTP/1.1", b"GET * HTTP/1.1",
                                          b"GET metrics HTTP/1.1"])
def test_absolute_and_odd_request_targets_never_skip_the_token(served: ServeProcess, request_line: bytes) -> None:
    answer = raw(served, request_line + b"\r\nHost: x\r\nX-Original-URL: /healthz\r\nX-Rewrite-URL: /healthz\r\n"
                 b"X-Forwarded-Prefix: /healthz\r\nConnection: close\r\n\r\n")
    assert status_of(answer) in (400, 401, 404), answer[:200]
    assert b"maic_turns_total" not in answer


HEADER_NAMES = ["Authorization", "Content-Type", "Content-Length", "Content-Encoding", "Expect", "Origin",
                "Transfer-Encoding", "Connection", "Host", "Upgrade", "Accept-Encoding", "Cookie"]
HEADER_VALUE = st.one_of(
    st.sampled_from(["", "Bearer " + TOKEN, "bearer", "gzip", "chunked", "100-continue", "close", "keep-alive",
                     "application/json", "null", "http://evil.test", "-1", "0", "99999999999", "identity, gzip"]),
    st.binary(max_size=40).map(lambda b: bytes(c for c in b if c >= 0x20 and c != 0x7f).decode("latin-1")),
)


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(headers=st.lists(st.tuples(st.sampled_from(HEADER_NAMES), HEADER_VALUE), max_size=6),
       method=st.sampled_from(["POST", "GET", "HEAD", "OPTIONS"]),
       path=st.sampled_from(["/v1/turn", "/api/chat", "/metrics", "/healthz", "/v1/info"]),
       body=st.sampled_from([b"", GOOD, b"{", b"0\r\n\r\n"]))
def test_any_head_is_answered_and_never_a_500(served: ServeProcess, headers: list[tuple[str, str]], method: str,
                                              path: str, body: bytes) -> None:
    lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1", *(f"{name}: {value}" for name, value in headers)]
    answer = raw(served, "\r\n".join(lines).encode("latin-1") + b"\r\n\r\n" + body, wait=IDLE + 3)
    assert b" 500 " not in answer.split(b"\r\n", 1)[0], answer[:300]
    assert get(served, "/healthz", token=None)[0] == 200
