"""Transcripts (ARCHITECTURE.md, "Files and formats"): one JSON line per thing that happened, appended as it happens.

Line 1 is the header (maic version, model, how it was produced, the class with
full persona configs, mode, scenario, the starting board and slides).  Then,
each with ``t`` (seconds since the transcript began): ``learner`` messages,
``round`` starts, ``event`` lines (the engine's events), ``llm_call`` lines
(messages sent, raw reply, usage, time to first token, duration) and
``round_end`` lines.  Each line is flushed when written, so a crash loses at
most the line being written.  API keys are never written.

Reading is forgiving but never trusts the file: each line after the header is
validated as one of the entry models (a union on ``kind``).  A last line cut
off mid-write is dropped with a warning; an unknown kind or event type (from a
newer maic) and a line whose fields have the wrong types are skipped with a
warning; a file that is not a transcript, or whose header is damaged, is
refused with one line.
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Annotated, Any, Literal

import pydantic_core
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from .. import __version__
from ..engine.events import EVENT_TYPES, Event
from ..engine.models import AgentConfig, ClassSettings, RoundOverrides, StoreState, UserProfile
from ..engine.outcomes import StopReason
from ..errors import InputError
from ..files import open_regular
from ..jsonl import MAX_LINE_BYTES, read_json_lines
from ..llm.port import LLMClient, Usage
from ..llm.recording import CallRecord, RecordingLLM
from ..llm.replay import validation_problem
from ..untrusted import redact
from .paths import open_private

FORMAT = "maic-transcript"
TRANSCRIPT_VERSION = 1


class TranscriptHeader(BaseModel):
    kind: str = "header"
    format: str = FORMAT
    version: int = TRANSCRIPT_VERSION
    maic_version: str = __version__
    created_at: float = Field(default_factory=time.time, ge=0, le=253402300799)  # up to year 9999
    model: str
    produced_by: str  # e.g. "scripted model (scripts/qa.yaml)", "offline model", "litellm: openai/…"
    agents: list[AgentConfig]
    config: ClassSettings
    profile: UserProfile = Field(default_factory=UserProfile)
    store: StoreState = Field(default_factory=StoreState)
    scenario: str | None = None
    session: str | None = None


class TranscriptWriter:
    """Appends lines to a transcript; writes the header only to a new (or empty) file.

    A new transcript is private (0600, in a 0700 folder if maic creates it); provider
    error text is redacted of API keys before it is written.
    """

    def __init__(self, path: Path, header: TranscriptHeader, *, durable: bool = True,
                 keep: Callable[[Entry], bool] | None = None) -> None:
        self.path = path
        self.header = header
        # keep: the entries written that a caller wants in memory as well (a batch keeps what its
        # report's turn rows read, so the report need not read back the file it just wrote).
        self._keep = keep
        self.kept: list[Entry] = []
        # durable: flush every line and fsync each round's end.  A batch passes False (lines are
        # flushed at each round's end): a crash there only means --resume reruns the run.
        self.durable = durable
        fresh = not path.exists() or path.stat().st_size == 0
        self._file: IO[str] = open_private(path, "a")
        # Lines are written as the UTF-8 bytes pydantic makes them (the file is UTF-8): all of them, so the
        # text layer above holds nothing and a flush of the file flushes every line.
        self._out: IO[bytes] = self._file.buffer  # type: ignore[attr-defined]
        self._start = time.monotonic()
        self._offset = 0.0
        if fresh:
            self._write_line(header.model_dump_json().encode("utf-8"))
        else:
            self._offset = _last_offset(path)

    def _t(self) -> float:
        """Seconds since the transcript began (continuing an existing file's clock)."""
        return round(self._offset + time.monotonic() - self._start, 4)

    def _write_line(self, line: bytes) -> None:
        self._out.write(line + b"\n")
        if self.durable:
            self._file.flush()

    def _write(self, entry: Entry) -> None:
        """One entry, written by its own model's serializer: the line the union's adapter (which reads it back)
        writes, without the adapter finding out which member the entry is (a third of the cost of a line)."""
        self._write_line(type(entry).__pydantic_serializer__.to_json(entry))
        if self._keep is not None and self._keep(entry):
            self.kept.append(entry)

    def in_memory(self) -> Transcript:
        """The transcript as written, with only the entries kept (see ``keep``)."""
        return Transcript(path=self.path, header=self.header, entries=list(self.kept))

    def learner(self, text: str, *, simulated: str | None = None, model: str | None = None) -> None:
        """A learner line; a simulated learner's is marked with its name and model."""
        line = LearnerLine(kind="learner", t=self._t(), text=text, simulated=simulated, model=model)
        self._write_line(LearnerLine.__pydantic_serializer__.to_json(line, exclude_none=True))

    def round_started(self, trigger: str | None, overrides: RoundOverrides | None = None) -> None:
        self._write(RoundLine(kind="round", t=self._t(), trigger=trigger, overrides=overrides))

    def lecture_started(self, trigger: str | None) -> None:
        """A scripted lecture: shown like a round, but no round of the class (reports skip it)."""
        self._write(RoundLine(kind="round", t=self._t(), trigger=trigger, lecture=True))

    def event(self, event: Event) -> None:
        """An event line, composed from the event's own JSON (the line an :class:`EventLine` writes, without
        making one); an :class:`EventLine` is made only for a ``keep`` that may want it."""
        t = self._t()
        self._write_line(b'{"t":' + pydantic_core.to_json(t) + b',"kind":"event","event":'
                         + type(event).__pydantic_serializer__.to_json(event) + b"}")
        if self._keep is None:
            return
        if event.type not in getattr(self._keep, "events", EVENT_TYPES):  # a keep may say which it may want
            return
        entry = EventLine(kind="event", t=t, event=event)
        if self._keep(entry):
            self.kept.append(entry)

    def call(self, record: CallRecord) -> None:
        """A call line: the record's own JSON, then its ``kind`` and ``t`` (the line a :class:`CallLine`
        writes, without validating the record's messages once more); its error redacted of API keys, usage
        someone set that is not numbers left out (the call is kept without it)."""
        if self._file.closed:  # a stream closed after the class ended (e.g. its output pipe broke)
            return
        t = self._t()
        changes: dict[str, Any] = {}
        if record.error:
            changes["error"] = redact(record.error)
        usage = _usage_as_written(record.usage)  # a record made by RecordingLLM has numbers: the same values
        if usage is not record.usage:
            changes["usage"] = usage
        written = record.model_copy(update=changes) if changes else record
        body = CallRecord.__pydantic_serializer__.to_json(written)
        self._write_line(body[:-1] + b',"kind":"llm_call","t":' + pydantic_core.to_json(t) + b"}")
        if self._keep is None or "llm_call" not in getattr(self._keep, "kinds", ENTRY_KINDS):
            return
        entry = CallLine.model_validate({**dict(written), "kind": "llm_call", "t": t})
        if self._keep(entry):
            self.kept.append(entry)

    def round_finished(self, reason: StopReason, error: str | None = None) -> None:
        self._write(RoundEndLine(kind="round_end", t=self._t(), reason=reason, error=redact(error) if error else error))
        self._file.flush()
        if self.durable:
            os.fsync(self._file.fileno())

    def wrap(self, llm: LLMClient) -> LLMClient:
        """``llm``, recording each of its calls into this transcript."""
        return RecordingLLM(llm, self.call)

    def close(self) -> None:
        if not self._file.closed:
            self._file.close()


class _UsageLine(BaseModel):
    model_config = ConfigDict(allow_inf_nan=False)  # as a call line reads its usage back

    usage: Usage


def _usage_as_written(usage: Usage) -> Usage:
    """``usage`` itself when a call line can hold it as it is; else its numbers as the line reads them back
    (``"3"`` tokens as 3), or none (``"many"``, NaN, not a usage at all)."""
    if (type(usage) is Usage and type(usage.prompt_tokens) is int and type(usage.completion_tokens) is int
            and type(usage.cached_tokens) is int and type(usage.cost) is float and math.isfinite(usage.cost)):
        return usage  # what a line holds as it is (RecordingLLM's records always are): not validated again
    try:
        return _UsageLine.model_validate({"usage": vars(usage)}).usage
    except (ValidationError, TypeError):
        return Usage()


def _last_offset(path: Path) -> float:
    """Where the clock stood at the end of an existing transcript (to keep ``t`` growing)."""
    last = 0.0
    with open_regular(path, "transcript") as handle:  # a FIFO or /dev/zero is refused, not read
        while line := handle.readline(MAX_LINE_BYTES + 1):
            try:
                last = float(json.loads(line.decode("utf-8", errors="replace")).get("t", last))
            except (ValueError, TypeError, AttributeError, RecursionError):
                continue
    return last


Seconds = Annotated[float, Field(allow_inf_nan=False)]


class _Line(BaseModel):
    model_config = ConfigDict(extra="ignore")

    t: Seconds = 0.0


class LearnerLine(_Line):
    kind: Literal["learner"]
    text: str
    simulated: str | None = None  # a simulated learner said it: its name (engine/learner.py)
    model: str | None = None  # and the model that wrote it


class RoundLine(_Line):
    kind: Literal["round"]
    trigger: str | None = None
    lecture: bool = False  # a lesson's scripted lecture (lessons/player.py), not a round of the class
    overrides: RoundOverrides | None = None  # the round's own config changes (a lesson's lecture, discussion)


class EventLine(_Line):
    kind: Literal["event"]
    event: Event


class CallLine(CallRecord):
    """A call as a transcript line: the call record, its ``kind`` and when it ended."""

    kind: Literal["llm_call"]
    t: Seconds = 0.0


class RoundEndLine(_Line):
    kind: Literal["round_end"]
    reason: StopReason = "end"
    error: str | None = None


Entry = Annotated[LearnerLine | RoundLine | EventLine | CallLine | RoundEndLine, Field(discriminator="kind")]
ENTRY_ADAPTER: TypeAdapter[Entry] = TypeAdapter(Entry)
ENTRY_KINDS = frozenset({"learner", "round", "event", "llm_call", "round_end"})


TURN_EVENTS = frozenset({"agent_start", "done"})


class _TurnEntries:
    """Whether a batch's turns.csv reads an entry (report/report_tables.py): round starts and the events
    that open and end a turn; a batch keeps these in memory (``TranscriptWriter(keep=turn_entry)``).
    ``events`` tells the writer which events to make an entry of for it at all."""

    kinds = frozenset({"round", "event"})  # the kinds of line it may want
    events = TURN_EVENTS  # and the events

    def __call__(self, entry: Entry) -> bool:
        return isinstance(entry, RoundLine) or (isinstance(entry, EventLine) and entry.event.type in TURN_EVENTS)


turn_entry = _TurnEntries()


@dataclass
class Transcript:
    path: Path
    header: TranscriptHeader
    entries: list[Entry] = field(default_factory=list)  # everything after the header
    warnings: list[str] = field(default_factory=list)

    def events(self) -> list[tuple[float, Event]]:
        return [(e.t, e.event) for e in self.entries if isinstance(e, EventLine)]

    def calls(self) -> list[CallLine]:
        return [e for e in self.entries if isinstance(e, CallLine)]


def read_transcript(path: Path) -> Transcript:
    lines, cut_off = read_json_lines(path, "transcript")
    if not lines:
        raise InputError(f"{path}: empty file, not a maic transcript")
    transcript = Transcript(path=path, header=_read_header(path, lines[0][1]))
    if cut_off:
        transcript.warnings.append(f"{path}:{len(lines) + 1}: the last line was cut off (a crash?); "
                                   "replaying up to the line before")
    for number, entry in lines[1:]:
        problem = _entry_problem(entry)
        if problem is None:
            try:
                transcript.entries.append(ENTRY_ADAPTER.validate_python(entry))
                continue
            except ValidationError as exc:
                problem = f"damaged {entry['kind']} line ({validation_problem(exc, skip=1)})"  # skip the kind
        transcript.warnings.append(f"{path}:{number}: {problem}; skipped")
    return transcript


def _read_header(path: Path, first: Any) -> TranscriptHeader:
    if not isinstance(first, dict) or first.get("format") != FORMAT:
        raise InputError(f"{path}: not a maic transcript (no maic header on line 1)")
    version = first.get("version", 0)
    if type(version) is not int:
        raise InputError(f"{path}:1: header: version: a whole number is needed, not {type(version).__name__}")
    if version > TRANSCRIPT_VERSION:
        raise InputError(f"{path}: transcript version {version} is newer than this maic reads")
    try:
        return TranscriptHeader.model_validate(first)
    except ValidationError as exc:
        raise InputError(f"{path}:1: header: {validation_problem(exc)}") from None


def _entry_problem(entry: Any) -> str | None:
    """Why a line cannot be read as an entry at all (its fields are checked by the models)."""
    if not isinstance(entry, dict) or not isinstance(entry.get("kind"), str):
        return "not a transcript entry"
    if entry["kind"] not in ENTRY_KINDS:
        return f"unknown entry kind {entry['kind']!r:.40} (from a newer maic?)"
    if entry["kind"] == "event":
        event = entry.get("event")
        kind = event.get("type") if isinstance(event, dict) else None
        if not isinstance(kind, str) or kind not in EVENT_TYPES:
            return f"unknown event type {kind!r:.40} (from a newer maic?)"
    return None
