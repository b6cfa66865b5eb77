"""A loopback OpenAI-compatible chat server for tests and benchmarks.

It serves scripted replies on ``127.0.0.1`` as real ``text/event-stream``
``chat.completion.chunk`` events (with a usage chunk and ``[DONE]``), so that
litellm's real HTTP streaming path runs without reaching the internet.

Each reply is a :class:`ServedReply`: the text, how it is chunked, a delay per
chunk, an HTTP error status to answer with instead, or a character count after
which the connection is dropped mid-stream.  Replies are served from a queue in
order; when the queue is empty the ``default`` reply (if any) is served, else
HTTP 500 with a message saying the script ran out.  Every request body is
recorded in ``requests`` and its headers in ``headers``.

The server is aiohttp's (already a dependency), on its own event loop in a
daemon thread.  On a batch of 600 calls at concurrency 50 with 200 ms of latency
an asyncio server adds 6-8% (measured with a bare aiohttp client), where the
standard library's ``ThreadingHTTPServer`` (one thread per connection, fighting
over the GIL) adds about 24% — a real inference server (vLLM, llama.cpp) is
asynchronous too, so the benchmark measures maic rather than its test server.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from .loopback import LoopbackServer


@dataclass
class ServedReply:
    text: str = ""
    chunk_size: int = 8
    delay: float = 0.0
    status: int = 200
    drop_after: int | None = None
    latency: float = 0.0  # seconds before the first byte


ReplySource = Callable[[dict[str, Any]], "ServedReply | str"]


class LoopbackOpenAIServer(LoopbackServer):
    """Start with :meth:`start` (or as a context manager); ``base_url`` ends in ``/v1``."""

    name = "loopback-openai-server"
    backlog = 512  # a batch opens many connections at once

    def __init__(self, replies: Iterable[ServedReply | str] = (), *,
                 default: ServedReply | str | None = None,
                 responder: ReplySource | None = None) -> None:
        super().__init__()
        self._queue: deque[ServedReply] = deque(_as_reply(r) for r in replies)
        self._default = _as_reply(default) if default is not None else None
        self._responder = responder
        self.record = True  # keep request bodies (tests inspect them)
        self._lock = threading.Lock()
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []

    # -- queue -----------------------------------------------------------------
    def enqueue(self, *replies: ServedReply | str) -> None:
        with self._lock:
            self._queue.extend(_as_reply(r) for r in replies)

    def _next_reply(self, body: dict[str, Any], headers: dict[str, str]) -> ServedReply:
        with self._lock:
            if self.record:
                self.requests.append(body)
                self.headers.append(headers)
            if self._responder is not None:
                return _as_reply(self._responder(body))
            if self._queue:
                return self._queue.popleft()
            if self._default is not None:
                return self._default
        return ServedReply(text="loopback server: no scripted reply left", status=500)

    # -- lifecycle ---------------------------------------------------------------
    def routes(self, app: web.Application) -> None:
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_get("/v1/models", _models)  # some clients use it as a health check

    # -- answers -------------------------------------------------------------------
    async def _chat(self, request: web.Request) -> web.StreamResponse:
        try:
            body = await request.json()
        except ValueError:
            body = {}
        reply = self._next_reply(body if isinstance(body, dict) else {}, dict(request.headers))
        if reply.latency:
            await asyncio.sleep(reply.latency)
        if reply.status != 200:
            return _error(reply)
        if not body.get("stream"):
            return web.json_response(_completion(body, reply.text))
        return await _stream(request, body, reply)


def _as_reply(reply: ServedReply | str) -> ServedReply:
    return reply if isinstance(reply, ServedReply) else ServedReply(text=reply)


async def _models(request: web.Request) -> web.Response:
    return web.json_response({"object": "list", "data": [{"id": "loopback", "object": "model"}]})


def _error(reply: ServedReply) -> web.Response:
    kind = {401: "invalid_api_key", 429: "rate_limit_exceeded"}.get(reply.status, "server_error")
    message = reply.text or f"loopback error {reply.status}"
    headers = {"Retry-After": "0"} if reply.status == 429 else None
    return web.json_response({"error": {"message": message, "type": kind, "code": kind}},
                             status=reply.status, headers=headers)


async def _stream(request: web.Request, body: dict[str, Any], reply: ServedReply) -> web.StreamResponse:
    # Chunked transfer encoding (aiohttp's default here), so the connection is kept alive.
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
    await response.prepare(request)
    model = body.get("model", "loopback")
    text = reply.text
    size = max(1, reply.chunk_size)
    sent = 0

    async def event(payload: dict[str, Any]) -> None:
        await response.write(b"data: " + json.dumps(payload).encode() + b"\n\n")

    await event(_chunk(model, {"role": "assistant", "content": ""}))
    for start in range(0, len(text), size):
        piece = text[start:start + size]
        if reply.drop_after is not None and sent + len(piece) > reply.drop_after:
            piece = piece[: max(0, reply.drop_after - sent)]
            if piece:
                await event(_chunk(model, {"content": piece}))
            if request.transport is not None:
                request.transport.close()  # drop the stream without [DONE] or the last chunk
            return response
        if reply.delay:
            await asyncio.sleep(reply.delay)
        await event(_chunk(model, {"content": piece}))
        sent += len(piece)
    await event(_chunk(model, {}, finish="stop"))
    if (body.get("stream_options") or {}).get("include_usage"):
        prompt_tokens = sum(len(str(m.get("content", ""))) for m in body.get("messages", [])) // 4
        usage = {"prompt_tokens": prompt_tokens, "completion_tokens": max(1, len(text) // 4),
                 "total_tokens": prompt_tokens + max(1, len(text) // 4)}
        await event({**_chunk(model, None), "choices": [], "usage": usage})
    await response.write(b"data: [DONE]\n\n")
    await response.write_eof()
    return response


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


def director_choices(body: dict[str, Any]) -> list[str] | None:
    """The ``next_agent`` choices of a director call's ``response_format``; ``None`` for any other call.

    Both forms maic sends are read: ``json_schema`` (OpenAI's) and ``json_object`` with a schema
    (llama.cpp's).
    """
    fmt = body.get("response_format")
    if not isinstance(fmt, dict):
        return None
    schema = (fmt.get("json_schema") or {}).get("schema") if fmt.get("type") == "json_schema" else fmt.get("schema")
    if not isinstance(schema, dict):
        return None
    choices = (schema.get("properties") or {}).get("next_agent", {}).get("enum")
    return [str(c) for c in choices] if isinstance(choices, list) else None


NEEDS_STRUCTURED = ("loopback classroom mode: the request has no response_format; it reads the turn "
                    "from the reply schema, so run maic with --structured json_schema (or json_object)")


def classroom_responder(agent_reply: str, latency: float, chunk_size: int = 16) -> ReplySource:
    """Answers like a tiny class: the director picks the first agent it may, then hands over to
    the learner; agents say ``agent_reply``.

    It reads the turn from the request's structure, not the prompt's wording: the reply schema
    (``response_format``) marks a director call and lists whom it may pick, and it offers
    ``USER`` only once someone has spoken this round.  Calls without a ``response_format`` get
    HTTP 400 saying so.
    """
    def respond(body: dict[str, Any]) -> ServedReply:
        if "response_format" not in body:
            return ServedReply(NEEDS_STRUCTURED, status=400)
        choices = director_choices(body)
        if choices is None:
            return ServedReply(agent_reply, chunk_size=chunk_size, latency=latency)
        agents = [c for c in choices if c not in ("USER", "END")]
        choice = "USER" if "USER" in choices or not agents else agents[0]
        return ServedReply(json.dumps({"next_agent": choice}), chunk_size=chunk_size, latency=latency)

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
                        help="answer director calls too (first agent, then the learner's turn); "
                             "needs maic's --structured json_schema or json_object")
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
