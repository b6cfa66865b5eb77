"""A thin streaming client for OpenAI-compatible servers (``--client direct``, and ``maic run``'s default
for an ``openai/``, ``hosted_vllm/`` or ``litellm_proxy/`` model with an ``--api-base``: llm/spec.py).

Why it exists: litellm costs about 18 ms of CPU per streamed call here (the
openai SDK about 5 ms, a bare aiohttp request under 1 ms), which caps a batch
against a self-hosted server (vLLM, llama.cpp, Ollama's OpenAI API) at roughly
50 calls a second per core — measured with ``tests/benchmarks/batch_bench.py``.
For such servers this client posts ``/chat/completions`` with aiohttp (already
installed with litellm) and reads the ``text/event-stream`` itself.  It shares the error wording and the
structured-output form with the litellm client (``openai_compat``), not a base
class, and builds its request body from the :class:`LLMRequest` directly;
retries are :class:`~maic_cli.llm.retrying.RetryingClient`'s.  Providers and
Routers still go through litellm.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator
from typing import Any

import pydantic_core

from ..errors import InputError
from .openai_compat import check_structured_mode, response_format, to_llm_error
from .port import ErrorKind, LLMError, LLMRequest, StreamPiece, Usage
from .spec import OPENAI_COMPATIBLE

_STATUS_KINDS: dict[int, ErrorKind] = {401: "auth", 403: "auth", 404: "not_found", 408: "timeout",
                                       429: "rate_limit", 400: "bad_request", 413: "context_window",
                                       422: "bad_request"}
MAX_LINE_BYTES = 2**17  # one line of the event stream (aiohttp's own line reader stops at the same)
_PASSED_EXTRA = ("seed", "top_p")  # the extra options an OpenAI-compatible server takes as they are


class DirectClient:
    """Posts ``/chat/completions`` to ``api_base`` and streams the reply; one call is one try."""

    def __init__(self, model: str, *, api_base: str | None = None, api_key: str | None = None,
                 temperature: float | None = None, timeout: float = 120.0,
                 extra: dict[str, Any] | None = None, structured: str = "auto") -> None:
        if not api_base:
            raise InputError("--client direct talks to an OpenAI-compatible server: give its --api-base")
        self.model = model
        self.api_base = api_base.rstrip("/")
        self._api_key = api_key
        self.temperature = temperature
        self.timeout = timeout
        self.extra = dict(extra or {})
        # "auto" means off: there is no way to ask the server whether it can follow a schema.
        self.structured = check_structured_mode(structured)
        self._session: Any = None  # one aiohttp session (and its kept-alive connections) per event loop
        self._session_loop: Any = None

    def _get_session(self) -> Any:
        import aiohttp

        loop = asyncio.get_running_loop()
        if self._session is None or self._session.closed or self._session_loop is not loop:
            timeout = aiohttp.ClientTimeout(total=None, sock_connect=self.timeout, sock_read=self.timeout)
            self._session = aiohttp.ClientSession(timeout=timeout,
                                                  connector=aiohttp.TCPConnector(limit=0, limit_per_host=0))
            self._session_loop = loop
        return self._session

    async def aclose(self) -> None:
        if self._session is not None and not self._session.closed:
            await self._session.close()
        self._session = None

    def _body(self, request: LLMRequest) -> dict[str, Any]:
        model = self.model
        provider, slash, name = model.partition("/")
        body: dict[str, Any] = {"model": name if slash and provider in OPENAI_COMPATIBLE else model,
                                "messages": request.messages, "stream": True,
                                "stream_options": {"include_usage": True}}
        temperature = request.temperature if request.temperature is not None else self.temperature
        if temperature is not None:
            body["temperature"] = temperature
        if request.max_tokens:
            body["max_tokens"] = request.max_tokens
        if request.response_schema is not None and self.structured not in ("auto", "off"):
            body["response_format"] = response_format(request.response_schema, self.structured)
        body.update({key: self.extra[key] for key in _PASSED_EXTRA if key in self.extra})
        return body

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self._api_key or _env_key(self.model) or 'sk-no-key'}",
                "Content-Type": "application/json"}

    async def stream(self, request: LLMRequest) -> AsyncIterator[StreamPiece]:
        started = False
        try:
            usage = None
            async for text, chunk_usage in self._chunks(self._body(request)):
                if text:
                    started = True
                    yield StreamPiece(text=text)
                usage = chunk_usage or usage
            yield StreamPiece(usage=_usage(usage))
        except LLMError:
            raise
        except Exception as exc:
            raise to_llm_error(exc, self.model, started) from exc

    async def _chunks(self, body: dict[str, Any]) -> AsyncIterator[tuple[str, Any]]:
        """(text, usage or None) for each ``data:`` event of the stream."""
        import aiohttp

        try:
            async with self._get_session().post(f"{self.api_base}/chat/completions", data=_encode(body),
                                                headers=self._headers()) as response:
                if response.status != 200:
                    raise _status_error(response.status, (await response.text())[:300], self.model)
                lines = LineSplitter()
                async for received in response.content.iter_any():  # one await per network read
                    for line in lines.feed(received):
                        event = _event(line)
                        if event is _DONE:
                            return
                        if event is not None:
                            yield event
                for line in lines.finish():
                    event = _event(line)
                    if event is _DONE:
                        return
                    if event is not None:
                        yield event
                raise ConnectionResetError("the stream ended before [DONE]")
        except aiohttp.ClientError as exc:  # a refused call or a dropped stream: to_llm_error tells them apart
            raise ConnectionError(f"{type(exc).__name__}: {exc}") from exc


_DONE: tuple[str, Any] = ("", None)  # the stream's ``data: [DONE]``


def _encode(body: dict[str, Any]) -> bytes:
    """The request body as JSON (UTF-8), encoded in Rust: a third of ``json.dumps``'s time for a prompt of a few
    thousand characters, which aiohttp's ``json=`` pays on every call.  Text Python holds but UTF-8 cannot (a
    lone surrogate) is escaped as ``json.dumps`` escapes it."""
    try:
        return pydantic_core.to_json(body)
    except pydantic_core.PydanticSerializationError:
        return json.dumps(body).encode("ascii")


def _event(line: bytes) -> tuple[str, Any] | None:
    """(text, usage or None) of a ``data:`` line, :data:`_DONE` at its end, ``None`` for other lines."""
    if not line.startswith(b"data:"):
        return None
    data = line[5:].strip()
    if data == b"[DONE]":
        return _DONE
    chunk = _loads(data)
    choices = chunk.get("choices") or []
    delta = (choices[0].get("delta") or {}).get("content") or "" if choices else ""
    return delta, chunk.get("usage")


def _loads(data: bytes) -> Any:
    """``json.loads(data)``, parsed in Rust first (a quarter of its time for a stream chunk); what that parser
    refuses (a lone surrogate escaped in a string, which ``json`` accepts) is left to ``json.loads`` to read or
    refuse, so a line reads as ``json.loads`` reads it."""
    try:
        return pydantic_core.from_json(data)
    except ValueError:
        return json.loads(data)


class LineSplitter:
    """The stripped lines of an event stream, split here from whatever bytes have arrived (aiohttp's own
    line reader costs a coroutine and a buffer scan per line).  A line longer than
    :data:`MAX_LINE_BYTES` is refused, as aiohttp's reader refuses it.  A plain object, not an async
    generator: a stream left at ``[DONE]`` leaves nothing for the event loop to finalize."""

    def __init__(self) -> None:
        self._pending = b""

    def feed(self, received: bytes) -> list[bytes]:
        *lines, self._pending = (self._pending + received).split(b"\n")
        if len(self._pending) > MAX_LINE_BYTES or any(len(line) > MAX_LINE_BYTES for line in lines):
            raise ValueError(f"a line of the event stream is longer than {MAX_LINE_BYTES:,} bytes")
        return [line.strip() for line in lines]

    def finish(self) -> list[bytes]:
        """The last line, when the stream did not end with a newline."""
        last, self._pending = self._pending.strip(), b""
        return [last] if last else []


def _status_error(status: int, body: str, provider: str) -> LLMError:
    kind = _STATUS_KINDS.get(status, "server_error" if status >= 500 else "other")
    return LLMError(kind, provider, f"HTTP {status}: {_message(body)}")


def _usage(usage: Any) -> Usage:
    if not usage:
        return Usage()
    details = usage.get("prompt_tokens_details") or {}
    return Usage(prompt_tokens=int(usage.get("prompt_tokens") or 0),
                 completion_tokens=int(usage.get("completion_tokens") or 0),
                 cached_tokens=int(details.get("cached_tokens") or 0))


def _env_key(model: str) -> str | None:
    """The key litellm would read for this model: ``OPENAI_API_KEY`` for ``openai/…``, and so on."""
    provider = model.split("/", 1)[0] if "/" in model else "openai"
    return os.environ.get(f"{provider.upper()}_API_KEY")


def _message(body: str) -> str:
    try:
        error = json.loads(body).get("error")
        return str(error.get("message") if isinstance(error, dict) else error or body)
    except (ValueError, AttributeError):
        return body
