"""Questions during a lesson answered from it (lessons/ask.py), ``/ask ID``, and a live lecture's context.

A small model (the spec's compact prompts: ``openai/smollm2`` here, served by a fake) has every sentence
of its reply put through the lesson's gate (replies/gate.py) and, when what is left does not carry the
lesson's answer, the answerer says the lesson's sentence in the same card; a hosted model gets the same
context and its reply always stands.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from maic_cli.engine.classroom import Classroom
from maic_cli.engine.events import ActionEvent, DoneEvent, Event, GroundingEvent
from maic_cli.engine.models import TurnConfig
from maic_cli.engine.policies import policy_from_flag
from maic_cli.engine.runner import ClassRunner, RunnerHooks
from maic_cli.lessons.ask import ElementNotOnSlide
from maic_cli.lessons.lesson import LessonPlay
from maic_cli.lessons.player import LessonPlayer
from maic_cli.llm.port import LLMRequest
from maic_cli.llm.scripted import FunctionLLM
from maic_cli.llm.spec import ModelSpec
from tests.helpers import agent, reply, without_faq, without_faq_file

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
    play = LessonPlay(lesson=without_faq(LESSONS / f"{lesson}.yaml"))
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


def test_small_model_reply_the_gate_refuses_is_never_shown_and_the_teacher_answers_in_one_card() -> None:
    lesson_player, log, llm = player(WRONG, SMALL)
    asyncio.run(lesson_player.ask(QUESTION))
    [said] = agent_texts(lesson_player)  # lesson words strung into a wrong claim: dropped before it is shown
    assert said.startswith("Good question. ") and "carbon dioxide" in said.lower() and WRONG not in said
    assert log.of(GroundingEvent) == []  # said in the teacher's own card, not as a correction
    [done] = [e for e in log.events if isinstance(e, DoneEvent) and e.total_agents]
    assert done.answered_from_lesson and done.ungrounded_sentences >= 1
    assert not any(isinstance(e, ActionEvent) for e in log.events)  # a script sentence: no element to point at
    assert "carbon dioxide" in agent_prompts(llm)[0].lower()  # the passages were in its context too


def test_the_answer_points_at_the_element_it_comes_from() -> None:
    lesson_player, log, _ = player("Plants are very nice.", SMALL)
    lesson_player.goto_slide(2)
    asyncio.run(lesson_player.ask("What pigment do chloroplasts hold?"))
    [said] = agent_texts(lesson_player)  # what passed the gate, then the lesson's line, in one card
    assert said.startswith("Plants are very nice. ") and "green pigment chlorophyll" in said
    spots = [e for e in log.events if isinstance(e, ActionEvent)]
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
    assert "lesson does not cover that" in said and "provider model" in said and "What a plant needs" in said
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
    litellm to the loopback server; the model's wrong reply is never shown: the teacher's one card says the
    lesson's sentence, and the transcript's ``done`` event counts the sentence the gate left out."""
    from typer.testing import CliRunner

    from maic_cli.cli.app import app
    from maic_cli.testing.openai_server import LoopbackOpenAIServer, ServedReply

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    transcript = tmp_path / "t.jsonl"
    with LoopbackOpenAIServer(default=ServedReply(reply(WRONG))) as server:
        result = CliRunner().invoke(app, [
            "chat", "--model", "openai/smollm2", "--api-base", server.base_url, "--session", str(tmp_path / "s.json"),
            "--lesson", str(without_faq_file(LESSONS / "photosynthesis.yaml", tmp_path / "photosynthesis.yaml")),
            "--max-turns", "1", "--transcript", str(transcript)], input=f"{QUESTION}\n")
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert WRONG not in out and "Ms. Rivera: Good question. " in out
    assert "Most of the mass comes from the carbon dioxide in the air." in out
    lines = [json.loads(line) for line in transcript.read_text(encoding="utf-8").splitlines()]
    done = [line["event"] for line in lines if line.get("event", {}).get("type") == "done"]
    assert any(d["answered_from_lesson"] and d["ungrounded_sentences"] for d in done)


def test_thanks_is_not_followed_by_a_lesson_sentence() -> None:
    lesson_player, log, _ = player("You are welcome!", SMALL)
    asyncio.run(lesson_player.ask("thanks!"))
    assert agent_texts(lesson_player) == ["You are welcome!"] and log.of(GroundingEvent) == []


def test_a_small_model_reads_a_slide_without_a_script_from_its_elements() -> None:
    lesson_player, log, llm = player("Plants are very nice to look at.", SMALL)
    lesson_player.lesson.scenes[2].script.clear()  # type: ignore[union-attr]  # no script
    lesson_player.goto_slide(3)
    asyncio.run(lesson_player.lecture())
    assert llm.calls == []  # not free generation: the slide's own sentences
    [said] = agent_texts(lesson_player)
    assert said.startswith("One last slide: Why it matters.")
    assert ("Almost every food chain starts with it. It puts the oxygen we breathe into the air. It takes carbon "
            "dioxide out of the air.") in said
    spots = [e.params["elementId"] for e in log.of(ActionEvent)]
    slide = lesson_player.scene
    assert spots and set(spots) <= {e.id for e in slide.elements}  # type: ignore[union-attr]
    assert lesson_player.lecture_done


def test_a_hosted_model_lectures_a_slide_without_a_script_live() -> None:
    lesson_player, _, llm = player("Plants are very nice to look at.", HOSTED)
    lesson_player.lesson.scenes[2].script.clear()  # type: ignore[union-attr]  # no script: lectured live
    lesson_player.goto_slide(3)
    asyncio.run(lesson_player.lecture())
    assert agent_texts(lesson_player) == ["Plants are very nice to look at."] and llm.calls
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
    lesson_player = LessonPlayer(runner, LessonPlay(lesson=without_faq(LESSONS / "photosynthesis.yaml")))
    lesson_player.start()
    asyncio.run(lesson_player.ask(QUESTION))
    texts = agent_texts(lesson_player)  # the teacher's wrong reply never shows: its card is the lesson's answer
    assert texts[0].startswith("Good question. ") and not any(WRONG in text for text in texts)
    assert log.of(GroundingEvent) == []  # (Mia's line, a copy of the teacher's answer, is left out as one)
