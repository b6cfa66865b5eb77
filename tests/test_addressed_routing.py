"""A classmate named at the start of the learner's message answers first, whatever the director says.

The class is played through the :class:`ClassRunner` on a fake model whose director always names the
teacher; under every policy (llm, rules, hybrid, a ``module:function`` hook that always answers
``teacher``) the named agent speaks first — in free chat and in a lesson's grounded question.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from maic_cli.engine.classroom import Classroom
from maic_cli.engine.models import AgentConfig, DirectorState, Message, TurnConfig
from maic_cli.engine.policies import DirectorPolicy, builtin_policy
from maic_cli.engine.runner import ClassRunner
from maic_cli.lessons.lesson import LessonPlay
from maic_cli.lessons.player import LessonPlayer
from maic_cli.llm.port import LLMRequest
from maic_cli.llm.scripted import FunctionLLM
from maic_cli.llm.spec import ModelSpec
from maic_cli.store.lessons import load_lesson
from tests.helpers import agent, decision, reply

ROOT_LESSONS = Path(__file__).resolve().parent.parent / "lessons"
CLASS = {a.id: a for a in (agent("teacher", "teacher", "Ms. Rivera"), agent("assistant", "assistant", "Sam"),
                           agent("curious_student", name="Mia"), agent("class_clown", name="Leo"))}


def always_teacher(agents: Sequence[AgentConfig], state: DirectorState, messages: Sequence[Message],
                   config: TurnConfig) -> str:
    return "teacher"


POLICIES = [builtin_policy("llm"), builtin_policy("rules"), builtin_policy("hybrid"),
            DirectorPolicy("tests.test_addressed_routing:always_teacher", always_teacher)]


def fake(name: str = "function") -> FunctionLLM:
    """The director always picks the teacher, then ends; each agent says who it is."""
    picks: list[str] = []

    def respond(call: LLMRequest) -> str:
        if call.purpose == "director":
            picks.append("x")
            return decision("teacher" if len(picks) == 1 else "END")
        return reply(f"{call.agent_id} speaking about fractions and halves.")
    return FunctionLLM(respond, name=name)


def runner(policy: DirectorPolicy | None, llm: FunctionLLM, spec: ModelSpec | None = None) -> ClassRunner:
    return ClassRunner(Classroom(), TurnConfig(agent_ids=list(CLASS)), llm, agents=CLASS, director=policy,
                       spec=spec)


@pytest.mark.parametrize("policy", POLICIES, ids=lambda p: p.name if p else "none")
@pytest.mark.parametrize(("text", "first"), [
    ("Sam, what do you think: is 6/8 the same as 3/4?", "assistant"),
    ("hey mia what is a half?", "curious_student"),
    ("@class_clown tell a joke", "class_clown"),
    ("What is a half?", None),
    ("I asked Sam, and he said yes", None),
])
def test_the_named_agent_speaks_first_under_every_policy(policy: DirectorPolicy, text: str,
                                                         first: str | None) -> None:
    class_runner = runner(policy, fake())
    result = asyncio.run(class_runner.play(text))
    assert result.speakers, result
    if first is None:
        assert result.speakers[0] == "teacher"  # the director (or the rules) chose as before
    else:
        assert result.speakers[0] == first


@pytest.mark.parametrize("policy", POLICIES, ids=lambda p: p.name if p else "none")
def test_a_named_agent_answers_first_in_a_lesson_question(policy: DirectorPolicy) -> None:
    llm = fake()
    class_runner = runner(policy, llm)
    player = LessonPlayer(class_runner, LessonPlay(lesson=load_lesson(ROOT_LESSONS / "fractions.yaml")))
    player.start()
    player.goto_slide(2)  # "Same amount, different names": 6/8 = 3/4 is on it
    result = asyncio.run(player.ask("Sam, what do you think: is 6/8 the same as 3/4?"))
    assert result.speakers[0] == "assistant"
    first_agent_call = next(c for c in llm.calls if c.purpose == "agent")
    assert first_agent_call.agent_id == "assistant"
    assert "6/8" in json.dumps(first_agent_call.messages)  # the question, grounded in the slide, reached Sam


def test_on_a_small_model_a_question_beyond_the_lesson_is_turned_back_by_the_one_named() -> None:
    llm = fake("openai/smollm2")
    class_runner = runner(None, llm, ModelSpec.parse("openai/smollm2"))
    player = LessonPlayer(class_runner, LessonPlay(lesson=load_lesson(ROOT_LESSONS / "fractions.yaml")))
    player.start()
    result = asyncio.run(player.ask("Mia, who won the football world cup in 1998?"))
    assert result.speakers == ["curious_student"] and not llm.calls
    said = class_runner.classroom.messages[-1]
    assert said.agent_id == "curious_student" and "does not cover that" in said.text


@pytest.mark.parametrize("policy", POLICIES, ids=lambda p: p.name if p else "none")
@pytest.mark.parametrize("text", ["Kit, is it the tilt?", "Hey Curious, why?", "hey kit what now", "Curious Kit: hi",
                                  "kit_student, why?", "Quill? no, Kit"])
def test_a_classmate_is_called_by_any_word_of_its_name(policy: DirectorPolicy, text: str) -> None:
    named = {a.id: a for a in (agent("teacher", "teacher", "Professor Quill"), agent("kit_student", name="Curious Kit"),
                               agent("class_clown", name="Leo"))}
    class_runner = ClassRunner(Classroom(), TurnConfig(agent_ids=list(named)), fake(), agents=named, director=policy)
    result = asyncio.run(class_runner.play(text))
    assert result.speakers[0] == ("teacher" if text.startswith("Quill") else "kit_student")
