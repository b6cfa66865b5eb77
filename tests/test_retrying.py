"""Retries as a wrapper client; closing as an optional part of the LLM protocol; what make_llm builds."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from maic_cli.llm.direct import DirectClient
from maic_cli.llm.factory import make_llm
from maic_cli.llm.litellm_client import LitellmClient
from maic_cli.llm.port import ClosableLLM, LLMError, LLMRequest, StreamPiece, close_llm
from maic_cli.llm.recording import RecordingLLM
from maic_cli.llm.retrying import MAX_BACKOFF, RetryingClient
from maic_cli.llm.scripted import ScriptedLLM, ScriptedReply
from maic_cli.llm.spec import ModelSpec
from maic_cli.testing.openai_server import LoopbackOpenAIServer

REQUEST = LLMRequest(messages=[{"role": "user", "content": "hi"}])


def fault(kind: str) -> ScriptedReply:
    return ScriptedReply(error=kind)  # type: ignore[arg-type]


class Waits:
    """Records the backoff delays instead of sleeping."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)


def collect(client: RetryingClient) -> str:
    async def run() -> str:
        return "".join([piece.text async for piece in client.stream(REQUEST)])

    return asyncio.run(run())


def test_rate_limits_use_their_own_budget_with_growing_backoff() -> None:
    inner = ScriptedLLM([fault("rate_limit"), fault("rate_limit"), fault("rate_limit"), "ok"])
    waits = Waits()
    client = RetryingClient(inner, retries=0, rate_limit_retries=3, backoff=1.0, sleep=waits)
    assert collect(client) == "ok"
    assert len(inner.calls) == 4
    for delay, base in zip(waits.delays, (1.0, 2.0, 4.0), strict=True):
        assert 0.8 * base <= delay <= 1.2 * base


def test_other_retryable_errors_stop_at_the_retry_limit() -> None:
    inner = ScriptedLLM([fault("server_error"), fault("timeout"), "never"])
    client = RetryingClient(inner, retries=1, rate_limit_retries=10, sleep=Waits())
    with pytest.raises(LLMError) as caught:
        collect(client)
    assert caught.value.kind == "timeout" and len(inner.calls) == 2


def test_auth_errors_are_not_retried() -> None:
    inner = ScriptedLLM([fault("auth"), "never"])
    with pytest.raises(LLMError):
        collect(RetryingClient(inner, retries=3, sleep=Waits()))
    assert len(inner.calls) == 1


class FailsAfterText:
    """Says something, then fails with a (normally retryable) server error."""

    model = "fails-after-text"

    def __init__(self) -> None:
        self.calls = 0

    async def stream(self, request: LLMRequest) -> AsyncIterator[StreamPiece]:
        self.calls += 1
        yield StreamPiece(text="Half an ans")
        raise LLMError("server_error", self.model, "server error (HTTP 500)")


def test_no_retry_once_text_has_arrived() -> None:
    inner = FailsAfterText()
    with pytest.raises(LLMError):
        collect(RetryingClient(inner, retries=3, sleep=Waits()))
    assert inner.calls == 1


def test_backoff_is_capped() -> None:
    client = RetryingClient(ScriptedLLM([]), backoff=1.0)
    assert client._delay(30) <= MAX_BACKOFF * 1.2


def test_closing_is_optional_and_reaches_through_wrappers(loopback_server: LoopbackOpenAIServer) -> None:
    asyncio.run(close_llm(ScriptedLLM([])))  # holds nothing: a no-op, no attribute error
    assert not isinstance(ScriptedLLM([]), ClosableLLM)
    loopback_server.enqueue("[]")
    direct = DirectClient("openai/loopback-model", api_base=loopback_server.base_url)
    wrapped = RecordingLLM(RetryingClient(direct), lambda record: None)

    async def call_then_close() -> bool:
        async for _ in wrapped.stream(REQUEST):
            pass
        session = direct._session
        await close_llm(wrapped)
        return session.closed

    assert asyncio.run(call_then_close())


def test_make_llm_wraps_provider_clients_in_retries() -> None:
    llm = make_llm(ModelSpec.parse("openai/some-model"), rate_limit_retries=10)
    assert isinstance(llm, RetryingClient) and isinstance(llm.inner, LitellmClient)
    assert (llm.retries, llm.rate_limit_retries, llm.model) == (3, 10, "openai/some-model")
    direct = make_llm(ModelSpec.parse("openai/some-model", client="direct"), api_base="http://127.0.0.1:9/v1")
    assert isinstance(direct, RetryingClient) and isinstance(direct.inner, DirectClient)
    assert not isinstance(direct.inner, LitellmClient)  # shared code by functions, not inheritance
