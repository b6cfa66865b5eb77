"""``replay:TRANSCRIPT``: serve the raw replies recorded in a transcript, in order.

With the same inputs, the same replies give the same events, so a recorded
class can be re-run exactly (``maic replay --check`` uses this to find the first
event that a prompt or director change altered).  A recorded failure is served
again as the same kind of :class:`LLMError`; a call that the learner
interrupted serves its partial text and is then cancelled again.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..jsonl import read_json_lines
from .port import LLMError, LLMRequest, StreamPiece
from .recording import usage_from

CHUNK = 8


def read_call_records(path: Path) -> list[dict[str, Any]]:
    """The ``llm_call`` lines of a transcript (a cut-off last line is ignored)."""
    lines, _ = read_json_lines(path, "transcript")
    if not lines or not isinstance(lines[0][1], dict) or lines[0][1].get("kind") != "header":
        raise InputError(f"{path}: not a maic transcript (no header line)")
    return [entry for _, entry in lines if isinstance(entry, dict) and entry.get("kind") == "llm_call"]


class ReplayLLM:
    def __init__(self, records: list[dict[str, Any]], *, name: str = "replay") -> None:
        self.records = records
        self.model = name
        self.position = 0
        self.calls: list[LLMRequest] = []

    @classmethod
    def from_file(cls, path: Path) -> ReplayLLM:
        return cls(read_call_records(path), name=f"replay:{path}")

    async def stream(self, request: LLMRequest) -> AsyncIterator[StreamPiece]:
        self.calls.append(request)
        if self.position >= len(self.records):
            raise LLMError("script", self.model, f"all {len(self.records)} recorded replies are used up "
                           f"(call {len(self.calls)}, a {request.purpose} call)")
        record = self.records[self.position]
        self.position += 1
        reply = record.get("reply", "")
        for start in range(0, len(reply), CHUNK):
            yield StreamPiece(text=reply[start:start + CHUNK])
        kind = record.get("error_kind")
        if kind == "cancelled":  # the learner interrupted here: interrupt the replay the same way
            raise asyncio.CancelledError
        if kind:
            raise LLMError(kind, self.model, record.get("error") or kind)
        yield StreamPiece(usage=usage_from(record.get("usage") or {}))
