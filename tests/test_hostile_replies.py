"""Deep nesting and broken surrogates in replies, end to end.

The parser's own cases are in test_parser.py; here: the director's reply, and a
whole round whose events, session file and transcript must still be written.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from maic_cli.engine.director import parse_director_pick
from maic_cli.engine.events import EVENT_ADAPTER
from maic_cli.engine.models import TurnConfig
from maic_cli.engine.outcomes import Pick
from maic_cli.engine.round import run_round
from maic_cli.llm.scripted import ScriptedLLM
from maic_cli.replies.sanitize import json_extent, replace_surrogates
from maic_cli.store.session import Session, load_session, save_session
from maic_cli.store.transcript import TranscriptHeader, TranscriptWriter, read_transcript
from tests.helpers import agent

CLASS = {a.id: a for a in (agent("teacher", "teacher", "Ms. T"), agent("mia", "student", "Mia"))}


def deep(levels: int) -> str:
    return '{"a":' * levels + "1" + "}" * levels


@pytest.mark.parametrize("levels", [300, 5000, 50_000])
def test_director_reply_nested_deeply_ends_the_round_without_recursion_error(levels: int) -> None:
    assert parse_director_pick(deep(levels)) == Pick.end()
    assert parse_director_pick("[" * levels) == Pick.end()
    # A decision next to a deep object is still found.
    found = parse_director_pick(f'{deep(levels)} {{"next_agent": "mia"}}')
    assert found == Pick.agent("mia")


def test_director_reply_full_of_braces_is_read_in_bounded_work() -> None:
    assert parse_director_pick("{" * 100_000) == Pick.end()
    assert parse_director_pick('{"x": "' + "{" * 100_000) == Pick.end()


def test_director_decision_with_a_broken_surrogate_is_clean() -> None:
    pick = parse_director_pick('{"next_agent": "mi\\ud83d"}')
    assert pick == Pick.agent("mi\ufffd")
    pick.label.encode("utf-8")


def test_json_extent_skips_strings_and_escapes() -> None:
    assert json_extent('{"a": "[[[[[[\\"[[[["} tail', 0) == (21, 1)
    assert json_extent('x {"a": [[1]]} y', 2) == (14, 3)
    assert json_extent('{"a": [[', 0) == (8, 3)
    assert replace_surrogates("ok \ud800\udc00") == "ok \ufffd\ufffd"


HOSTILE_REPLY = (
    '[{"type":"text","content":"Emoji cut \\ud83d and raw \ud83d. "},'
    '{"type":"action","name":"wb_draw_text","params":{"content":"board \\udc00 \udfff"}},'
    '{"type":"action","name":"wb_draw_table","params":{"data":' + "[" * 400 + "]" * 400 + "}},"
    '{"type":"action","name":"wb_draw_chart","params":{"series":[{"values":[NaN, Infinity]}]}},'
    '{"type":"text","content":"Done \ud800"}]'
)


def test_a_hostile_round_is_written_to_events_session_and_transcript(tmp_path: Path) -> None:
    llm = ScriptedLLM(['{"next_agent": "teacher"}', HOSTILE_REPLY, '{"next_agent": "END"}'])
    config = TurnConfig(agent_ids=list(CLASS))
    writer = TranscriptWriter(tmp_path / "t.jsonl", TranscriptHeader(
        model="scripted", produced_by="test", agents=list(CLASS.values()), config=config))
    session = Session(config=config, agents=list(CLASS.values()))
    session.classroom.add_learner_message("hi \udcff")  # e.g. undecodable stdin, surrogate-escaped
    events: list = []

    def sink(event: object) -> None:
        events.append(event)
        writer.event(event)  # type: ignore[arg-type]

    asyncio.run(run_round(session.classroom, config, writer.wrap(llm), registry=CLASS, on_event=sink))
    writer.close()
    for event in events:
        EVENT_ADAPTER.validate_json(EVENT_ADAPTER.dump_json(event))
    done = next(e for e in events if e.type == "done" and e.total_agents)
    assert done.total_actions == 1 and done.dropped_actions == 2  # the too-deep table and the NaN chart
    assert done.parse_recoveries == 1  # the too-deep table
    message = session.classroom.messages[-1]
    assert message.text == "Emoji cut \ufffd and raw \ufffd. Done \ufffd"
    assert session.classroom.store.whiteboard[0].params == {"content": "board \ufffd \ufffd"}
    assert session.classroom.messages[0].text == "hi \ufffd"
    path = tmp_path / "s.json"
    save_session(session, path)
    again = load_session(path)
    assert again.classroom.messages[-1].text == message.text
    transcript = read_transcript(tmp_path / "t.jsonl")
    assert len(transcript.events()) == len(events)


def test_a_session_file_with_surrogates_and_deep_params_reloads(tmp_path: Path) -> None:
    session = Session(config=TurnConfig(agent_ids=["teacher"]), agents=[CLASS["teacher"]])
    data = json.loads(session.model_dump_json())
    nested: object = 1
    for _ in range(500):
        nested = [nested]
    data["classroom"]["messages"] = [
        {"role": "agent", "agent_id": "teacher", "agent_name": "T\ud800",
         "parts": [{"kind": "text", "text": "x \udfff"},
                   {"kind": "action", "action": {"action_id": "a", "name": "mystery", "params": {"p": nested}}}]}]
    data["classroom"]["store"]["whiteboard"] = [{"id": "e\ud83d", "kind": "text", "params": {"content": "c\udc00"}}]
    path = tmp_path / "s.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    loaded = load_session(path)
    message = loaded.classroom.messages[0]
    assert (message.agent_name, message.text) == ("T\ufffd", "x \ufffd")
    assert loaded.classroom.store.whiteboard[0].id == "e\ufffd"
    save_session(loaded, path)  # no surrogate and no depth error on the way out
    assert load_session(path).classroom.store.whiteboard[0].params == {"content": "c\ufffd"}
