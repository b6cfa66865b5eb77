"""``replay:TRANSCRIPT``: serve the raw replies recorded in a transcript, in order.

With the same inputs, the same replies give the same events, so a recorded
class can be re-run exactly (``maic replay --check`` uses this to find the first
event that a prompt or director change altered).  A recorded failure is served
again as the same kind of :class:`LLMError`; a call that the learner
interrupted serves its partial text and is then cancelled again.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from ..errors import InputError
from .port import LLMError, LLMRequest, StreamPiece
from .recording import usage_from

CHUNK = 8


def read_call_records(path: Path) -> list[dict[str, Any]]:
    """The ``llm_call`` lines of a transcript (a damaged last line is ignored)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise InputError(f"{path}: cannot read transcript: {exc.strerror or exc}") from None
    records = []
    for number, line in enumerate(lines, 1):
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            if number == len(lines):
                break
            raise InputError(f"{path}:{number}: not a JSON line") from None
        if number == 1 and entry.get("kind") != "header":
            raise InputError(f"{path}: not a maic transcript (no header line)")
        if entry.get("kind") == "llm_call":
            records.append(entry)
    return records


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
