"""A thin streaming client for OpenAI-compatible servers (``--client direct``).

Why it exists: litellm costs about 18 ms of CPU per streamed call here (the
openai SDK about 5 ms, a bare aiohttp request under 1 ms), which caps a batch
against a self-hosted server (vLLM, llama.cpp, Ollama's OpenAI API) at roughly
50 calls a second per core — measured with ``tests/benchmarks/batch_bench.py``.
For such servers this client posts ``/chat/completions`` with aiohttp (already
installed with litellm) and reads the ``text/event-stream`` itself.  Retries,
backoff and error wording are the litellm client's (it inherits them);
providers and Routers still go through litellm.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from typing import Any

from ..errors import InputError
from .litellm_client import LitellmClient
from .port import ErrorKind, LLMError, Usage

_STATUS_KINDS: dict[int, ErrorKind] = {401: "auth", 403: "auth", 404: "not_found", 408: "timeout",
                                       429: "rate_limit", 400: "bad_request", 413: "context_window",
                                       422: "bad_request"}


class DirectClient(LitellmClient):
    def __init__(self, model: str, *, api_base: str | None = None, **kwargs: Any) -> None:
        if not api_base:
            raise InputError("--client direct talks to an OpenAI-compatible server: give its --api-base")
        super().__init__(model, api_base=api_base.rstrip("/"), **kwargs)
        self._session: Any = None  # one aiohttp session (and its kept-alive connections) per event loop
        self._session_loop: Any = None

    def _get_session(self) -> Any:
        import asyncio

        import aiohttp  # noqa: PLC0415 - only batches against local servers need it

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

    def _structured_mode(self) -> str:
        return "off" if self.structured == "auto" else self.structured  # no way to ask the server

    def _body(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        model = kwargs["model"]
        body = {"model": model.split("/", 1)[1] if model.startswith("openai/") else model,
                "messages": kwargs["messages"], "stream": True, "stream_options": {"include_usage": True}}
        for key in ("temperature", "max_tokens", "response_format", "seed", "top_p"):
            if key in kwargs:
                body[key] = kwargs[key]
        return body

    async def _chunks(self, kwargs: dict[str, Any]) -> AsyncIterator[tuple[str, Any]]:
        import aiohttp  # noqa: PLC0415 - only batches against local servers need it

        headers = {"Authorization": f"Bearer {kwargs.get('api_key') or _env_key(self.model) or 'sk-no-key'}"}
        provider = self.model
        try:
            async with self._get_session().post(f"{self.api_base}/chat/completions", json=self._body(kwargs),
                                                headers=headers) as response:
                if response.status != 200:
                    text = (await response.text())[:300]
                    kind = _STATUS_KINDS.get(response.status, "server_error" if response.status >= 500 else "other")
                    raise LLMError(kind, provider, f"HTTP {response.status}: {_message(text)}")
                finished = False
                async for raw in response.content:
                    line = raw.strip()
                    if not line.startswith(b"data:"):
                        continue
                    data = line[5:].strip()
                    if data == b"[DONE]":
                        finished = True
                        break
                    chunk = json.loads(data)
                    choices = chunk.get("choices") or []
                    delta = (choices[0].get("delta") or {}).get("content") or "" if choices else ""
                    yield delta, chunk.get("usage")
                if not finished:
                    raise ConnectionResetError("the stream ended before [DONE]")
        except aiohttp.ClientError as exc:  # the shared loop tells a refused call from a dropped stream
            raise ConnectionError(f"{type(exc).__name__}: {exc}") from exc

    def _usage(self, usage: Any) -> Usage:
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
