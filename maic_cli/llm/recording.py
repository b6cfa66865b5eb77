"""A decorator for any LLM client that reports each call when it ends.

The report (:class:`CallRecord`) holds what a transcript needs for a
deterministic replay: the messages sent, the raw reply text, usage, time to
first token, duration, and the error if the call failed or was cancelled.  A call cut
off before its usage came (a judge reply past its limit, Ctrl-C) has its tokens estimated
(prompt and the characters received, as the scripted model's estimate), so it is counted.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from .port import LLMClient, LLMError, LLMRequest, StreamPiece, Usage, close_llm, estimate_tokens, prompt_estimate


@dataclass
class CallRecord:
    purpose: str
    agent_id: str | None
    messages: list[dict[str, str]]
    reply: str = ""
    usage: dict[str, Any] = field(default_factory=dict)
    ttft: float | None = None
    duration: float = 0.0
    error_kind: str | None = None
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)  # shallow: asdict() would deep-copy every message


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
        try:
            async for piece in self.inner.stream(request):
                if piece.text:
                    if record.ttft is None:
                        record.ttft = round(time.monotonic() - start, 4)
                    parts.append(piece.text)
                if piece.usage is not None:
                    record.usage = asdict(piece.usage)
                yield piece
        except LLMError as exc:
            record.error_kind, record.error = exc.kind, str(exc)
            raise
        except (asyncio.CancelledError, GeneratorExit):
            record.error_kind, record.error = "cancelled", "the call was cancelled"
            raise
        finally:
            record.reply = "".join(parts)
            if record.error_kind == "cancelled" and not record.usage:  # cut off before the usage came: estimated
                record.usage = asdict(Usage(prompt_tokens=prompt_estimate(request),
                                            completion_tokens=estimate_tokens(record.reply)))
            record.duration = round(time.monotonic() - start, 4)
            self.on_call(record)

    async def aclose(self) -> None:
        await close_llm(self.inner)
