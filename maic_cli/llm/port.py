"""The LLM port: one small Protocol with one streaming call.

The engine talks to a model only through :class:`LLMClient`.  Implementations:
``litellm_client`` (the only module that imports litellm), ``direct``,
``local``, ``scripted`` (canned replies, with scriptable faults), ``demo`` and
``replay`` (replies recorded in a transcript); ``retrying`` and ``recording``
wrap any of them.  Every provider failure surfaces as :class:`LLMError`, one
line the user can act on.  A client that holds something open (connections)
also implements :class:`ClosableLLM`; :func:`close_llm` closes any client.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from ..errors import MaicError
from ..untrusted import clean, redact

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
    """A model call failed.  ``str()`` is one line: provider, what, what to do.

    The provider's text is cleaned of control sequences and redacted of API keys here,
    at the source, so events, transcripts, reports and screens never hold them.
    """

    def __init__(self, kind: ErrorKind, provider: str, detail: str) -> None:
        self.kind = kind
        self.provider = provider
        self.detail = redact(" ".join(clean(detail).split()))[:300]
        super().__init__(f"{provider}: {self.detail} ({_ADVICE.get(kind, '')})")

    @property
    def retryable(self) -> bool:
        return self.kind in RETRYABLE


@dataclass(frozen=True)
class TurnFacts:
    """What the engine knows about the turn a call belongs to.

    Real models read the prompt; fakes (the demo model, the test server's
    classroom mode) act on these facts instead, so that rewording a prompt does
    not change what they do.  Clients never send them to a provider.
    """

    turn: int = 0  # agent turns already taken this round
    spoken: tuple[str, ...] = ()  # agents who spoke this round, in order
    eligible: tuple[str, ...] = ()  # director calls: the agents it may pick now
    may_hand_back: bool = True  # director calls: "USER"/"END" allowed (not before anyone spoke)
    learner_text: str | None = None  # the learner's latest message
    agent_role: str | None = None  # agent calls: the speaker's role


@dataclass
class LLMRequest:
    """One call: the chat messages plus what the engine knows about its purpose."""

    messages: list[dict[str, str]]
    # director and agent calls play the class; grade (a quiz answer against its rubric), generate (a step
    # of ``maic lesson new``), judge (a batch's turns against a rubric) and learner (a simulated learner) are
    # priced apart from it.
    purpose: Literal["director", "agent", "grade", "generate", "judge", "learner"] = "agent"
    agent_id: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    # A JSON schema the reply must follow, for backends that can constrain decoding.
    response_schema: dict[str, Any] | None = None
    facts: TurnFacts | None = None  # the turn's facts, for fakes; never sent to a provider


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


@runtime_checkable
class ClosableLLM(LLMClient, Protocol):
    """A client that holds something open (an HTTP session) until :meth:`aclose`."""

    async def aclose(self) -> None:
        """Release what the client holds; it may be used again afterwards (it reopens)."""
        ...


def estimate_tokens(text: str) -> int:
    """About how many tokens ``text`` is (4 characters each): for calls that report no usage."""
    return max(1, len(text) // 4) if text else 0


def prompt_estimate(request: LLMRequest) -> int:
    return sum(estimate_tokens(m["content"]) for m in request.messages)


async def close_llm(client: LLMClient) -> None:
    """Close ``client`` if it holds anything open; a no-op for every other client."""
    if isinstance(client, ClosableLLM):
        await client.aclose()


async def read_reply(llm: LLMClient, request: LLMRequest, limit: int,
                     on_usage: Callable[[Usage], None] | None = None) -> str:
    """A whole reply to a structured call (a grade, a verdict, a lesson step), read to at most about
    ``limit`` characters: a server that ignores ``max_tokens`` is stopped there, not read (and paid for)
    forever.  The stream is closed whatever happens; ``LLMError`` propagates."""
    parts: list[str] = []
    size = 0
    async with aclosing(llm.stream(request)) as stream:  # type: ignore[type-var]
        async for piece in stream:
            if piece.usage is not None and on_usage is not None:
                on_usage(piece.usage)
            parts.append(piece.text)
            size += len(piece.text)
            if size > limit:
                break
    return "".join(parts)
