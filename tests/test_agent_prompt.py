"""The agent prompt's sections, the action catalogue, and the history conversion."""

from __future__ import annotations

import json
from collections.abc import Sequence

from maic_cli.engine.actions import allowed_actions
from maic_cli.engine.agent_prompt import (
    build_agent_context,
    build_agent_messages,
    build_agent_prompt,
    convert_history,
)
from maic_cli.engine.models import (
    ActionRecord,
    AgentTurnSummary,
    DirectorState,
    Message,
    MessagePart,
    Slide,
    SlideElement,
    StoreState,
    TurnConfig,
    UserProfile,
)
from maic_cli.engine.whiteboard import apply_action
from tests.helpers import agent

TEACHER = agent("teacher", "teacher", "Ms. T")


def test_role_defaults_and_scene_filtering() -> None:
    assert "spotlight" in allowed_actions(TEACHER, "slide")
    assert "spotlight" not in allowed_actions(TEACHER, "whiteboard")
    assert "wb_draw_code" in allowed_actions(TEACHER, "whiteboard")
    student = agent("mia")
    assert "laser" not in allowed_actions(student, "slide")
    assert "wb_draw_text" in allowed_actions(student, "slide")
    for other in (student, agent("sam", "assistant")):  # only the teacher erases by default
        assert not {"wb_clear", "wb_delete"} & set(allowed_actions(other, "whiteboard"))
    assert {"wb_clear", "wb_delete"} <= set(allowed_actions(TEACHER, "whiteboard"))
    assert "wb_clear" in allowed_actions(agent("mia", allowed_actions=["wb_clear"]), "whiteboard")
    limited = agent("leo", allowed_actions=["wb_draw_text", "laser"])
    assert allowed_actions(limited, "slide") == ["laser", "wb_draw_text"]
    assert allowed_actions(limited, "whiteboard") == ["wb_draw_text"]


def test_agent_prompt_has_every_section_with_changing_parts_last() -> None:
    store = StoreState(slides=[Slide(id="s1", title="Light", elements=[
        SlideElement(id="eq_1", type="formula", content="E = h f")])])
    apply_action(store, "wb_draw_text", {"content": "photons"}, "teacher")
    state = DirectorState(agent_responses=[AgentTurnSummary(agent_id="mia", agent_name="Mia",
                                                            content_preview="What is a photon?")])
    actions = allowed_actions(TEACHER, store.scene_type)
    system = build_agent_prompt(TEACHER, actions, UserProfile(nickname="Ana", bio="grade 10"),
                                language="French", discussion_topic="Light", discussion_prompt="wave or particle?")
    history = convert_history([Message.from_learner("What is light?")], "teacher")
    config = TurnConfig(agent_ids=["teacher", "mia"], discussion_topic="Light", discussion_prompt="wave or particle?")
    context = build_agent_context(state, store, agent=TEACHER, config=config, messages=[])
    messages = build_agent_messages(system, history, context)
    prompt = "\n".join(m["content"] for m in messages)
    order = ["You are Ms. T, the lead teacher", "# Who you are", "teacher persona", "# Your part in the class",
             "# How to speak", "No markdown", "# Length", "2 to 4 short sentences", "# The learner",
             "Ana: grade 10", "# Language", "Speak only French", "# The discussion", "What it should explore: "
             "wave or particle?", "# Output format", '{"type": "text"', "# Actions", "- spotlight: Highlight",
             '"elementId": "<slide element id>"', "# The whiteboard", "# The slide", "What is light?",
             "# The discussion now", "You are joining the discussion", "# Already said this round",
             "- Mia: What is a photon?", "# Current slide: Light", "[eq_1] formula: E = h f", "# Whiteboard (open)",
             "[wb_1] text: photons (drawn by you)"]
    positions = [prompt.index(needle) for needle in order]
    assert positions == sorted(positions)
    assert "photons" not in system and "Mia" not in system  # the system prompt never changes mid-session
    assert history[-1]["content"] == "What is light?"  # the caller's history is not modified


def test_an_agents_next_prompt_extends_its_last_one() -> None:
    system = build_agent_prompt(TEACHER, [], UserProfile())
    first_history = [Message.from_learner("What is light?")]
    first = build_agent_messages(system, convert_history(first_history, "teacher"),
                                 build_agent_context(DirectorState(), StoreState()))
    later = [*first_history, agent_message("teacher", "Ms. T", "A wave."), Message.from_learner("And sound?")]
    second = build_agent_messages(system, convert_history(later, "teacher"),
                                  build_agent_context(DirectorState(), StoreState()))
    assert second[0] == first[0]
    assert first[1]["content"].startswith(second[1]["content"])


def test_compact_prompt_is_shorter_and_keeps_the_format() -> None:
    actions = allowed_actions(TEACHER, "whiteboard")
    full = build_agent_prompt(TEACHER, actions, UserProfile())
    compact = build_agent_prompt(TEACHER, actions, UserProfile(), compact=True)
    assert len(compact) < len(full) / 3
    assert "JSON array" in compact and "# Your part in the class" not in compact
    assert compact.count('{"type":"text"') == 1  # exactly one example reply


def test_student_without_actions_is_told_so() -> None:
    prompt = build_agent_prompt(agent("mia"), [], UserProfile())
    assert "You have no actions here" in prompt


def agent_message(agent_id: str, name: str, text: str, *, interrupted: bool = False,
                  actions: Sequence[str] = ()) -> Message:
    parts = [MessagePart(kind="text", text=text)] if text else []
    parts += [MessagePart(kind="action", action=ActionRecord(action_id=f"a{i}", name=n)) for i, n in
              enumerate(actions)]
    return Message(role="agent", agent_id=agent_id, agent_name=name, parts=parts, interrupted=interrupted)


def test_the_history_is_told_from_the_speaking_agents_side_with_interruptions_marked() -> None:
    messages = [
        Message.from_learner("Why is the sky blue?"),
        agent_message("teacher", "Ms. T", "Scattering.", actions=["wb_open"]),
        agent_message("mia", "Mia", "Like a prism?"),
        agent_message("leo", "Leo", ""),  # empty: dropped
        agent_message("mia", "Mia", "Wait, I was say", interrupted=True),
    ]
    as_teacher = convert_history(messages, "teacher")
    assert [m["role"] for m in as_teacher] == ["user", "assistant", "user"]
    assert json.loads(as_teacher[1]["content"]) == [{"type": "text", "content": "Scattering."},
                                                    {"type": "action", "name": "wb_open", "params": {}}]
    assert as_teacher[2]["content"].startswith("[Mia]: Like a prism?")
    assert "[Mia]: Wait, I was say [This message was interrupted" in as_teacher[2]["content"]
    assert "[Leo]" not in as_teacher[2]["content"]
    as_mia = convert_history(messages, "mia")
    assert [m["role"] for m in as_mia] == ["user", "assistant", "assistant", "user"]
    assert as_mia[2]["content"].endswith("[This message was interrupted by the learner. Do not continue it.]")
    assert "[Ms. T]: Scattering. (actions: wb_open)" in as_mia[0]["content"]


def test_history_always_ends_with_a_user_message() -> None:
    history = convert_history([agent_message("teacher", "Ms. T", "Hello.")], "teacher")
    assert history[-1]["role"] == "user"
    assert convert_history([], "teacher") == [{"role": "user", "content": "(Your turn. Continue the class.)"}]


def test_small_models_see_only_the_current_round() -> None:
    messages = [Message.from_learner("Why is the sky blue?"), agent_message("teacher", "Ms. T", "Scattering."),
                Message.from_learner("And why are sunsets red?"), agent_message("mia", "Mia", "Longer path?")]
    history = convert_history(messages, "teacher", current_round_only=True)
    assert history == [{"role": "user", "content": "And why are sunsets red?\n\n[Mia]: Longer path?"}]
    assert "Scattering." in convert_history(messages, "teacher")[1]["content"]  # the full history keeps it
    assert convert_history(messages[:1], "teacher", current_round_only=True) == convert_history(messages[:1], "teacher")
