"""The turn's facts travel on each LLM request; the fakes act on them, not on the prompts' wording.

Each fake runs the same class twice: with the real prompts, and with the
prompt builders replaced by other words.  What the class does must not change.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from maic_cli.engine import calls
from maic_cli.engine.classroom import Classroom
from maic_cli.engine.models import TurnConfig
from maic_cli.engine.round import run_round
from maic_cli.llm.demo import DemoLLM
from maic_cli.llm.direct import DirectClient
from maic_cli.llm.litellm_client import LitellmClient
from maic_cli.llm.port import LLMClient, TurnFacts, close_llm
from maic_cli.llm.scripted import ScriptedLLM
from maic_cli.testing.openai_server import LoopbackOpenAIServer, classroom_responder
from tests.helpers import agent, decision, reply

CLASS = {a.id: a for a in (agent("teacher", "teacher", "Ms. T"), agent("curious_student", "student", "Cleo"),
                           agent("mia", "student", "Mia"))}
QUESTIONS = ("Why is the sky blue?", "@mia And sunsets?")


def reword_prompts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(calls, "build_director_prompt", lambda *args, **kwargs: "Choose a speaker, please.")
    monkeypatch.setattr(calls, "build_agent_call", lambda *args, **kwargs: (
        [{"role": "system", "content": "Say something helpful."}, {"role": "user", "content": "Go on."}], ""))


def play_class(llm: LLMClient) -> list[tuple[str, list[str], list[str]]]:
    """Each round's stop reason, speakers and agent messages."""
    classroom = Classroom()
    rounds: list[tuple[str, list[str], list[str]]] = []

    async def play() -> None:
        try:
            for question in QUESTIONS:
                classroom.add_learner_message(question)
                before = len(classroom.messages)
                result = await run_round(classroom, TurnConfig(agent_ids=list(CLASS)), llm, registry=CLASS)
                rounds.append((result.reason, result.speakers, [m.text for m in classroom.messages[before:]]))
        finally:
            await close_llm(llm)

    asyncio.run(play())
    return rounds


def test_requests_carry_the_turns_facts() -> None:
    llm = ScriptedLLM([decision("teacher"), reply("Scattering."), decision("USER")])
    classroom = Classroom()
    classroom.add_learner_message("Why is the sky blue?")
    asyncio.run(run_round(classroom, TurnConfig(agent_ids=list(CLASS)), llm, registry=CLASS))
    first, speech, second = llm.calls
    assert first.facts == TurnFacts(turn=0, spoken=(), eligible=("teacher", "curious_student", "mia"),
                                    may_hand_back=False, learner_text="Why is the sky blue?")
    assert speech.facts == TurnFacts(turn=0, learner_text="Why is the sky blue?", agent_role="teacher")
    assert second.facts == TurnFacts(turn=1, spoken=("teacher",), eligible=("curious_student", "mia"),
                                     may_hand_back=True, learner_text="Why is the sky blue?")


def test_the_demo_class_does_not_depend_on_the_prompts_wording(monkeypatch: pytest.MonkeyPatch) -> None:
    plain = play_class(DemoLLM())
    assert [(reason, speakers[0]) for reason, speakers, _ in plain] == [("cue_user", "teacher")] * 2
    assert all(len(speakers) == 2 for _, speakers, _ in plain)  # teacher, then one student
    assert "Why is the sky blue" in plain[0][2][0] and "And sunsets" in plain[1][2][0]  # the learner's words
    reword_prompts(monkeypatch)
    assert play_class(DemoLLM()) == plain


@pytest.mark.parametrize(("client", "structured"), [("litellm", "json_schema"), ("litellm", "json_object"),
                                                     ("direct", "json_schema")])
def test_the_loopback_classroom_does_not_depend_on_the_prompts_wording(
        monkeypatch: pytest.MonkeyPatch, client: str, structured: str) -> None:
    def play() -> list[tuple[str, list[str], list[str]]]:
        with LoopbackOpenAIServer(responder=classroom_responder(reply("Light scatters."), 0.0)) as server:
            kind = DirectClient if client == "direct" else LitellmClient
            rounds = play_class(kind("openai/loopback-model", api_base=server.base_url, api_key="sk-test",
                                     structured=structured))
        assert "learner_text" not in json.dumps(server.requests)  # the facts never reach a provider
        return rounds

    plain = play()
    assert plain == [("cue_user", ["teacher"], ["Light scatters."])] * 2
    reword_prompts(monkeypatch)
    assert play() == plain


def test_the_loopback_classroom_says_it_needs_structured_output() -> None:
    classroom = Classroom()
    classroom.add_learner_message("hi")
    with LoopbackOpenAIServer(responder=classroom_responder(reply("Hi."), 0.0)) as server:
        llm = LitellmClient("openai/loopback-model", api_base=server.base_url, api_key="sk-test", structured="off")
        result = asyncio.run(run_round(classroom, TurnConfig(agent_ids=list(CLASS)), llm, registry=CLASS))
    assert result.reason == "error" and "--structured json_schema" in (result.error or "")
