"""A loopback OpenAI-compatible chat server for tests and benchmarks.

It serves scripted replies on ``127.0.0.1`` as real ``text/event-stream``
``chat.completion.chunk`` events (with a usage chunk and ``[DONE]``), so that
litellm's real HTTP streaming path runs without reaching the internet.

Each reply is a :class:`ServedReply`: the text, how it is chunked, a delay per
chunk, an HTTP error status to answer with instead, or a character count after
which the connection is dropped mid-stream.  Replies are served from a queue in
order; when the queue is empty the ``default`` reply (if any) is served, else
HTTP 500 with a message saying the script ran out.  Every request body is
recorded in ``requests``.  Only the standard library is used.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class ServedReply:
    text: str = ""
    chunk_size: int = 8
    delay: float = 0.0
    status: int = 200
    drop_after: int | None = None
    latency: float = 0.0  # seconds before the first byte


ReplySource = Callable[[dict[str, Any]], "ServedReply | str"]


class LoopbackOpenAIServer:
    """Start with :meth:`start` (or as a context manager); ``base_url`` ends in ``/v1``."""

    def __init__(self, replies: Iterable[ServedReply | str] = (), *,
                 default: ServedReply | str | None = None,
                 responder: ReplySource | None = None) -> None:
        self._queue: deque[ServedReply] = deque(_as_reply(r) for r in replies)
        self._default = _as_reply(default) if default is not None else None
        self._responder = responder
        self.record = True  # keep request bodies (tests inspect them)
        self._lock = threading.Lock()
        self.requests: list[dict[str, Any]] = []
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- queue -----------------------------------------------------------------
    def enqueue(self, *replies: ServedReply | str) -> None:
        with self._lock:
            self._queue.extend(_as_reply(r) for r in replies)

    def _next_reply(self, body: dict[str, Any]) -> ServedReply:
        with self._lock:
            self.requests.append(body if self.record else {})
            if self._responder is not None:
                return _as_reply(self._responder(body))
            if self._queue:
                return self._queue.popleft()
            if self._default is not None:
                return self._default
        return ServedReply(text="loopback server: no scripted reply left", status=500)

    # -- lifecycle ---------------------------------------------------------------
    @property
    def base_url(self) -> str:
        assert self._httpd is not None, "server not started"
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> LoopbackOpenAIServer:
        server = self

        class Handler(_Handler):
            owner = server

        self._httpd = _Server(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever,
                                        kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> LoopbackOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class _Server(ThreadingHTTPServer):
    request_queue_size = 256  # the default backlog of 5 resets connections under a concurrent batch

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client closing a kept-alive connection is normal, not worth a traceback."""
        import sys

        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def _as_reply(reply: ServedReply | str) -> ServedReply:
    return reply if isinstance(reply, ServedReply) else ServedReply(text=reply)


class _Handler(BaseHTTPRequestHandler):
    owner: LoopbackOpenAIServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - silence
        return

    def do_GET(self) -> None:  # /v1/models, used by some clients as a health check
        self._send_json(200, {"object": "list", "data": [{"id": "loopback", "object": "model"}]})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except json.JSONDecodeError:
            body = {}
        reply = self.owner._next_reply(body)
        if reply.latency:
            time.sleep(reply.latency)
        if reply.status != 200:
            self._send_error(reply)
        elif body.get("stream"):
            self._stream(body, reply)
        else:
            self._send_json(200, _completion(body, reply.text))

    # -- answers -------------------------------------------------------------------
    def _send_json(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        if status == 429:
            self.send_header("Retry-After", "0")
        self.end_headers()
        self.wfile.write(data)

    def _send_error(self, reply: ServedReply) -> None:
        kind = {401: "invalid_api_key", 429: "rate_limit_exceeded"}.get(reply.status, "server_error")
        message = reply.text or f"loopback error {reply.status}"
        self._send_json(reply.status, {"error": {"message": message, "type": kind, "code": kind}})

    def _stream(self, body: dict[str, Any], reply: ServedReply) -> None:
        # Chunked transfer encoding, so the connection can be kept alive for the next call.
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        model = body.get("model", "loopback")
        text = reply.text
        size = max(1, reply.chunk_size)
        sent = 0
        self._event(_chunk(model, {"role": "assistant", "content": ""}))
        for start in range(0, len(text), size):
            piece = text[start:start + size]
            if reply.drop_after is not None and sent + len(piece) > reply.drop_after:
                piece = piece[: max(0, reply.drop_after - sent)]
                if piece:
                    self._event(_chunk(model, {"content": piece}))
                self.wfile.flush()
                self.close_connection = True
                self.connection.shutdown(2)  # drop the stream without [DONE] or the last chunk
                return
            if reply.delay:
                time.sleep(reply.delay)
            self._event(_chunk(model, {"content": piece}))
            sent += len(piece)
        self._event(_chunk(model, {}, finish="stop"))
        if (body.get("stream_options") or {}).get("include_usage"):
            prompt_tokens = sum(len(str(m.get("content", ""))) for m in body.get("messages", [])) // 4
            usage = {"prompt_tokens": prompt_tokens, "completion_tokens": max(1, len(text) // 4),
                     "total_tokens": prompt_tokens + max(1, len(text) // 4)}
            self._event({**_chunk(model, None), "choices": [], "usage": usage})
        self._write_chunk(b"data: [DONE]\n\n")
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _event(self, payload: dict[str, Any]) -> None:
        self._write_chunk(b"data: " + json.dumps(payload).encode() + b"\n\n")

    def _write_chunk(self, data: bytes) -> None:
        self.wfile.write(b"%X\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()


def _chunk(model: str, delta: dict[str, Any] | None, finish: str | None = None) -> dict[str, Any]:
    choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    return {"id": "chatcmpl-loopback", "object": "chat.completion.chunk",
            "created": int(time.time()), "model": model, "choices": choices}


def _completion(body: dict[str, Any], text: str) -> dict[str, Any]:
    return {"id": "chatcmpl-loopback", "object": "chat.completion", "created": int(time.time()),
            "model": body.get("model", "loopback"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                         "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}


def classroom_responder(agent_reply: str, latency: float, chunk_size: int = 16) -> ReplySource:
    """Answers like a tiny class: the director picks the first agent, then hands over to the
    learner; agents say ``agent_reply``."""
    def respond(body: dict[str, Any]) -> ServedReply:
        messages = body.get("messages") or [{}]
        system = str(messages[0].get("content", ""))
        if system.startswith("You are the director"):
            choice = "teacher" if "(nobody yet this round)" in system else "USER"
            return ServedReply(json.dumps({"next_agent": choice}), chunk_size=chunk_size, latency=latency)
        return ServedReply(agent_reply, chunk_size=chunk_size, latency=latency)

    return respond


def main(argv: list[str] | None = None) -> None:
    """Serve one reply to every request until interrupted (for benchmarks in another process).

    ``python -m maic_cli.testing.openai_server --reply TEXT --latency 0.2`` prints the base URL.
    """
    import argparse

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--reply", default='[{"type": "text", "content": "Hello."}]')
    parser.add_argument("--latency", type=float, default=0.0)
    parser.add_argument("--chunk-size", type=int, default=16)
    parser.add_argument("--classroom", action="store_true",
                        help="answer director calls too (teacher first, then the learner's turn)")
    args = parser.parse_args(argv)
    if args.classroom:
        server = LoopbackOpenAIServer(responder=classroom_responder(args.reply, args.latency, args.chunk_size))
    else:
        server = LoopbackOpenAIServer(default=ServedReply(args.reply, chunk_size=args.chunk_size,
                                                          latency=args.latency))
    server.record = False
    server.start()
    print(server.base_url, flush=True)  # noqa: T201 - the parent reads the address
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()


if __name__ == "__main__":
    main()
