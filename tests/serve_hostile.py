"""What the ``tests/test_serve_hostile_*.py`` attacks share: raw sockets and plain HTTP against a real
``maic serve`` process on 127.0.0.1, a good ``/v1/turn`` body to mutate, and the server's CPU time.

Every attack talks to the server as a hostile network client would: bytes on a socket (so a lying
``Content-Length``, a header no library would send, a body that never ends are possible), bounded in
time (socket timeouts) and in size."""

from __future__ import annotations

import http.client
import json
import os
import socket
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from maic_cli.engine.models import Message, MessagePart, TurnConfig, TurnRequest
from maic_cli.serve.wire import encode_request
from maic_cli.testing.serve_process import ServeProcess

TOKEN = "hostile-test-token-0123456789abcdef"
GOOD = encode_request(TurnRequest(messages=[Message(role="user", parts=[MessagePart(kind="text", text="Why?")])],
                                  config=TurnConfig(agent_ids=["teacher", "curious_student"])))
DONE = b'"type":"done"'


def address(server: ServeProcess) -> tuple[str, int]:
    return "127.0.0.1", server.port


def raw(server: ServeProcess, data: bytes, *, wait: float = 5.0, until: bytes | None = None) -> bytes:
    """Send ``data`` on a fresh connection and read until the server closes it, ``wait`` seconds pass
    without a byte, or ``until`` has been read."""
    with socket.create_connection(address(server), timeout=wait) as sock:
        try:
            sock.sendall(data)
        except (BrokenPipeError, ConnectionResetError):
            pass
        out = b""
        try:
            while chunk := sock.recv(65536):
                out += chunk
                if until is not None and until in out:
                    break
        except (TimeoutError, ConnectionResetError):
            pass
        return out


def head(method: str, path: str, *, token: str | None = TOKEN, length: int | None = None,
         extra: bytes = b"", close: bool = True) -> bytes:
    """A request's head, as bytes."""
    lines = [f"{method} {path} HTTP/1.1".encode(), b"Host: 127.0.0.1"]
    if token is not None:
        lines.append(f"Authorization: Bearer {token}".encode())
    lines.append(b"Content-Type: application/json")
    if length is not None:
        lines.append(b"Content-Length: %d" % length)
    if close:
        lines.append(b"Connection: close")
    return b"\r\n".join(lines) + b"\r\n" + extra + b"\r\n"


def status_of(answer: bytes) -> int:
    """The status code of the first response in ``answer`` (0: none)."""
    if not answer.startswith(b"HTTP/"):
        return 0
    return int(answer.split(b" ", 2)[1])


def body_of(answer: bytes) -> bytes:
    return answer.split(b"\r\n\r\n", 1)[1] if b"\r\n\r\n" in answer else b""


def post(server: ServeProcess, body: bytes, *, path: str = "/v1/turn", token: str | None = TOKEN,
         headers: dict[str, str] | None = None, timeout: float = 30.0) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection(*address(server), timeout=timeout)
    try:
        sent = {"Content-Type": "application/json", **({"Authorization": f"Bearer {token}"} if token else {}),
                **(headers or {})}
        connection.request("POST", path, body=body, headers=sent)
        answer = connection.getresponse()
        return answer.status, answer.read()
    finally:
        connection.close()


def get(server: ServeProcess, path: str, *, token: str | None = TOKEN,
        headers: dict[str, str] | None = None) -> tuple[int, str]:
    connection = http.client.HTTPConnection(*address(server), timeout=10)
    try:
        connection.request("GET", path, headers={**({"Authorization": f"Bearer {token}"} if token else {}),
                                                 **(headers or {})})
        answer = connection.getresponse()
        return answer.status, answer.read().decode()
    finally:
        connection.close()


def mutated(change: Callable[[dict[str, Any]], object]) -> bytes:
    """:data:`GOOD` with ``change`` applied to its ``request`` object."""
    data = json.loads(GOOD)
    change(data["request"])
    return json.dumps(data, allow_nan=True).encode()


def turn_ends_with_done(body: bytes) -> bool:
    """The stream's last frame is a complete ``done`` event (a stream cut short has none)."""
    frames = [f for f in body.split(b"\n\n") if f.startswith(b"data: ")]
    if not frames:
        return False
    last = json.loads(frames[-1][6:])
    return bool(last.get("type") == "done")


def alive(server: ServeProcess, token: str | None = TOKEN) -> bool:
    status, body = post(server, GOOD, token=token)
    return get(server, "/healthz", token=None)[0] == 200 and status == 200 and turn_ends_with_done(body)


def cpu_seconds(server: ServeProcess) -> float:
    """User + system CPU time the server process has used so far (Linux /proc)."""
    assert server.process is not None
    fields = Path(f"/proc/{server.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime (fields 14, 15)


def wait_for(check: Callable[[], bool], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.05)
    return check()
