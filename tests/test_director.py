"""The director: one test per rule in engine/director.py's docstring, and the defensive decision parser."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from maic_cli.engine.director import parse_director_pick
from maic_cli.engine.director_prompt import build_director_prompt
from maic_cli.engine.models import (
    AgentTurnSummary,
    DirectorState,
    Message,
    StoreState,
    TurnConfig,
    TurnRequest,
    UserProfile,
    WhiteboardActionRecord,
)
from maic_cli.engine.outcomes import DirectorOutcome, Pick
from maic_cli.engine.turn import generate_turn
from maic_cli.llm.scripted import ScriptedLLM, ScriptedReply
from tests.helpers import agent, decision, reply

CLASS = {a.id: a for a in (agent("teacher", "teacher", "Ms. T"), agent("mia", "student", "Mia"),
                           agent("leo", "student", "Leo"))}


def run_turn(config: TurnConfig, llm: ScriptedLLM, state: DirectorState | None = None,
             messages: list[Message] | None = None) -> list:
    request = TurnRequest(messages=messages or [Message.from_learner("Why is the sky blue?")],
                          config=config, director_state=state)

    async def collect() -> list:
        return [e async for e in generate_turn(request, llm, CLASS)]

    return asyncio.run(collect())


def types(events: list) -> list[str]:
    """Event types, with runs of text deltas folded into one."""
    out: list[str] = []
    for event in events:
        if not (event.type == "text_delta" and out and out[-1] == "text_delta"):
            out.append(event.type)
    return out


def test_rule1_max_turns_ends_without_a_call() -> None:
    llm = ScriptedLLM([])
    events = run_turn(TurnConfig(agent_ids=list(CLASS), max_turns=2), llm, DirectorState(turn_count=2))
    assert types(events) == ["done"] and events[-1].outcome == DirectorOutcome.end()
    assert llm.calls == []


def test_rule2_single_agent_dispatched_at_turn_0_without_director_call() -> None:
    llm = ScriptedLLM([reply("Hello.")])
    events = run_turn(TurnConfig(agent_ids=["teacher"]), llm)
    assert types(events) == ["thinking", "agent_start", "text_delta", "agent_end", "done"]
    assert [c.purpose for c in llm.calls] == ["agent"]
    assert events[-1].director_state.turn_count == 1


def test_rule2_single_agent_later_turn_cues_the_user() -> None:
    llm = ScriptedLLM([])
    events = run_turn(TurnConfig(agent_ids=["teacher"]), llm, DirectorState(turn_count=1))
    assert types(events) == ["cue_user", "done"]
    assert events[-1].outcome == DirectorOutcome.user()
    assert llm.calls == []


def test_rule3_trigger_fast_path_skips_the_director() -> None:
    llm = ScriptedLLM([reply("Me first!")])
    events = run_turn(TurnConfig(agent_ids=list(CLASS), trigger_agent_id="leo"), llm)
    assert events[1].type == "agent_start" and events[1].agent_id == "leo"
    assert [c.purpose for c in llm.calls] == ["agent"]


def test_rule3_unknown_trigger_falls_through_to_the_llm() -> None:
    llm = ScriptedLLM([decision("mia"), reply("Question!")])
    events = run_turn(TurnConfig(agent_ids=list(CLASS), trigger_agent_id="ghost"), llm)
    assert [c.purpose for c in llm.calls] == ["director", "agent"]
    assert next(e for e in events if e.type == "agent_start").agent_id == "mia"


def test_rule3_trigger_only_at_turn_0() -> None:
    llm = ScriptedLLM([decision("END")])
    run_turn(TurnConfig(agent_ids=list(CLASS), trigger_agent_id="leo"), llm, DirectorState(turn_count=1))
    assert [c.purpose for c in llm.calls] == ["director"]


def test_rule4_director_llm_chooses_an_agent() -> None:
    llm = ScriptedLLM([decision("teacher"), reply("Rayleigh scattering.")])
    events = run_turn(TurnConfig(agent_ids=list(CLASS)), llm)
    assert types(events)[:3] == ["thinking", "thinking", "agent_start"]
    assert events[0].stage == "director" and events[1].stage == "agent_loading"
    assert events[-1].outcome == DirectorOutcome.agent("teacher")


@pytest.mark.parametrize("answer", ['{"next_agent": "END"}', "", "no idea", '{"other": 1}', "```\n\n```"])
def test_rule5_end_empty_or_unparseable_ends(answer: str) -> None:
    llm = ScriptedLLM([answer])
    answered = DirectorState(turn_count=1, agent_responses=[AgentTurnSummary(
        agent_id="teacher", agent_name="Ms. T", content_preview="Scattering.")])
    events = run_turn(TurnConfig(agent_ids=list(CLASS)), llm, answered)
    assert types(events) == ["thinking", "done"]
    assert events[-1].outcome == DirectorOutcome.end()


def test_rule5_user_cues_the_learner() -> None:
    state = DirectorState(turn_count=1, agent_responses=[AgentTurnSummary(
        agent_id="teacher", agent_name="Ms. T", content_preview="What do you think?")])
    events = run_turn(TurnConfig(agent_ids=list(CLASS)), ScriptedLLM(['{"next_agent":"USER"}']), state)
    assert types(events) == ["thinking", "cue_user", "done"]
    assert events[1].from_agent_id == "teacher"
    assert events[-1].outcome == DirectorOutcome.user()


def test_rule5_unknown_agent_id_falls_back_to_the_teacher() -> None:
    events = run_turn(TurnConfig(agent_ids=list(CLASS)), ScriptedLLM([decision("principal"), reply("Light.")]))
    assert types(events)[:3] == ["thinking", "director_correction", "thinking"]
    assert (events[1].original, events[1].corrected, events[1].rule) == ("principal", "teacher", "unknown_agent")
    assert events[-1].outcome == DirectorOutcome.agent("teacher")


def test_rule5_provider_error_becomes_an_error_event() -> None:
    llm = ScriptedLLM([ScriptedReply(error="rate_limit")])
    events = run_turn(TurnConfig(agent_ids=list(CLASS)), llm)
    assert types(events) == ["thinking", "error", "done"]
    assert "rate limited" in events[1].message and "\n" not in events[1].message
    assert events[-1].outcome == DirectorOutcome.end()


@pytest.mark.parametrize(("text", "expected"), [
    ('{"next_agent": "mia"}', Pick.agent("mia")),
    ('Sure!\n```json\n{"next_agent": "leo"}\n```', Pick.agent("leo")),
    ('I think {"next_agent": "teacher"} is best. {"next_agent": "leo"}', Pick.agent("teacher")),
    ('{"reason": "x", "next_agent": "user"}', Pick.user()),
    ('{"next_agent": "end"}', Pick.end()),
    ('{"next_agent": ""}', Pick.end()),
    ('{"next_agent": null}', Pick.end()),
    ("{'next_agent': 'mia'}", Pick.agent("mia")),
    ('{"next_agent": "mia"', Pick.agent("mia")),
    ('{"next_agent": "  Mia  "}', Pick.agent("Mia")),
    ("", Pick.end()),
    ("teacher", Pick.end()),
])
def test_a_director_reply_is_read_as_a_pick(text: str, expected: Pick) -> None:
    assert parse_director_pick(text) == expected


def test_director_prompt_has_every_section() -> None:
    ledger = [WhiteboardActionRecord(action_name="wb_draw_text", agent_id="teacher", agent_name="Ms. T")
              for _ in range(7)]
    state = DirectorState(turn_count=1, whiteboard_ledger=ledger, agent_responses=[AgentTurnSummary(
        agent_id="teacher", agent_name="Ms. T", content_preview="Light scatters.", action_count=7,
        whiteboard_actions=ledger)])
    messages = [Message.from_learner("Why is the sky blue?")]
    config = TurnConfig(agent_ids=list(CLASS), discussion_topic="Sky colour", initiator_id="mia")
    prompt = build_director_prompt(list(CLASS.values()), state, messages, StoreState(), config,
                                   UserProfile(nickname="Ana", bio="likes physics"))
    for needle in ["id: teacher | name: Ms. T | role: teacher | priority: 5",
                   'Ms. T [teacher]: "Light scatters." (7 actions; whiteboard: wb_draw_text',
                   "The learner (Ana): Why is the sky blue?", "Topic: Sky colour", "Initiator: mia",
                   "contributors: Ms. T", "crowded", "Ana — likes physics", "teacher answers first",
                   "initiator speaks first", "already spoke", "different role", "greet",
                   "One or two agents", "question to the learner is still open", '"next_agent"']:
        assert needle in prompt, needle


def test_director_summary_tells_learner_from_agents() -> None:
    messages = [Message.from_learner("hi"), Message(role="agent", agent_id="mia", agent_name="Mia")]
    messages[1].append_text("Hello!")
    prompt = build_director_prompt(list(CLASS.values()), DirectorState(), messages, StoreState(),
                                   TurnConfig(agent_ids=list(CLASS)), UserProfile(nickname="Ana"))
    assert "- The learner (Ana): hi" in prompt
    assert "- Agent Mia [mia]: Hello!" in prompt


def test_a_turn_leaves_the_state_it_was_given_as_it_was() -> None:
    """The turn carries on a copy: the classroom's state (and the records in it) are unchanged."""
    board = WhiteboardActionRecord(action_name="wb_draw_text", agent_id="mia", agent_name="Mia",
                                   params={"content": "2 + 2"})
    earlier = AgentTurnSummary(agent_id="mia", agent_name="Mia", content_preview="Is it four?",
                               whiteboard_actions=[board])
    state = DirectorState(turn_count=1, agent_responses=[earlier], whiteboard_ledger=[board])
    before = state.model_dump()
    llm = ScriptedLLM([decision("teacher"), reply("Yes, four.", {"type": "action", "name": "wb_open", "params": {}})])
    events = run_turn(TurnConfig(agent_ids=list(CLASS)), llm, state)
    done = events[-1]
    assert done.type == "done" and done.director_state.turn_count == 2
    assert [r.agent_id for r in done.director_state.agent_responses] == ["mia", "teacher"]
    assert state.model_dump() == before


def policy_that_scribbles(agents: object, state: DirectorState, messages: Sequence[Message], config: object) -> str:
    """A researcher's hook that changes what it is given before it answers."""
    state.turn_count = 99
    state.agent_responses.clear()
    assert isinstance(messages, list)
    messages.clear()
    return "teacher"


def test_a_hook_that_changes_its_state_changes_nothing_in_the_turn() -> None:
    from maic_cli.engine.policies import DirectorPolicy

    earlier = AgentTurnSummary(agent_id="mia", agent_name="Mia", content_preview="Is it four?")
    state = DirectorState(turn_count=1, agent_responses=[earlier])
    request = TurnRequest(messages=[Message.from_learner("What is 2 + 2?")], config=TurnConfig(agent_ids=list(CLASS)),
                          director_state=state)

    async def collect() -> list:
        llm = ScriptedLLM([reply("Four.")])
        policy = DirectorPolicy("tests:scribbles", policy_that_scribbles)
        return [e async for e in generate_turn(request, llm, CLASS, policy=policy)]

    done = asyncio.run(collect())[-1]
    assert done.director_state.turn_count == 2 and [r.agent_id for r in done.director_state.agent_responses] == \
        ["mia", "teacher"]
    assert len(request.messages) == 1 and state.turn_count == 1 and len(state.agent_responses) == 1


def test_ids_are_their_prefix_and_ten_random_hex_digits() -> None:
    import re

    from maic_cli.engine.models import new_id

    ids = [new_id("msg") for _ in range(2000)]
    assert all(re.fullmatch(r"msg_[0-9a-f]{10}", i) for i in ids) and len(set(ids)) == len(ids)
    assert len({i[4] for i in ids}) == 16  # every digit comes first in some id: the digits are random
