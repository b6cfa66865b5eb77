"""Questions during a lesson answered from it (lessons/ask.py), ``/ask ID``, and a live lecture's context.

A small model (the spec's compact prompts: ``openai/smollm2`` here, served by a fake) has its reply
checked against the lesson and, when it does not carry it, the teacher says the lesson's sentence; a
hosted model gets the same context and its reply always stands.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from maic_cli.engine.classroom import Classroom
from maic_cli.engine.events import ActionEvent, Event, GroundingEvent
from maic_cli.engine.models import TurnConfig
from maic_cli.engine.policies import policy_from_flag
from maic_cli.engine.runner import ClassRunner, RunnerHooks
from maic_cli.lessons.ask import ElementNotOnSlide
from maic_cli.lessons.lesson import LessonPlay
from maic_cli.lessons.player import LessonPlayer
from maic_cli.llm.port import LLMRequest
from maic_cli.llm.scripted import FunctionLLM
from maic_cli.llm.spec import ModelSpec
from maic_cli.store.lessons import load_lesson
from tests.helpers import agent, reply

LESSONS = Path(__file__).parent.parent / "lessons"
CLASS = {a.id: a for a in (agent("teacher", "teacher", "Ms. T"), agent("mia", "student", "Mia"))}
SMALL = ModelSpec.parse("openai/smollm2")
HOSTED = ModelSpec.parse("openai/gpt-4o-mini")


class Log(RunnerHooks):
    def __init__(self) -> None:
        self.events: list[Event] = []

    def event(self, event: Event) -> None:
        self.events.append(event)

    def of(self, kind: type) -> list:
        return [e for e in self.events if isinstance(e, kind)]


def player(answer: str, spec: ModelSpec, lesson: str = "photosynthesis") -> tuple[LessonPlayer, Log, FunctionLLM]:
    """A class of two whose agents all say ``answer``; one agent turn per round."""
    def respond(request: LLMRequest) -> str:
        return json.dumps({"next_agent": "teacher"}) if request.purpose == "director" else reply(answer)

    llm = FunctionLLM(respond, name=spec.raw)
    log = Log()
    runner = ClassRunner(Classroom(), TurnConfig(agent_ids=list(CLASS), max_turns=1), llm, agents=CLASS,
                         hooks=[log], spec=spec)
    play = LessonPlay(lesson=load_lesson(LESSONS / f"{lesson}.yaml"))
    lesson_player = LessonPlayer(runner, play)
    lesson_player.start()
    return lesson_player, log, llm


def agent_texts(lesson_player: LessonPlayer) -> list[str]:
    return [m.text for m in lesson_player.runner.classroom.messages if m.role == "agent"]


def agent_prompts(llm: FunctionLLM) -> list[str]:
    return [call.messages[-1]["content"] for call in llm.calls if call.purpose == "agent"]


WRONG = "Trees get their mass from the soil."
RIGHT = "Most of it comes from carbon dioxide in the air."
QUESTION = "Where does a tree's mass come from?"


def test_small_model_reply_without_the_lesson_is_followed_by_the_lessons_sentence() -> None:
    lesson_player, log, llm = player(WRONG, SMALL)
    asyncio.run(lesson_player.ask(QUESTION))
    texts = agent_texts(lesson_player)
    assert texts[0] == WRONG  # what the model said stays (it is shown), and is corrected in the open
    assert texts[-1].startswith("The lesson puts it this way:") and "carbon dioxide" in texts[-1].lower()
    [event] = log.of(GroundingEvent)
    assert event.kind == "fallback" and event.question == QUESTION and event.sentences
    after = log.events[log.events.index(event):]
    assert not any(isinstance(e, ActionEvent) for e in after)  # a script sentence: no element to point at
    assert "carbon dioxide" in agent_prompts(llm)[0].lower()  # the passages were in its context too


def test_the_fallback_points_at_the_element_it_reads_out() -> None:
    lesson_player, log, _ = player("Plants are nice.", SMALL)
    lesson_player.goto_slide(2)
    asyncio.run(lesson_player.ask("What pigment do chloroplasts hold?"))
    [event] = log.of(GroundingEvent)
    assert "chlorophyll" in event.sentences[0]
    spots = [e for e in log.events[log.events.index(event):] if isinstance(e, ActionEvent)]
    assert [(e.action_name, e.params) for e in spots] == [("spotlight", {"elementId": "where"})]
    assert lesson_player.runner.classroom.store.spotlight == "where"


def test_small_model_reply_that_carries_the_lesson_stands_alone() -> None:
    lesson_player, log, _ = player(RIGHT, SMALL)
    asyncio.run(lesson_player.ask(QUESTION))
    assert agent_texts(lesson_player) == [RIGHT]
    assert log.of(GroundingEvent) == []


def test_hosted_model_gets_the_lessons_sentences_and_its_reply_is_never_replaced() -> None:
    lesson_player, log, llm = player(WRONG, HOSTED)
    asyncio.run(lesson_player.ask(QUESTION))
    assert agent_texts(lesson_player) == [WRONG]
    assert log.of(GroundingEvent) == []
    prompt = agent_prompts(llm)[0]
    assert "What the lesson says that answers this" in prompt
    assert "Most of the mass comes from the carbon dioxide in the air." in prompt


def test_small_model_question_beyond_the_lesson_is_met_honestly_without_a_model_call() -> None:
    lesson_player, log, llm = player(WRONG, SMALL)
    asyncio.run(lesson_player.ask("Why is the sky blue?"))
    assert llm.calls == []
    [said] = agent_texts(lesson_player)
    assert "goes beyond today's lesson" in said and "What a plant needs" in said
    assert [m.text for m in lesson_player.runner.classroom.messages if m.role == "user"] == ["Why is the sky blue?"]
    assert [e.kind for e in log.of(GroundingEvent)] == ["beyond"]


def test_hosted_model_question_beyond_the_lesson_is_told_so_in_its_context() -> None:
    lesson_player, log, llm = player("The sky scatters blue light.", HOSTED)
    asyncio.run(lesson_player.ask("Why is the sky blue?"))
    assert agent_texts(lesson_player) == ["The sky scatters blue light."]
    assert "goes beyond today's lesson" in agent_prompts(llm)[0]
    assert log.of(GroundingEvent) == []


def test_the_grounding_holds_for_its_question_only() -> None:
    lesson_player, _, _ = player(RIGHT, HOSTED)
    asyncio.run(lesson_player.ask(QUESTION))
    lesson = lesson_player.runner.lesson
    assert lesson is not None and lesson.grounding == [] and not lesson.beyond and lesson.focus is None


def test_ask_about_an_element_spotlights_it_and_gives_it_whole() -> None:
    lesson_player, log, llm = player("The pores are called stomata.", HOSTED)
    asyncio.run(lesson_player.ask("what are the pores?", about="leaf"))
    spot = [e for e in log.of(ActionEvent) if e.params == {"elementId": "leaf"}]
    assert spot and spot[0].action_name == "spotlight"
    assert lesson_player.runner.classroom.store.spotlight == "leaf"
    prompt = agent_prompts(llm)[0]
    whole = "water up through the stem"  # past the first 100 characters of the element
    assert "asks about this element of the slide" in prompt and whole in prompt
    user = [m.text for m in lesson_player.runner.classroom.messages if m.role == "user"]
    assert user == ["About [leaf]: what are the pores?"]


def test_ask_about_an_unknown_element_changes_nothing() -> None:
    lesson_player, log, llm = player(RIGHT, HOSTED)
    before = len(log.events)
    with pytest.raises(ElementNotOnSlide, match=r"no element 'nope' on this slide \(its elements: question, inputs"):
        asyncio.run(lesson_player.ask("why?", about="nope"))
    assert len(log.events) == before and llm.calls == [] and lesson_player.progress.state == "lecture"


def test_a_live_lecture_sees_each_element_whole_and_its_place_in_the_lesson() -> None:
    lesson_player, _, llm = player("Almost every food chain starts with photosynthesis.", HOSTED)
    long_item = "It takes carbon dioxide out of the air " + "and keeps doing so all year " * 6
    lesson = lesson_player.lesson
    lesson.scenes[2].elements[0].items.append(long_item.strip())  # type: ignore[union-attr]
    lesson.scenes[2].script.clear()  # type: ignore[union-attr]  # a slide with no script: lectured live
    lesson_player.start()  # the class's slides are the lesson's as it was opened: open it again
    lesson_player.goto_slide(3)
    asyncio.run(lesson_player.lecture())
    prompt = agent_prompts(llm)[0]
    assert long_item.strip() in prompt  # not cut at 100 characters
    assert "This is the lesson's last slide" in prompt and "summary" in prompt
    lesson_player.goto_slide(2)
    lesson.scenes[1].script.clear()  # type: ignore[union-attr]
    asyncio.run(lesson_player.lecture())
    assert "carry on from the previous slide, without greeting" in agent_prompts(llm)[1]


@pytest.mark.parametrize(("spec", "question", "name"), [
    (HOSTED, QUESTION, "grounded.full"), (SMALL, QUESTION, "grounded.compact"),
    (HOSTED, "Why is the sky blue?", "beyond.full"),
])
def test_grounded_question_prompts_match_golden(spec: ModelSpec, question: str, name: str) -> None:
    from tests.test_prompt_templates import as_text, check_golden

    lesson_player, _, llm = player(RIGHT, spec)
    asyncio.run(lesson_player.ask(question))
    [call] = [c for c in llm.calls if c.purpose == "agent"]
    check_golden(f"agent/teacher-lesson-{name}.txt", as_text(f"agent: teacher, lesson question {name}", call.messages))


def test_chat_on_a_small_model_behind_a_server_says_the_lessons_sentence(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The whole path: ``maic chat --lesson`` on ``openai/smollm2`` (compact prompts, rules director) through
    litellm to the loopback server; the model's off-lesson reply is followed by the lesson's sentence,
    which the transcript records with its ``grounding`` event."""
    from typer.testing import CliRunner

    from maic_cli.cli.app import app
    from maic_cli.testing.openai_server import LoopbackOpenAIServer, ServedReply

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    transcript = tmp_path / "t.jsonl"
    with LoopbackOpenAIServer(default=ServedReply(reply(WRONG))) as server:
        result = CliRunner().invoke(app, [
            "chat", "--model", "openai/smollm2", "--api-base", server.base_url, "--session", str(tmp_path / "s.json"),
            "--lesson", "photosynthesis", "--max-turns", "1", "--transcript", str(transcript)], input=f"{QUESTION}\n")
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert out.index(f"Ms. Rivera: {WRONG}") < out.index(
        "Ms. Rivera: The lesson puts it this way: Most of the mass comes from the carbon dioxide in the air.")
    lines = [json.loads(line) for line in transcript.read_text(encoding="utf-8").splitlines()]
    grounding = [line["event"] for line in lines if line.get("event", {}).get("type") == "grounding"]
    assert [g["kind"] for g in grounding] == ["fallback"]


def test_thanks_is_not_followed_by_a_lesson_sentence() -> None:
    lesson_player, log, _ = player("You are welcome!", SMALL)
    asyncio.run(lesson_player.ask("thanks!"))
    assert agent_texts(lesson_player) == ["You are welcome!"] and log.of(GroundingEvent) == []


@pytest.mark.parametrize(("spec", "said", "read"), [
    (SMALL, "Plants are very nice to look at.", True),
    (SMALL, "Almost every food chain starts with photosynthesis, and it puts oxygen into the air.", False),
    (HOSTED, "Plants are very nice to look at.", False),
])
def test_a_small_models_live_lecture_that_says_nothing_of_the_slide_is_followed_by_the_slide(
        spec: ModelSpec, said: str, read: bool) -> None:
    lesson_player, log, _ = player(said, spec)
    lesson_player.lesson.scenes[2].script.clear()  # type: ignore[union-attr]  # no script: lectured live
    lesson_player.goto_slide(3)
    asyncio.run(lesson_player.lecture())
    texts = agent_texts(lesson_player)
    assert texts[0] == said
    if read:
        assert texts[1] == ("The slide says: Almost every food chain starts with it. It puts the oxygen we breathe "
                            "into the air. It takes carbon dioxide out of the air.")
        assert [e.kind for e in log.of(GroundingEvent)] == ["fallback"]
        assert lesson_player.runner.classroom.store.spotlight == "points"
    else:
        assert len(texts) == 1 and log.of(GroundingEvent) == []
    assert lesson_player.lecture_done


def test_a_students_lucky_phrase_does_not_excuse_the_teachers_wrong_answer() -> None:
    """Seen offline: the teacher gave a wrong formula and the assistant rambled past the word "oxygen"."""
    def respond(request: LLMRequest) -> str:
        if request.purpose == "director":
            return json.dumps({"next_agent": "teacher"})
        said = WRONG if request.agent_id == "teacher" else RIGHT
        return reply(said)

    llm = FunctionLLM(respond, name=SMALL.raw)
    log = Log()
    # the llm policy: the rules (the small model's default) let only the teacher answer a lesson question
    runner = ClassRunner(Classroom(), TurnConfig(agent_ids=list(CLASS), max_turns=2), llm, agents=CLASS,
                         hooks=[log], spec=SMALL, director=policy_from_flag("llm"))
    lesson_player = LessonPlayer(runner, LessonPlay(lesson=load_lesson(LESSONS / "photosynthesis.yaml")))
    lesson_player.start()
    asyncio.run(lesson_player.ask(QUESTION))
    texts = agent_texts(lesson_player)
    assert texts[:2] == [WRONG, RIGHT] and texts[-1].startswith("The lesson puts it this way:")
