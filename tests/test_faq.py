"""The questions a teacher expects (``faq:``): matched in other words, answered as written in the ``by``
agent's card on a small model (no model call), given as what the lesson says on a provider model; a
question the faqs do not hold is not matched; a small model's discussion gets one answer, then ``close:``."""

from __future__ import annotations

import asyncio
import json

from maic_cli.engine.classroom import Classroom
from maic_cli.engine.events import Event, GroundingEvent
from maic_cli.engine.models import TurnConfig
from maic_cli.engine.runner import ClassRunner, RunnerHooks
from maic_cli.lessons.faq import kind, match
from maic_cli.lessons.lesson import Lesson, LessonPlay
from maic_cli.lessons.player import LessonPlayer
from maic_cli.llm.port import LLMRequest
from maic_cli.llm.scripted import FunctionLLM
from maic_cli.llm.spec import ModelSpec
from tests.helpers import agent, reply

CLASS = {a.id: a for a in (agent("teacher", "teacher", "Professor Quill"), agent("kit", name="Curious Kit"),
                           agent("leo", name="Leo"))}
VOLCANO = Lesson.model_validate({
    "title": "Volcanoes", "scenes": [
        {"type": "slide", "id": "magma", "title": "Where lava comes from", "elements": [
            {"id": "t", "type": "text", "content": "Deep under the crust the rock is so hot that some of it melts. "
                                                   "Melted rock underground is called magma."},
            {"id": "b", "type": "bullets", "items": ["Magma is lighter than the solid rock around it",
                                                     "So it rises through cracks", "At the surface it is lava"]}],
         "faq": [
             {"q": ["Is magma the same thing as lava?", "What is the difference between magma and lava?"],
              "a": "It is the same melted rock: underground it is called magma, and once it comes out at the "
                   "surface it is called lava."},
             {"q": "Why does magma rise?", "a": "Because it is lighter than the solid rock around it, so it is "
                                                "pushed up through cracks, the way a cork rises in water.",
              "by": "kit"},
             {"q": ["How hot is lava?", "What temperature is lava?"],
              "a": "Very hot: about 700 to 1,200 degrees Celsius, hot enough to melt rock."}]},
        {"type": "discussion", "id": "live", "topic": "Would you live near a volcano?", "initiator": "leo",
         "script": [{"say": "I would, the soil there is great for farming!", "by": "leo"},
                    {"say": "Good point, Leo: volcanic soil is very fertile. What do you think?"}],
         "faq": [{"q": ["Is it dangerous to live near a volcano?", "Is living next to a volcano safe?"],
                  "a": "It can be, so people near active volcanoes watch them closely and have plans to leave."}],
         "close": [{"say": "So a volcano brings both danger and fertile soil."},
                   {"say": "Thanks, everyone!", "by": "kit"}]}]})


def test_a_question_in_other_words_matches_its_expected_question() -> None:
    asked = {
        "so lava and magma are one and the same?": "Is magma the same thing as lava?",
        "how are magma and lava different": "Is magma the same thing as lava?",
        "why does the magma go up?": "Why does magma rise?",
        "what's the temperature of lava": "How hot is lava?",
        "Kit, how hot does lava get?": "How hot is lava?",
    }
    for question, expected in asked.items():
        found = match(VOLCANO, question, "magma", ignore=[a.name for a in CLASS.values()])
        assert found is not None and found.expected.faq.phrasings[0] == expected, question


def test_a_question_the_faqs_do_not_hold_is_not_matched() -> None:
    for question in ["Which is the tallest volcano on Earth?", "What is the capital of Italy?", "thanks!",
                     "how many volcanoes erupt each year?", "Leo, what is your favourite food?"]:
        assert match(VOLCANO, question, "magma", ignore=[a.name for a in CLASS.values()]) is None, question


def test_the_kind_of_a_question() -> None:
    assert [kind(q) for q in ["How hot is lava?", "Why does it rise?", "Is it lava?", "What if it cools?",
                              "When does it erupt?", "lava is hot"]] == ["amount", "why", "yes", "if", "when", "say"]


class Log(RunnerHooks):
    def __init__(self) -> None:
        self.events: list[Event] = []

    def event(self, event: Event) -> None:
        self.events.append(event)


def player(spec: ModelSpec, said: str = "Lava is melted rock.") -> tuple[LessonPlayer, FunctionLLM, Log]:
    def respond(request: LLMRequest) -> str:
        return json.dumps({"next_agent": "teacher"}) if request.purpose == "director" else reply(said)

    llm, log = FunctionLLM(respond, name=spec.raw), Log()
    runner = ClassRunner(Classroom(), TurnConfig(agent_ids=list(CLASS), max_turns=1), llm, agents=CLASS,
                         hooks=[log], spec=spec)
    lesson_player = LessonPlayer(runner, LessonPlay(lesson=VOLCANO.model_copy(deep=True)))
    lesson_player.start()
    return lesson_player, llm, log


def said(lesson_player: LessonPlayer) -> list[tuple[str | None, str]]:
    return [(m.agent_id, m.text) for m in lesson_player.runner.classroom.messages if m.role == "agent"]


def test_on_a_small_model_the_answer_is_said_as_written_in_the_by_agents_card_without_a_model_call() -> None:
    lesson_player, llm, log = player(ModelSpec.parse("openai/smollm2"))
    asyncio.run(lesson_player.ask("why does the magma go up?"))
    faq = VOLCANO.scenes[0].faq[1]  # type: ignore[union-attr]
    assert said(lesson_player) == [("kit", faq.a)] and not llm.calls
    [grounded] = [e for e in log.events if isinstance(e, GroundingEvent)]
    assert grounded.kind == "expected" and grounded.sentences == [faq.a]
    asyncio.run(lesson_player.ask("Leo, is lava the same as magma?"))  # no by: the one called says it
    assert said(lesson_player)[-1] == ("leo", VOLCANO.scenes[0].faq[0].a)  # type: ignore[union-attr]
    asyncio.run(lesson_player.ask("What temperature does lava have?"))  # no by, no one called: the teacher
    assert said(lesson_player)[-1] == ("teacher", VOLCANO.scenes[0].faq[2].a)  # type: ignore[union-attr]


def test_on_a_provider_model_the_answer_is_in_the_prompt_as_what_the_lesson_says() -> None:
    lesson_player, llm, _ = player(ModelSpec.parse("openai/gpt-4o-mini"), "Yes, about 1,000 degrees.")
    asyncio.run(lesson_player.ask("what's the temperature of lava"))
    [call] = [c for c in llm.calls if c.purpose == "agent"]
    assert "about 700 to 1,200 degrees Celsius" in json.dumps(call.messages)
    assert said(lesson_player) == [("teacher", "Yes, about 1,000 degrees.")]  # its own words stand


def test_a_small_models_discussion_answers_once_then_plays_its_close_lines() -> None:
    lesson_player, llm, _ = player(ModelSpec.parse("openai/smollm2"))
    lesson_player.next()
    asyncio.run(lesson_player.discuss())
    opening = said(lesson_player)
    assert [who for who, _ in opening] == ["leo", "teacher"] and not llm.calls  # the script, no live round
    asyncio.run(lesson_player.ask("is it safe to live next to one?"))
    after = said(lesson_player)[len(opening):]
    assert after == [("teacher", VOLCANO.scenes[1].faq[0].a),  # type: ignore[union-attr]
                     ("teacher", "So a volcano brings both danger and fertile soil."), ("kit", "Thanks, everyone!")]
    assert "live" in lesson_player.progress.closed and not llm.calls
    saved = LessonPlay.model_validate_json(lesson_player.play.model_dump_json())
    assert saved.progress.closed == ["live"]


def test_a_statement_in_a_discussion_is_checked_against_the_lesson_not_called_a_question() -> None:
    lesson_player, _, _ = player(ModelSpec.parse("openai/smollm2"))
    lesson_player.next()
    asyncio.run(lesson_player.discuss())
    before = len(said(lesson_player))
    asyncio.run(lesson_player.ask("I think the fertile soil is worth it for farmers."))
    answer = said(lesson_player)[before][1]
    assert "Good question" not in answer and answer.startswith("Let us see what the lesson says. ")
    assert "volcanic soil is very fertile" in answer and answer.endswith("Is that what you mean?")
    assert said(lesson_player)[-1] == ("kit", "Thanks, everyone!")
