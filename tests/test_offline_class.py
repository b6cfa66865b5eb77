"""The offline class's truth, with scripted replies: pointers only where they can be seen (every model), the
lesson's gate on every live sentence of a small model (questions, classmates, discussions), the answer
owed in the answerer's own card, and a model marked small (``--small``) treated as the built-in one.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from maic_cli.engine.classroom import Classroom
from maic_cli.engine.events import ActionEvent, DoneEvent, Event
from maic_cli.engine.models import TurnConfig
from maic_cli.engine.runner import ClassRunner, RunnerHooks
from maic_cli.lessons.lesson import DiscussionScene, LessonPlay
from maic_cli.lessons.player import LessonPlayer
from maic_cli.llm.port import LLMRequest
from maic_cli.llm.scripted import FunctionLLM
from maic_cli.llm.spec import ModelSpec
from maic_cli.replies.gate import build_ground, passes, sentences
from tests.helpers import action, agent, reply, without_faq

LESSONS = Path(__file__).parent.parent / "lessons"
CLASS = {a.id: a for a in (agent("teacher", "teacher", "Ms. T"),
                           agent("mia", "student", "Mia", allowed_actions=["spotlight", "laser"]))}
SMALL = ModelSpec.parse("openai/smollm2")
HOSTED = ModelSpec.parse("openai/gpt-4o-mini")
FALSE = "Add one half to it, you get four fifths."  # said in the discussion
TRUE = "The parts must be equal."


class Log(RunnerHooks):
    def __init__(self) -> None:
        self.events: list[Event] = []

    def event(self, event: Event) -> None:
        self.events.append(event)

    def dones(self) -> list[DoneEvent]:
        return [e for e in self.events if isinstance(e, DoneEvent)]

    def pointers(self) -> list[str]:
        return [str(e.params["elementId"]) for e in self.events
                if isinstance(e, ActionEvent) and e.action_name in ("spotlight", "laser")]


def lesson_class(answer: Callable[[LLMRequest], str], spec: ModelSpec, *, turns: int = 1,
                 next_agent: str = "teacher") -> tuple[LessonPlayer, Log]:
    def respond(request: LLMRequest) -> str:
        return json.dumps({"next_agent": next_agent}) if request.purpose == "director" else answer(request)

    log = Log()
    runner = ClassRunner(Classroom(), TurnConfig(agent_ids=list(CLASS), max_turns=turns),
                         FunctionLLM(respond, name=spec.raw), agents=CLASS, hooks=[log], spec=spec)
    lesson_player = LessonPlayer(runner, LessonPlay(lesson=without_faq(LESSONS / "fractions.yaml")))
    lesson_player.start()
    return lesson_player, log


def agent_texts(lesson_player: LessonPlayer) -> list[tuple[str | None, str]]:
    return [(m.agent_id, m.text) for m in lesson_player.runner.classroom.messages if m.role == "agent"]


@pytest.mark.parametrize("spec", [SMALL, HOSTED])
def test_a_pointer_at_an_element_of_another_slide_is_dropped_and_counted(spec: ModelSpec) -> None:
    said = reply(action("spotlight", elementId="different_bottom"), "Half an hour is 30 minutes.",
                 action("laser", elementId="examples"))
    lesson_player, log = lesson_class(lambda _: said, spec)
    lesson_player.goto_slide(4)  # "Fractions around you": different_bottom is on slide 3
    asyncio.run(lesson_player.ask("What is half an hour?"))
    assert "different_bottom" not in log.pointers() and "examples" in log.pointers()
    assert sum(d.dropped_pointers for d in log.dones()) == 1
    assert lesson_player.runner.classroom.store.spotlight != "different_bottom"


def test_no_pointer_at_a_discussion() -> None:
    said = reply(action("spotlight", elementId="examples"), "I would rather have one half of the cake.")
    lesson_player, log = lesson_class(lambda _: said, HOSTED, next_agent="END")
    lesson_player.play.progress.scene = 4  # the discussion (slide 4 stays on screen)
    lesson_player.start()
    asyncio.run(lesson_player.discuss())
    assert log.pointers() == [] and sum(d.dropped_pointers for d in log.dones()) >= 1


def test_a_small_models_discussion_plays_no_live_round_and_closes_after_one_answer() -> None:
    lines = iter([reply(FALSE), reply(FALSE), reply(TRUE)])
    lesson_player, _ = lesson_class(lambda _: next(lines, reply(TRUE)), SMALL, turns=2, next_agent="mia")
    lesson_player.play.progress.scene = 4
    lesson_player.start()
    scene = lesson_player.scene
    assert isinstance(scene, DiscussionScene)
    asyncio.run(lesson_player.discuss())
    said = [text for _, text in agent_texts(lesson_player)]
    assert FALSE not in " ".join(said) and len(said) >= 1  # its script, no live round
    assert scene.id in lesson_player.progress.discussed
    asyncio.run(lesson_player.ask("I would take the half, it is bigger."))
    after = agent_texts(lesson_player)[len(said):]
    assert FALSE not in " ".join(text for _, text in after)
    assert "Good question" not in after[0][1]  # a statement is not called a question
    closing = [step.say or "" for step in scene.close]
    assert len(after) >= 2 and (not closing or closing[-1] in after[-1][1] or closing[-1] in " ".join(
        text for _, text in after))
    assert scene.id in lesson_player.progress.closed
    before = len(lesson_player.runner.classroom.messages)
    asyncio.run(lesson_player.ask("Why are the slices equal?"))  # closed: back to questions, no closing again
    again = [text for _, text in agent_texts(lesson_player)][len(said) + len(after):]
    assert again and all("To sum up" not in text for text in again)
    assert len(lesson_player.runner.classroom.messages) > before


def test_a_hosted_models_discussion_is_not_gated() -> None:
    lesson_player, _ = lesson_class(lambda _: reply(FALSE), HOSTED, next_agent="END")
    lesson_player.play.progress.scene = 4
    lesson_player.start()
    asyncio.run(lesson_player.discuss())
    assert FALSE in " ".join(text for _, text in agent_texts(lesson_player))


def test_a_classmate_asked_by_name_answers_from_the_lesson_in_their_own_card() -> None:
    lesson_player, log = lesson_class(lambda _: reply("3/12 = (4 × 6) / 8."), SMALL)
    lesson_player.goto_slide(2)
    asyncio.run(lesson_player.ask("@mia is 6/8 the same as 3/4?"))
    [(who, text)] = agent_texts(lesson_player)
    assert who == "mia" and text.startswith("From the lesson: ") and "6/8 = 3/4" in text and "3/12" not in text
    assert any(d.answered_from_lesson for d in log.dones())


def test_what_passes_the_gate_stays_and_the_lesson_line_follows_in_the_same_card() -> None:
    lesson_player, _ = lesson_class(lambda _: reply("Good question.", TRUE, "7.65 is the proof."), SMALL)
    asyncio.run(lesson_player.ask("Why do the slices have to be the same size?"))
    [(who, text)] = agent_texts(lesson_player)
    assert who == "teacher" and "7.65" not in text and text.startswith("Good question. The parts must be equal.")


def test_every_sentence_a_small_class_shows_passes_the_gate() -> None:
    noise = iter([reply("1. A fraction says that there are parts equal to a whole; 2."),
                  reply("Add one half to it, you get four fifths.", "Six eighths is three quarters.")])
    lesson_player, _ = lesson_class(lambda _: next(noise, reply("One full day.")), SMALL, turns=2)
    for question in ["Why do the slices have to be the same size?", "Is 6/8 the same as 3/4?"]:
        asyncio.run(lesson_player.ask(question))
    lesson = lesson_player.lesson
    from maic_cli.lessons.grounding import lesson_sources

    ground = build_ground(lesson_sources(lesson), ["Why do the slices have to be the same size?",
                                                   "Is 6/8 the same as 3/4?"], names=["Ms. T", "Mia"])
    shown = [s for _, text in agent_texts(lesson_player) for s in sentences(text)]
    assert shown and all(passes(s, ground) for s in shown), shown


def test_a_model_marked_small_is_treated_as_the_built_in_one(monkeypatch: pytest.MonkeyPatch,
                                                            tmp_path: Path) -> None:
    from maic_cli.chat.setup import resolve_model
    from maic_cli.store.config import load_settings

    monkeypatch.setenv("MAIC_HOME", str(tmp_path))
    assert ModelSpec.parse("openai/qwen2.5-0.5b", small=True).compact_prompts
    assert not ModelSpec.parse("openai/qwen2.5-0.5b").compact_prompts
    assert resolve_model(load_settings({"model": "openai/qwen2.5-0.5b", "small": True}), None).compact_prompts
    monkeypatch.setenv("MAIC_SMALL", "1")
    assert resolve_model(load_settings({"model": "openai/qwen2.5-0.5b"}), None).compact_prompts
    monkeypatch.delenv("MAIC_SMALL")
    (tmp_path / "config.yaml").write_text("small: true\n", encoding="utf-8")
    assert resolve_model(load_settings({"model": "openai/qwen2.5-0.5b"}), None).compact_prompts


def test_an_answer_after_a_colon_is_owed_too_so_the_reply_and_the_line_share_one_card() -> None:
    lesson_player, _ = lesson_class(lambda _: reply("What about the slices?"), SMALL)
    asyncio.run(lesson_player.ask("I don't get it, can you say it again?"))  # about the slide: "Let me put it again:"
    [(who, text)] = agent_texts(lesson_player)
    assert who == "teacher" and text.startswith("What about the slices? ") and "equal parts" in text
