"""One call, one record: what RecordingLLM fills, a transcript writes, ``replay:`` reads and a run result counts."""

from __future__ import annotations

import asyncio
import json
import math
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from maic_cli.engine.models import TurnConfig
from maic_cli.evaluation.run_results import CallStat
from maic_cli.llm.port import LLMError, LLMRequest, StreamPiece, Usage
from maic_cli.llm.recording import CallRecord, RecordingLLM
from maic_cli.llm.replay import ReplayLLM, read_call_records
from maic_cli.llm.scripted import ScriptedLLM, ScriptedReply
from maic_cli.store.transcript import CallLine, TranscriptHeader, TranscriptWriter, read_transcript

BUNDLED = Path(__file__).resolve().parent.parent / "transcripts"


def recorded(llm: Any, request: LLMRequest) -> list[CallRecord]:
    records: list[CallRecord] = []

    async def main() -> None:
        try:
            async for _ in RecordingLLM(llm, records.append).stream(request):
                pass
        except LLMError:
            pass

    asyncio.run(main())
    return records


def write(path: Path, records: list[CallRecord]) -> None:
    writer = TranscriptWriter(path, TranscriptHeader(model="scripted", produced_by="test", agents=[],
                                                     config=TurnConfig(agent_ids=[])))
    for record in records:
        writer.call(record)
    writer.close()


def test_a_recorded_call_comes_back_from_its_transcript_as_the_same_record(tmp_path: Path) -> None:
    request = LLMRequest(messages=[{"role": "user", "content": "Why is the sky blue?"}], purpose="agent",
                         agent_id="teacher")
    (record,) = recorded(ScriptedLLM(["Rayleigh scattering."]), request)
    assert record.reply == "Rayleigh scattering." and record.agent_id == "teacher"
    assert record.usage.completion_tokens > 0 and record.ttft is not None
    write(tmp_path / "t.jsonl", [record])
    assert read_call_records(tmp_path / "t.jsonl") == [record]  # what replay serves
    (line,) = read_transcript(tmp_path / "t.jsonl").calls()  # what replay --check and reports read
    assert isinstance(line, CallLine) and CallRecord.model_validate(line.model_dump()) == record


def test_the_transcript_line_keeps_its_field_names_and_order(tmp_path: Path) -> None:
    record = CallRecord(purpose="director", messages=[{"role": "system", "content": "pick"}], reply="{}",
                        usage=Usage(prompt_tokens=3, completion_tokens=1), duration=0.5)
    write(tmp_path / "t.jsonl", [record])
    line = json.loads((tmp_path / "t.jsonl").read_text().splitlines()[1])
    assert list(line) == ["purpose", "agent_id", "messages", "reply", "usage", "ttft", "duration", "error_kind",
                          "error", "kind", "t"]
    assert line["usage"] == {"prompt_tokens": 3, "completion_tokens": 1, "cached_tokens": 0, "cost": 0.0}


def test_every_bundled_transcript_reads_as_call_records_and_replays() -> None:
    for path in sorted(BUNDLED.glob("*.jsonl")):
        records = read_call_records(path)
        assert records and all(isinstance(r, CallRecord) for r in records), path
        assert [line.reply for line in read_transcript(path).calls()] == [r.reply for r in records]

        async def first(llm: ReplayLLM) -> str:
            return "".join([piece.text async for piece in llm.stream(LLMRequest(messages=[]))])

        assert asyncio.run(first(ReplayLLM(records))) == records[0].reply


def test_a_failed_call_is_recorded_with_its_kind_and_its_error_redacted_on_disk(tmp_path: Path) -> None:
    script = ScriptedLLM([ScriptedReply(error="auth")])
    (record,) = recorded(script, LLMRequest(messages=[{"role": "user", "content": "hi"}]))
    assert record.error_kind == "auth" and record.error and record.reply == ""
    leaked = record.model_copy(update={"error": "401 for sk-abcdefghijklmnopqrstuvwxyz0123"})  # as a client might say
    write(tmp_path / "t.jsonl", [record, leaked])
    assert "sk-abcdefghijklmnopqrstuvwxyz0123" not in (tmp_path / "t.jsonl").read_text()
    assert [r.error_kind for r in read_call_records(tmp_path / "t.jsonl")] == ["auth", "auth"]
    assert leaked.error == "401 for sk-abcdefghijklmnopqrstuvwxyz0123"  # the record in memory is not changed


class _WrongUsage:
    model = "wrong-usage"

    async def stream(self, request: LLMRequest) -> Any:
        yield StreamPiece(text="hi")
        yield StreamPiece(usage=Usage(prompt_tokens="many"))  # type: ignore[arg-type]


def test_usage_that_is_not_numbers_is_recorded_as_none_and_counts_nothing() -> None:
    (record,) = recorded(_WrongUsage(), LLMRequest(messages=[{"role": "user", "content": "hi"}]))
    assert record.usage == Usage() and record.reply == "hi"
    stat = CallStat.from_record(record)  # a batch's run result counts the same record
    assert (stat.prompt_tokens, stat.completion_tokens, stat.duration) == (0, 0, record.duration)


def test_a_run_result_counts_what_the_record_says() -> None:
    record = CallRecord(purpose="agent", agent_id="t", usage=Usage(prompt_tokens=7, completion_tokens=2,
                                                                    cached_tokens=5, cost=0.01),
                        ttft=0.2, duration=1.5, error_kind="timeout")
    stat = CallStat.from_record(record)
    assert (stat.prompt_tokens, stat.completion_tokens, stat.cached_tokens, stat.cost) == (7, 2, 5, 0.01)
    assert (stat.ttft, stat.duration, stat.error_kind, stat.agent_id) == (0.2, 1.5, "timeout", "t")


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner,
                                                                                max_size=3), max_leaves=12)
FIELDS = st.sampled_from(["purpose", "agent_id", "messages", "reply", "usage", "ttft", "duration", "error_kind",
                          "error", "other"])


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(FIELDS, JSON, max_size=6))
def test_any_line_from_a_file_is_a_record_or_refused_with_a_validation_error(line: dict[str, Any]) -> None:
    try:
        record = CallRecord.model_validate(line)
    except ValidationError:
        return
    assert all(isinstance(v, (int, float)) for v in vars(record.usage).values())
    for value in (record.duration, record.ttft, record.usage.cost):
        assert value is None or math.isfinite(value)  # no NaN, no inf


def test_a_transcript_written_again_has_the_same_lines_but_their_times(tmp_path: Path) -> None:
    """Every kind of line the writer makes, for every bundled transcript, is the line the reader's adapter
    makes of the entry it read: one format, whichever way a line is serialized."""
    from maic_cli.store.transcript import (
        ENTRY_ADAPTER,
        EventLine,
        LearnerLine,
        RoundEndLine,
        RoundLine,
    )

    for path in sorted(BUNDLED.glob("*.jsonl")):
        read = read_transcript(path)
        copy = tmp_path / path.name
        writer = TranscriptWriter(copy, read.header)
        for entry in read.entries:
            if isinstance(entry, EventLine):
                writer.event(entry.event)
            elif isinstance(entry, CallLine):
                writer.call(CallRecord.model_validate(entry.model_dump()))
            elif isinstance(entry, LearnerLine):
                writer.learner(entry.text, simulated=entry.simulated, model=entry.model)
            elif isinstance(entry, RoundLine) and entry.lecture:
                writer.lecture_started(entry.trigger)
            elif isinstance(entry, RoundLine):
                writer.round_started(entry.trigger, entry.overrides)
            elif isinstance(entry, RoundEndLine):
                writer.round_finished(entry.reason, entry.error)
        writer.close()
        written = copy.read_text(encoding="utf-8").splitlines()
        assert written[0] == read.header.model_dump_json()
        expected = [ENTRY_ADAPTER.dump_json(e, exclude_none=isinstance(e, LearnerLine)).decode() for e in read.entries]
        assert len(written) == len(expected) + 1, path
        for line, want in zip(written[1:], expected, strict=True):
            mine, theirs = json.loads(line), json.loads(want)
            mine["t"] = theirs["t"] = 0
            assert list(mine.items()) == list(theirs.items()), path


def test_a_batch_keeps_the_turn_entries_it_wrote(tmp_path: Path) -> None:
    """``keep=turn_entry`` keeps in memory exactly the entries turns.csv reads, as they read back from the file."""
    from maic_cli.store.transcript import EventLine, RoundLine, turn_entry

    for path in sorted(BUNDLED.glob("*.jsonl")):
        read = read_transcript(path)
        writer = TranscriptWriter(tmp_path / path.name, read.header, keep=turn_entry)
        for entry in read.entries:
            if isinstance(entry, EventLine):
                writer.event(entry.event)
            elif isinstance(entry, RoundLine):
                writer.round_started(entry.trigger, entry.overrides)
        writer.close()
        again = [e for e in read_transcript(tmp_path / path.name).entries if turn_entry(e)]
        assert again and [e.model_dump(exclude={"t"}) for e in writer.kept] == \
            [e.model_dump(exclude={"t"}) for e in again]
        assert [e.t for e in writer.kept] == [e.t for e in again]


@settings(max_examples=200, deadline=None)
@given(st.floats(min_value=0, max_value=1e7, allow_nan=False) | st.sampled_from([1e-05, 5e-05, 0.0001, 1e16, 0.1]))
def test_an_event_line_writes_its_time_as_an_event_line_model_does(tmp_path_factory: Any, t: float) -> None:
    from maic_cli.engine.events import TextDeltaEvent
    from maic_cli.store.transcript import EventLine

    path = tmp_path_factory.mktemp("t") / "t.jsonl"
    writer = TranscriptWriter(path, TranscriptHeader(model="scripted", produced_by="test", agents=[],
                                                     config=TurnConfig(agent_ids=[])))
    writer._t = lambda: t  # type: ignore[method-assign]
    event = TextDeltaEvent(message_id="msg_1", content="Half \u201cof\u201d a 🍕 \\ \"pizza\"\n")
    writer.event(event)
    writer.close()
    line = path.read_text(encoding="utf-8").splitlines()[1]
    assert line == EventLine(kind="event", t=t, event=event).model_dump_json()


def test_a_call_line_holds_usage_only_as_numbers(tmp_path: Path) -> None:
    """Usage someone set on a record in memory is written as a call line can read it back: numbers as numbers,
    anything else (words, NaN, no usage at all) as none; the call itself is kept."""
    records = [CallRecord(purpose="agent", reply=reply) for reply in "abcdef"]
    records[0].usage = Usage(prompt_tokens="3", completion_tokens=2)  # type: ignore[arg-type]
    records[1].usage = Usage(prompt_tokens="many")  # type: ignore[arg-type]
    records[2].usage = Usage(cost=float("nan"))
    records[3].usage = None  # type: ignore[assignment]
    records[4].usage = Usage(prompt_tokens=5, cost=0)  # a whole number of dollars: written as a float
    records[5].usage = Usage(prompt_tokens=7, completion_tokens=1, cached_tokens=2, cost=0.5)
    write(tmp_path / "t.jsonl", records)
    read = read_transcript(tmp_path / "t.jsonl")
    assert read.warnings == [] and [c.reply for c in read.calls()] == list("abcdef")
    assert [c.usage for c in read.calls()] == [Usage(prompt_tokens=3, completion_tokens=2), Usage(), Usage(), Usage(),
                                               Usage(prompt_tokens=5), records[5].usage]
    assert '"cost":0.0' in (tmp_path / "t.jsonl").read_text().splitlines()[5]
    assert records[0].usage.prompt_tokens == "3"  # type: ignore[comparison-overlap]  # the record in memory is not changed
