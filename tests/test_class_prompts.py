"""The live class, point by point: what the director and agents are told.

The director's "ended with a question" hint only for a question to the learner; a discussion's
opening round lets the teacher guide after the initiator; the compact discussion lines; students
never get ``wb_close``; a learner with no name is "the learner"; the judge's "brief" follows each
role's length; the teacher edits code in place and every drawing documents ``elementId``.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from maic_cli.engine.actions import CATALOGUE, allowed_actions
from maic_cli.engine.agent_prompt import build_agent_context, build_agent_prompt
from maic_cli.engine.director_prompt import asks_learner, build_director_prompt, director_data
from maic_cli.engine.models import (
    AgentTurnSummary,
    DirectorState,
    Message,
    MessagePart,
    StoreState,
    TurnConfig,
    UserProfile,
)
from maic_cli.engine.prompt_set import resolve
from tests.helpers import agent

TEACHER, MIA, SAM = agent("teacher", "teacher", "Ms. Rivera"), agent("mia", "student", "Mia"), \
    agent("sam", "assistant", "Sam")
AGENTS = [TEACHER, MIA, SAM]
ANA = UserProfile(nickname="Ana")


def said(agent_id: str, text: str) -> AgentTurnSummary:
    return AgentTurnSummary(agent_id=agent_id, agent_name=agent_id, content_preview=text)


def agent_message(agent_id: str, text: str) -> Message:
    return Message(role="agent", agent_id=agent_id, agent_name=agent_id, parts=[MessagePart(kind="text", text=text)])


@pytest.mark.parametrize(("text", "role", "expected"), [
    ("Have you seen a rainbow after the rain, Ana?", "teacher", True),
    ("What do you think happens next?", "teacher", True),
    ("Ms. Rivera, why is the sky not green?", "student", False),
    ("Why is the sky not green, teacher?", "student", False),
    ("Why is the sky not green?", "student", False),  # a student asks the teacher by default
    ("Ana, have you ever seen one?", "student", True),
    ("Mia, what would you add?", "teacher", False),
    ("The sky scatters blue light.", "teacher", False),
])
def test_asks_learner_reads_who_the_question_is_for(text: str, role: str, expected: bool) -> None:
    assert asks_learner(text, role, "Ana", ["Ms. Rivera", "Mia", "Sam"]) is expected


def director_prompt(state: DirectorState, messages: list[Message], config: TurnConfig,
                    profile: UserProfile = ANA) -> str:
    return build_director_prompt(AGENTS, state, messages, StoreState(), config, profile)


def test_the_question_hint_only_when_the_question_is_for_the_learner() -> None:
    config = TurnConfig(agent_ids=[a.id for a in AGENTS])
    to_teacher = DirectorState(turn_count=2, agent_responses=[said("teacher", "Light scatters."),
                                                               said("mia", "Ms. Rivera, why not violet?")])
    to_ana = DirectorState(turn_count=1, agent_responses=[said("teacher", "Light scatters. What do you think, Ana?")])
    assert "ended with a question" not in director_prompt(to_teacher, [], config)
    assert "The last speaker ended with a question to Ana." in director_prompt(to_ana, [], config)


def test_a_discussions_opening_round_lets_the_teacher_guide_after_the_initiator() -> None:
    config = TurnConfig(agent_ids=[a.id for a in AGENTS], discussion_topic="Is math invented?", initiator_id="mia")
    opened = DirectorState(turn_count=1, agent_responses=[said("mia", "Is math invented? I think so.")])
    messages = [agent_message("mia", "Is math invented? I think so.")]
    prompt = director_prompt(opened, messages, config)
    rule1 = next(line for line in prompt.splitlines() if line.startswith("1. "))
    assert 'the teacher (teacher) guides it' in rule1 and "latest message" not in rule1
    assert director_data(AGENTS, opened, messages, StoreState(), config, ANA)["suggested"] == "teacher"
    compact = build_director_prompt(AGENTS, opened, messages, StoreState(),
                                    config.model_copy(update={"compact_prompts": True}), ANA)
    assert "the teacher guides it" in compact and '{"next_agent": "teacher"}' in compact
    # a later round (the class spoke before it) is under way: no guide line
    later = director_prompt(DirectorState(turn_count=1, agent_responses=[said("mia", "More.")]),
                            [agent_message("teacher", "Earlier."), agent_message("mia", "More.")], config)
    assert "guides it" not in later


def test_the_compact_discussion_lines_fit_a_discussion() -> None:
    teacher = build_agent_prompt(TEACHER, [], ANA, discussion_topic="Is math invented?", compact=True)
    student = build_agent_prompt(MIA, [], ANA, discussion_topic="Is math invented?", compact=True)
    assert "Answer Ana's question" not in teacher and "Guide the discussion" in teacher
    assert "Say 1 short sentence" not in student and "1 or 2 short sentences" in student
    opening = build_agent_context(DirectorState(), StoreState(), True, agent=MIA,
                                  config=TurnConfig(agent_ids=["mia"], discussion_topic="Is math invented?"),
                                  messages=[], profile=ANA)
    assert "in one sentence, then ask" in opening  # two sentences: consistent with "1 or 2"
    qa = build_agent_prompt(TEACHER, [], ANA, compact=True)
    assert "Answer Ana's question" in qa


def test_students_never_get_wb_close_by_default() -> None:
    assert "wb_close" not in allowed_actions(MIA, "whiteboard")
    assert "wb_close" in allowed_actions(TEACHER, "whiteboard")
    assert "wb_close" in allowed_actions(agent("x", "student", allowed_actions=["wb_close"]), "whiteboard")


def test_a_learner_with_no_name_is_the_learner_in_every_prompt() -> None:
    nameless = UserProfile()
    config = TurnConfig(agent_ids=[a.id for a in AGENTS])
    rendered = [build_agent_prompt(TEACHER, ["wb_draw_text"], nameless),
                build_agent_prompt(MIA, [], nameless, compact=True),
                director_prompt(DirectorState(), [Message(role="user", parts=[MessagePart(kind="text", text="Hi")])],
                                config, nameless),
                build_director_prompt(AGENTS, DirectorState(), [], StoreState(),
                                      config.model_copy(update={"compact_prompts": True}), nameless)]
    for text in rendered:
        assert not re.search(r"(?<!# )\bLearner\b", text), text  # a heading "# Learner" is no name
        assert "the learner the learner" not in text and "learner (the learner)" not in text
    assert "the learner" in rendered[0] and "never a made-up name" in rendered[0]
    named = build_agent_prompt(TEACHER, [], UserProfile(nickname="Ana"))
    assert "one human learner, Ana," in named


def test_the_judges_brief_follows_each_roles_length_rule() -> None:
    rubric = resolve(None).render("judge/rubric.j2", {"learner": "Why?"})
    brief = next(line for line in rubric.splitlines() if line.startswith("- brief:"))
    assert "a teacher about 2 to 4" in brief and "an assistant 1 to 3" in brief and "a student 1 or 2" in brief
    assert "rubric-version: maic-judge-2" in resolve(None).source("judge/rubric.j2").text


def test_the_teacher_edits_code_in_place_and_every_drawing_documents_element_id() -> None:
    system = build_agent_prompt(TEACHER, [n for n in CATALOGUE if n.startswith("wb_")], ANA)
    assert "wb_edit_code" in system and "never draw the whole block again" in system
    for name, spec in CATALOGUE.items():
        if name.startswith("wb_draw_"):
            assert '"elementId"' in spec.params, name


def _asks_learner_compiling_each_time(text: str, speaker_role: str, learner: str, others: list[str]) -> bool:
    """asks_learner as it read before its patterns were compiled once: the reference it must agree with."""
    from maic_cli.engine.director_prompt import _TEACHER_WORDS

    text = " ".join(text.split())
    if not text.endswith("?"):
        return False
    last = re.split(r"(?<=[.!?])\s+", text)[-1].lower()
    if learner and learner.lower() != "the learner" and re.search(r"\b" + re.escape(learner.lower()) + r"\b", last):
        return True
    for name in others:
        words = [w for w in {name.lower(), name.lower().split(" ")[-1]} if len(w) >= 3]
        if any(re.search(r"\b" + re.escape(w) + r"\b", last) for w in words):
            return False
    if _TEACHER_WORDS.search(last):
        return False
    return speaker_role != "student"


NAMEISH = st.sampled_from(["Ana", "Ms. Rivera", "Mia", "Sam", "the learner", "a.b", "Zoë", "(x)", "Leo Li", ""])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["Ana", "Mia", "ms. rivera", "Sam", "sir", "why", "?", ".", "!", " ", "\n", "a.b",
                                 "Zoë", "(x)", "leo li", "teacher"]), max_size=16).map("".join),
       st.sampled_from(["teacher", "assistant", "student"]), NAMEISH, st.lists(NAMEISH, max_size=3))
def test_asks_learner_reads_as_it_did_with_its_patterns_compiled_once(text: str, role: str, learner: str,
                                                                         others: list[str]) -> None:
    assert asks_learner(text, role, learner, others) is _asks_learner_compiling_each_time(text, role, learner, others)
