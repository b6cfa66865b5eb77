"""A wrapper client that retries a failed call before its first token.

Rate limits (429), server errors (5xx), timeouts and refused connections are
retried with exponential backoff (with jitter, at most :data:`MAX_BACKOFF`
seconds apart) as long as no text has arrived; once the reply has started, a
failure is passed on (the caller keeps the partial message).  Rate limits have
their own budget: a batch waits them out (``maic run`` allows ten) where other
errors fail fast.  Any client can be wrapped; :func:`maic_cli.llm.factory.make_llm`
wraps the litellm and direct clients.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Awaitable, Callable

from .port import LLMClient, LLMError, LLMRequest, StreamPiece, close_llm

MAX_BACKOFF = 20.0  # seconds between two tries at most
DEFAULT_RETRIES = 3


class RetryingClient:
    """``inner``, with ``retries`` more tries for retryable errors (``rate_limit_retries`` for 429s)."""

    def __init__(self, inner: LLMClient, *, retries: int = DEFAULT_RETRIES, rate_limit_retries: int | None = None,
                 backoff: float = 1.0, sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> None:
        self.inner = inner
        self.model = inner.model
        self.retries = retries
        self.rate_limit_retries = retries if rate_limit_retries is None else rate_limit_retries
        self.backoff = backoff
        self._sleep = sleep

    def _delay(self, attempt: int) -> float:
        """Seconds to wait before try ``attempt + 1`` (``attempt`` counts from 1)."""
        return min(self.backoff * 2.0 ** (attempt - 1), MAX_BACKOFF) * random.uniform(0.8, 1.2)

    def _may_retry(self, error: LLMError, attempt: int) -> bool:
        limit = self.rate_limit_retries if error.kind == "rate_limit" else self.retries
        return error.retryable and attempt < limit

    async def stream(self, request: LLMRequest) -> AsyncIterator[StreamPiece]:
        attempt = 0
        while True:
            started = False
            try:
                async for piece in self.inner.stream(request):
                    started = started or bool(piece.text)
                    yield piece
                return
            except LLMError as error:
                if started or not self._may_retry(error, attempt):
                    raise
                attempt += 1
                await self._sleep(self._delay(attempt))

    async def aclose(self) -> None:
        await close_llm(self.inner)
