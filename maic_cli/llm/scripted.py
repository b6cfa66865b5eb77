"""Fakes that ship with the package: scripted replies, or a function of the call.

``scripted:FILE`` serves a YAML/JSON list of raw replies, in order,
to every director and agent call, streamed in small chunks.  An entry is the
reply string, or a mapping with ``reply`` and optional ``chunk_size``,
``chunk_delay`` (seconds), ``error`` (``rate_limit``, ``server_error``,
``auth``, ``timeout``) and ``disconnect_after`` (characters).  Faults surface
as the same :class:`LLMError` kinds and words as the litellm client's.  Every
call is recorded in ``calls``; running out of replies is a clear error.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterable
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from ..yamlfile import load_model
from .port import LLMError, LLMRequest, StreamPiece, Usage, estimate_tokens, prompt_estimate

FAULT_DETAILS = {
    "rate_limit": "rate limited (HTTP 429)",
    "server_error": "server error (HTTP 500)",
    "auth": "authentication failed (HTTP 401)",
    "timeout": "request timed out",
}


def dropped_detail(characters: int) -> str:
    return f"stream dropped after {characters} characters"


class ScriptedReply(BaseModel):
    model_config = ConfigDict(extra="forbid")

    reply: str = ""
    chunk_size: int = Field(default=4, ge=1)
    chunk_delay: float = Field(default=0.0, ge=0)
    error: Literal["rate_limit", "server_error", "auth", "timeout"] | None = None
    disconnect_after: int | None = Field(default=None, ge=0)


SCRIPT_ADAPTER: TypeAdapter[list[ScriptedReply | str]] = TypeAdapter(list[ScriptedReply | str])


async def stream_reply(reply: ScriptedReply, provider: str, prompt_tokens: int = 0) -> AsyncIterator[StreamPiece]:
    """Stream one scripted reply, raising its scripted fault where it says."""
    if reply.error is not None:
        if reply.chunk_delay:
            await asyncio.sleep(reply.chunk_delay)
        raise LLMError(reply.error, provider, FAULT_DETAILS[reply.error])
    text = reply.reply
    limit = len(text) if reply.disconnect_after is None else min(reply.disconnect_after, len(text))
    for start in range(0, limit, reply.chunk_size):
        if reply.chunk_delay:
            await asyncio.sleep(reply.chunk_delay)
        yield StreamPiece(text=text[start:min(start + reply.chunk_size, limit)])
    if reply.disconnect_after is not None and reply.disconnect_after < len(text):
        raise LLMError("stream_dropped", provider, dropped_detail(limit))
    yield StreamPiece(usage=Usage(prompt_tokens=prompt_tokens, completion_tokens=estimate_tokens(text)))


class ScriptedLLM:
    """Serves replies in order; fails loudly when they run out."""

    def __init__(self, replies: Iterable[ScriptedReply | str], *, name: str = "scripted") -> None:
        self._replies = deque(r if isinstance(r, ScriptedReply) else ScriptedReply(reply=r)
                              for r in replies)
        self.total = len(self._replies)
        self.model = name
        self.calls: list[LLMRequest] = []

    @classmethod
    def from_file(cls, path: Path) -> ScriptedLLM:
        replies = load_model(path, SCRIPT_ADAPTER)
        return cls(replies, name=f"scripted:{path}")

    @property
    def remaining(self) -> int:
        return len(self._replies)

    def enqueue(self, *replies: ScriptedReply | str) -> None:
        self._replies.extend(r if isinstance(r, ScriptedReply) else ScriptedReply(reply=r)
                             for r in replies)
        self.total += len(replies)

    async def stream(self, request: LLMRequest) -> AsyncIterator[StreamPiece]:
        self.calls.append(request)
        if not self._replies:
            raise LLMError("script", self.model,
                           f"all {self.total} scripted replies are used up (call {len(self.calls)}, "
                           f"a {request.purpose} call)")
        reply = self._replies.popleft()
        async for piece in stream_reply(reply, self.model, prompt_estimate(request)):
            yield piece


class FunctionLLM:
    """Answers each call with ``respond(request)``: a reply string or a ScriptedReply."""

    def __init__(self, respond: Callable[[LLMRequest], str | ScriptedReply],
                 *, name: str = "function") -> None:
        self._respond = respond
        self.model = name
        self.calls: list[LLMRequest] = []

    async def stream(self, request: LLMRequest) -> AsyncIterator[StreamPiece]:
        self.calls.append(request)
        reply = self._respond(request)
        if isinstance(reply, str):
            reply = ScriptedReply(reply=reply)
        async for piece in stream_reply(reply, self.model, prompt_estimate(request)):
            yield piece
