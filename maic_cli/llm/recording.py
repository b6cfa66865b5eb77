"""One LLM call as maic records it (:class:`CallRecord`), and a decorator that records each call of any client.

:class:`CallRecord` is the one shape of a call everywhere: :class:`RecordingLLM` fills it as a call
streams, a transcript writes it as an ``llm_call`` line (store/transcript.py ``CallLine`` adds the
line's ``kind`` and ``t``), ``replay:`` reads it back (llm/replay.py), and a batch's run result keeps
its numbers (evaluation/run_results.py ``CallStat.from_record``).  The field names are the ones on disk,
so every transcript ever written still loads.  A record read from a file is untrusted: the model
validates it (wrong types are refused with their field, ``inf``/``NaN`` never pass).

A record holds what a deterministic replay needs: the messages sent, the raw reply text, usage,
time to first token, duration, and the error if the call failed or was cancelled.  A call cut off
before its usage came (a judge reply past its limit, Ctrl-C) has its tokens estimated (prompt and
the characters received, as the scripted model's estimate), so it is counted.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from .port import LLMClient, LLMError, LLMRequest, StreamPiece, Usage, close_llm, estimate_tokens, prompt_estimate


class CallRecord(BaseModel):
    """One model call: what was sent, what came back, what it cost, how it ended (other keys of a
    file's line are ignored)."""

    model_config = ConfigDict(extra="ignore", allow_inf_nan=False)

    purpose: str = "agent"  # an LLMRequest purpose: director, agent, grade, generate, judge, learner
    agent_id: str | None = None
    messages: list[dict[str, Any]] = Field(default_factory=list)
    reply: str = ""
    usage: Usage = Field(default_factory=Usage)
    ttft: float | None = None  # seconds to the first token (None: no text came)
    duration: float = 0.0
    error_kind: str | None = None  # an LLMError kind, or "cancelled"
    error: str | None = None


_USAGE: TypeAdapter[Usage] = TypeAdapter(Usage)


def checked_usage(usage: Usage) -> Usage:
    """A copy of a client's usage, numbers checked (a client that reports ``"many"`` tokens: none counted)."""
    try:
        return _USAGE.validate_python(vars(usage))
    except ValidationError:
        return Usage()


class RecordingLLM:
    def __init__(self, inner: LLMClient, on_call: Callable[[CallRecord], None]) -> None:
        self.inner = inner
        self.model = inner.model
        self.on_call = on_call

    async def stream(self, request: LLMRequest) -> AsyncIterator[StreamPiece]:
        record = CallRecord(purpose=request.purpose, agent_id=request.agent_id,
                            messages=[dict(m) for m in request.messages])
        start = time.monotonic()
        parts: list[str] = []
        usage: Usage | None = None
        try:
            async for piece in self.inner.stream(request):
                if piece.text:
                    if record.ttft is None:
                        record.ttft = round(time.monotonic() - start, 4)
                    parts.append(piece.text)
                if piece.usage is not None:
                    usage = piece.usage
                yield piece
        except LLMError as exc:
            record.error_kind, record.error = exc.kind, str(exc)
            raise
        except (asyncio.CancelledError, GeneratorExit):
            record.error_kind, record.error = "cancelled", "the call was cancelled"
            raise
        finally:
            record.reply = "".join(parts)
            if usage is not None:
                record.usage = checked_usage(usage)
            elif record.error_kind == "cancelled":  # cut off before the usage came: estimated
                record.usage = Usage(prompt_tokens=prompt_estimate(request),
                                     completion_tokens=estimate_tokens(record.reply))
            record.duration = round(time.monotonic() - start, 4)
            self.on_call(record)

    async def aclose(self) -> None:
        await close_llm(self.inner)
