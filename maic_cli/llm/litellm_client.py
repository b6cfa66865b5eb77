"""The litellm client: the only module that imports litellm, and only when first used.

Importing litellm takes seconds and, without ``LITELLM_LOCAL_MODEL_COST_MAP``,
fetches a price list from the internet; :func:`import_litellm` sets that
variable first and silences litellm's own banners.  Calls stream with usage
reported; 429, 5xx, timeouts and connection errors are retried with backoff as
long as no token has arrived; every provider exception becomes one
:class:`LLMError` line.
"""

from __future__ import annotations

import asyncio
import os
import random
import re
from collections.abc import AsyncIterator
from typing import Any

from .port import ErrorKind, LLMError, LLMRequest, StreamPiece, Usage

MAX_BACKOFF = 20.0  # seconds between two tries at most
_PREFIX = re.compile(r"^(?:litellm\.)?(?:\w+(?:Error|Exception)\s*[:-]\s*)+")


def import_litellm() -> Any:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("LITELLM_LOG", "ERROR")
    import litellm  # noqa: PLC0415 - deliberately lazy: 4-6 s and ~200 MB

    litellm.suppress_debug_info = True
    litellm.telemetry = False
    litellm.drop_params = True  # e.g. stream_options for a provider that has none
    return litellm


def _detail(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    text = _PREFIX.sub("", text)
    text = re.sub(r"\b\w+Exception - ", "", text)
    return text or type(exc).__name__


def classify(exc: BaseException, started: bool) -> ErrorKind:
    """Map a litellm (or openai/httpx) exception to an :data:`ErrorKind`."""
    names = {cls.__name__ for cls in type(exc).__mro__}
    if started:
        return "stream_dropped"
    message = str(exc).lower()
    if "connection error" in message:  # litellm reports a refused connection as a 500
        return "connection"
    if "missing credentials" in message or ("api_key" in message and "pass" in message):
        return "auth"
    table: list[tuple[str, ErrorKind]] = [
        ("AuthenticationError", "auth"), ("PermissionDeniedError", "auth"),
        ("RateLimitError", "rate_limit"), ("Timeout", "timeout"), ("TimeoutError", "timeout"),
        ("APITimeoutError", "timeout"), ("ContextWindowExceededError", "context_window"),
        ("NotFoundError", "not_found"), ("BadRequestError", "bad_request"),
        ("UnprocessableEntityError", "bad_request"), ("UnsupportedParamsError", "bad_request"),
        ("MidStreamFallbackError", "connection"), ("APIConnectionError", "connection"),
        ("InternalServerError", "server_error"), ("ServiceUnavailableError", "server_error"),
        ("BadGatewayError", "server_error"), ("APIError", "server_error"),
    ]
    for name, kind in table:
        if name in names:
            return kind
    if isinstance(exc, (ConnectionError, OSError)):
        return "connection"
    return "other"


_KIND_WORDS = {
    "auth": "authentication failed", "rate_limit": "rate limited", "timeout": "request timed out",
    "server_error": "server error", "connection": "cannot connect", "stream_dropped": "stream dropped",
    "bad_request": "bad request", "not_found": "model not found", "context_window": "context too long",
}


def to_llm_error(exc: BaseException, provider: str, started: bool) -> LLMError:
    kind = classify(exc, started)
    status = getattr(exc, "status_code", None)
    words = _KIND_WORDS.get(kind, "error")
    code = f" (HTTP {status})" if isinstance(status, int) and kind not in ("stream_dropped", "connection") else ""
    return LLMError(kind, provider, f"{words}{code}: {_detail(exc)}")


STRUCTURED_MODES = ("auto", "off", "json_schema", "json_object")


def response_format(schema: dict[str, Any], mode: str) -> dict[str, Any]:
    """The ``response_format`` for a reply schema.

    ``json_schema`` is OpenAI's form (the top level must be an object, so an array
    reply is wrapped as ``{"items": [...]}`` — the streaming parser skips to the
    array either way); ``json_object`` carries the schema the way llama.cpp's
    server takes it.
    """
    if mode == "json_object":
        return {"type": "json_object", "schema": schema}
    if schema.get("type") != "object":
        schema = {"type": "object", "properties": {"items": schema}, "required": ["items"],
                  "additionalProperties": False}
    return {"type": "json_schema", "json_schema": {"name": "maic_reply", "schema": schema, "strict": False}}


class LitellmClient:
    """Any litellm model string; ``api_base``/``api_key`` for OpenAI-compatible servers."""

    def __init__(self, model: str, *, api_base: str | None = None, api_key: str | None = None,
                 temperature: float | None = None, timeout: float = 120.0, retries: int = 3,
                 backoff: float = 1.0, extra: dict[str, Any] | None = None,
                 structured: str = "auto", rate_limit_retries: int | None = None) -> None:
        self.model = model
        self.api_base = api_base
        self._api_key = api_key
        self.temperature = temperature
        self.timeout = timeout
        self.retries = retries
        self.rate_limit_retries = retries if rate_limit_retries is None else rate_limit_retries
        self.backoff = backoff
        self.extra = dict(extra or {})  # e.g. reasoning_effort, thinking, top_p
        if structured not in STRUCTURED_MODES:
            raise ValueError(f"structured must be one of {', '.join(STRUCTURED_MODES)}")
        self.structured = structured
        self._supports_schema: bool | None = None

    def _structured_mode(self) -> str:
        if self.structured != "auto":
            return self.structured
        if self._supports_schema is None:
            try:
                self._supports_schema = bool(import_litellm().supports_response_schema(model=self.model))
            except Exception:  # noqa: BLE001 - unknown models: no structured output
                self._supports_schema = False
        return "json_schema" if self._supports_schema else "off"

    def _kwargs(self, request: LLMRequest, mode: str = "off") -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "model": self.model, "messages": request.messages, "stream": True,
            "stream_options": {"include_usage": True}, "timeout": self.timeout,
            "num_retries": 0, "max_retries": 0, **self.extra,
        }
        if self.api_base:
            kwargs["api_base"] = self.api_base
        if self._api_key:
            kwargs["api_key"] = self._api_key
        elif self.api_base and self.model.startswith("openai/") and not os.environ.get("OPENAI_API_KEY"):
            kwargs["api_key"] = "sk-no-key"  # local OpenAI-compatible servers rarely check keys
        temperature = request.temperature if request.temperature is not None else self.temperature
        if temperature is not None:
            kwargs["temperature"] = temperature
        if request.max_tokens:
            kwargs["max_tokens"] = request.max_tokens
        if request.response_schema is not None and mode != "off":
            kwargs["response_format"] = response_format(request.response_schema, mode)
        return kwargs

    async def stream(self, request: LLMRequest) -> AsyncIterator[StreamPiece]:
        """Stream one call; retry with backoff (429, 5xx, timeouts, connection) until a token arrives."""
        kwargs = self._kwargs(request, self._structured_mode())
        attempt = 0
        while True:
            started = False
            try:
                usage = None
                async for text, chunk_usage in self._chunks(kwargs):
                    if text:
                        started = True
                        yield StreamPiece(text=text)
                    usage = chunk_usage or usage
                yield StreamPiece(usage=self._usage(usage))
                return
            except Exception as exc:  # noqa: BLE001 - every provider failure becomes an LLMError
                error = exc if isinstance(exc, LLMError) else to_llm_error(exc, self.model, started)
                limit = self.rate_limit_retries if error.kind == "rate_limit" else self.retries
                if started or not error.retryable or attempt >= limit:
                    raise error from exc
                attempt += 1
                delay = min(self.backoff * (2 ** (attempt - 1)), MAX_BACKOFF)
                await asyncio.sleep(delay * random.uniform(0.8, 1.2))

    async def _chunks(self, kwargs: dict[str, Any]) -> AsyncIterator[tuple[str, Any]]:
        """(text, usage or None) for each streamed chunk."""
        response = await self._complete(kwargs)
        async for chunk in response:
            yield _delta_text(chunk), getattr(chunk, "usage", None)

    async def _complete(self, kwargs: dict[str, Any]) -> Any:
        """The streaming response of one call (a Router overrides this)."""
        return await import_litellm().acompletion(**kwargs)

    def _usage(self, usage: Any) -> Usage:
        if usage is None:
            return Usage()
        prompt = int(getattr(usage, "prompt_tokens", 0) or 0)
        completion = int(getattr(usage, "completion_tokens", 0) or 0)
        details = getattr(usage, "prompt_tokens_details", None)
        cached = int(getattr(details, "cached_tokens", 0) or 0) if details is not None else 0
        try:
            prompt_cost, completion_cost = import_litellm().cost_per_token(
                model=self.model, prompt_tokens=prompt, completion_tokens=completion)
            cost = float(prompt_cost + completion_cost)
        except Exception:  # noqa: BLE001 - unknown models simply have no price
            cost = 0.0
        return Usage(prompt_tokens=prompt, completion_tokens=completion, cached_tokens=cached, cost=cost)


def _delta_text(chunk: Any) -> str:
    choices = getattr(chunk, "choices", None) or []
    if not choices:
        return ""
    delta = getattr(choices[0], "delta", None)
    return (getattr(delta, "content", None) or "") if delta is not None else ""
