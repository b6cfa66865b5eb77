"""The litellm client: the only module that imports litellm, and only when first used.

Importing litellm takes seconds and, without ``LITELLM_LOCAL_MODEL_COST_MAP``,
fetches a price list from the internet; :func:`import_litellm` sets that
variable first and silences litellm's own banners.  Calls stream with usage
reported; every provider exception becomes one :class:`LLMError` line.  One
call is one try: retries are :class:`~maic_cli.llm.retrying.RetryingClient`'s.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from typing import Any

from .openai_compat import check_structured_mode, response_format, to_llm_error
from .port import LLMError, LLMRequest, StreamPiece, Usage


def import_litellm() -> Any:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("LITELLM_LOG", "ERROR")
    import litellm

    litellm.suppress_debug_info = True
    litellm.telemetry = False
    litellm.drop_params = True  # e.g. stream_options for a provider that has none
    return litellm


class LitellmClient:
    """Any litellm model string; ``api_base``/``api_key`` for OpenAI-compatible servers."""

    def __init__(self, model: str, *, api_base: str | None = None, api_key: str | None = None,
                 temperature: float | None = None, timeout: float = 120.0,
                 extra: dict[str, Any] | None = None, structured: str = "auto") -> None:
        self.model = model
        self.api_base = api_base
        self._api_key = api_key
        self.temperature = temperature
        self.timeout = timeout
        self.extra = dict(extra or {})  # e.g. reasoning_effort, thinking, top_p
        self.structured = check_structured_mode(structured)
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
        """Stream one call (one try); any failure is raised as an :class:`LLMError`."""
        kwargs = self._kwargs(request, self._structured_mode())
        started = False
        try:
            usage = None
            async for text, chunk_usage in self._chunks(kwargs):
                if text:
                    started = True
                    yield StreamPiece(text=text)
                usage = chunk_usage or usage
            yield StreamPiece(usage=self._usage(usage))
        except LLMError:
            raise
        except Exception as exc:
            raise to_llm_error(exc, self.model, started) from exc

    async def _chunks(self, kwargs: dict[str, Any]) -> AsyncIterator[tuple[str, Any]]:
        """(text, usage or None) for each streamed chunk."""
        response = await self._complete(kwargs)
        try:
            async for chunk in response:
                yield _delta_text(chunk), getattr(chunk, "usage", None)
        finally:  # a cancelled call (its client went away) closes its connection now, not when collected
            close = getattr(response, "aclose", None)
            if close is not None:
                await close()

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
