"""``replay:TRANSCRIPT``: serve the raw replies recorded in a transcript, in order.

With the same inputs, the same replies give the same events, so a recorded
class can be re-run exactly (``maic replay --check`` uses this to find the first
event that a prompt or director change altered).  A recorded failure is served
again as the same kind of :class:`LLMError`; a call that the learner
interrupted serves its partial text and is then cancelled again.  Each recorded
call is validated (:class:`~.recording.CallRecord`, the one shape of a call): a wrong-typed
one is refused with its line, never served.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

from pydantic import ValidationError

from ..errors import InputError
from ..jsonl import read_json_lines
from .port import LLMError, LLMRequest, StreamPiece
from .recording import CallRecord

CHUNK = 8


def validation_problem(error: ValidationError, skip: int = 0) -> str:
    """``field: what is wrong`` for the first problem (its location without the first ``skip``
    steps, e.g. a union's tag).  No input values, and field names from the file are shown
    escaped (``ascii()``) unless plainly printable: the file may be hostile."""
    first = error.errors()[0]
    steps = [str(step) if str(step).isprintable() and len(str(step)) <= 40 else ascii(str(step)[:40])
             for step in first["loc"][skip:]]
    return f"{'.'.join(steps) or '(top level)'}: {first['msg']}"


def read_call_records(path: Path) -> list[CallRecord]:
    """The ``llm_call`` lines of a transcript (a cut-off last line is ignored)."""
    lines, _ = read_json_lines(path, "transcript")
    if not lines or not isinstance(lines[0][1], dict) or lines[0][1].get("kind") != "header":
        raise InputError(f"{path}: not a maic transcript (no header line)")
    records = []
    for number, entry in lines:
        if isinstance(entry, dict) and entry.get("kind") == "llm_call":
            try:
                records.append(CallRecord.model_validate(entry))
            except ValidationError as exc:
                raise InputError(f"{path}:{number}: llm_call: {validation_problem(exc)}") from None
    return records


class ReplayLLM:
    def __init__(self, records: Sequence[CallRecord], *, name: str = "replay") -> None:
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
        reply = record.reply
        for start in range(0, len(reply), CHUNK):
            yield StreamPiece(text=reply[start:start + CHUNK])
        kind = record.error_kind
        if kind == "cancelled":  # the learner interrupted here: interrupt the replay the same way
            raise asyncio.CancelledError
        if kind:
            raise LLMError(kind, self.model, record.error or kind)  # type: ignore[arg-type]
        yield StreamPiece(usage=record.usage)
