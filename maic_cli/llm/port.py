"""The LLM port: one small Protocol with one streaming call.

The engine talks to a model only through :class:`LLMClient`.  Implementations:
``litellm_client`` (the only module that imports litellm), ``scripted``
(canned replies, with scriptable faults) and ``replay`` (replies recorded in a
transcript).  Every provider failure surfaces as :class:`LLMError`, one line
the user can act on.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from ..errors import MaicError

ErrorKind = Literal["auth", "rate_limit", "timeout", "server_error", "connection",
                    "stream_dropped", "bad_request", "not_found", "context_window",
                    "script", "other"]

RETRYABLE: frozenset[str] = frozenset({"rate_limit", "server_error", "connection", "timeout"})

_ADVICE: dict[str, str] = {
    "auth": "check the API key (e.g. OPENAI_API_KEY) for this provider",
    "rate_limit": "wait a moment and retry, or lower --concurrency",
    "timeout": "the provider is slow or unreachable; retry, or raise the timeout",
    "server_error": "the provider failed; retry later",
    "connection": "check --api-base and your network",
    "stream_dropped": "the reply was cut off; the partial message was kept",
    "bad_request": "the provider refused the request; check the model name and options",
    "not_found": "check the model name (litellm form, e.g. openai/gpt-4o-mini)",
    "context_window": "the conversation is too long for this model; start a new session",
    "script": "add replies to the scripted file",
    "other": "see the message above",
}


class LLMError(MaicError):
    """A model call failed.  ``str()`` is one line: provider, what, what to do."""

    def __init__(self, kind: ErrorKind, provider: str, detail: str) -> None:
        self.kind = kind
        self.provider = provider
        self.detail = " ".join(detail.split())[:300]
        super().__init__(f"{provider}: {self.detail} ({_ADVICE.get(kind, '')})")

    @property
    def retryable(self) -> bool:
        return self.kind in RETRYABLE


@dataclass
class LLMRequest:
    """One call: the chat messages plus what the engine knows about its purpose."""

    messages: list[dict[str, str]]
    purpose: Literal["director", "agent"] = "agent"
    agent_id: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    # A JSON schema the reply must follow, for backends that can constrain decoding.
    response_schema: dict[str, Any] | None = None


@dataclass
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    cost: float = 0.0


@dataclass
class StreamPiece:
    """A piece of a streamed reply: text, or (last) the call's usage."""

    text: str = ""
    usage: Usage | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        try:
            self.text.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate (a reply cut inside an emoji): no file or terminal takes it
            self.text = "".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in self.text)


@runtime_checkable
class LLMClient(Protocol):
    model: str

    def stream(self, request: LLMRequest) -> AsyncIterator[StreamPiece]:
        """Yield the reply's text as it arrives; raise :class:`LLMError` on failure."""
        ...
