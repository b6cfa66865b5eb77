"""A learner's question during a lesson, answered from the lesson (``LessonPlayer.ask`` and ``/ask``).

Pure engine, like the player.  A question the lesson expects (its ``faq:``, matched in other words by
lessons/faq.py) is answered with the lesson's own answer first, on any model (lessons/expected.py).
Otherwise the question is grounded (:func:`~.grounding.ground`): the
lesson's best passages, or the verdict that it goes beyond the lesson, go into the agent and
director prompts (``LessonContext.grounding`` / ``beyond`` / ``focus``) for every model.  Then:

* a hosted model's round is played and stands as it is — its replies are never replaced;
* on a small model (the spec's compact prompts), a question the lesson does not cover (beyond it, or
  with no sentence of the lesson to answer it) is not put to the model at all: the teacher (or the
  classmate the learner called by name, ``Sam, …``) says plainly that the lesson does not cover it and
  that a provider model is for open questions (a ``grounding`` event of kind ``beyond``, then that
  message);
* on a small model, a question of the lesson is played as a round whose every live sentence passes the
  lesson's gate (replies/gate.py, in the engine), with the teacher's grounded answer owed
  (``LessonContext.answer``): whoever answers first says the lesson's lines in their own card when their
  gated reply does not carry them, and says the teacher's grounded line alone ("Good question. …") when
  nothing of their own was left (engine/grounded_turn.py).  Only when no agent spoke at all does the
  teacher say it in a card of its own (a ``grounding`` event of kind ``fallback``).

On a small model at a discussion, the learner's reply gets one answer (the teacher's, composed from the
lesson) and then the discussion's closing (lessons/expected.py), not a live round.

``/ask ID question`` (and ``@ID question``, ID an element of the slide on screen) puts the
spotlight on that element first and gives the class the element whole as the question's context.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncGenerator
from typing import Protocol

from ..engine.addressing import without_call
from ..engine.events import ActionEvent, AgentEndEvent, AgentStartEvent, Event, GroundingEvent, TextDeltaEvent
from ..engine.models import AgentConfig, LessonContext, RoundOverrides, SlideElement, new_id
from ..engine.round import RoundResult
from ..engine.runner import ClassRunner
from ..errors import InputError
from ..replies.prose import is_question
from .context import LessonTask
from .expected import answer_expected, reply_in_discussion
from .faq import match
from .grounding import (
    Grounding,
    Passage,
    beyond_text,
    carries,
    fallback_passages,
    fallback_text,
    ground,
    needs_answer,
)
from .lesson import DiscussionScene, Lesson, LessonPlay, Scene, SlideScene


class LessonPlayer(Protocol):
    """What this module needs of the lesson player (lessons/player.py, which calls it)."""

    runner: ClassRunner
    play: LessonPlay
    pace: float | None

    @property
    def lesson(self) -> Lesson: ...
    @property
    def scene(self) -> Scene: ...
    @property
    def teacher(self) -> AgentConfig: ...
    def position(self) -> str: ...
    def context(self, task: LessonTask = "question") -> LessonContext: ...

WORDS = re.compile(r"\S+\s*")
MAX_FOCUS = 1500  # characters of the element asked about, in the prompt


class ElementNotOnSlide(InputError):
    """``/ask ID``: no element ``ID`` on the slide on screen."""


def element_whole(element: SlideElement, most: int = MAX_FOCUS) -> str:
    """``[id] type: content`` with the whole content (bounded), as the prompts show the element asked about."""
    if element.type == "code" and element.content:
        text = element.content.strip()
    else:
        text = element.plain_text().strip()
    if len(text) > most:
        text = text[:most - 1] + "…"
    return f"[{element.id}] {element.type}: {text}"


def slide_element(player: LessonPlayer, element_id: str) -> SlideElement:
    """The element ``element_id`` of the slide on screen (:class:`ElementNotOnSlide` if there is none)."""
    scene = player.scene
    if not isinstance(scene, SlideScene):
        raise ElementNotOnSlide(f"/ask {element_id}: the lesson is at a {scene.type}, not a slide; ask without an id")
    for element in scene.elements:
        if element.id == element_id:
            return element
    ids = ", ".join(e.id for e in scene.elements) or "none"
    raise ElementNotOnSlide(f"/ask: no element {element_id!r} on this slide (its elements: {ids})")


def element_ids(player: LessonPlayer) -> list[str]:
    """The ids of the slide on screen's elements (none at a quiz or a discussion)."""
    scene = player.scene
    return [e.id for e in scene.elements] if isinstance(scene, SlideScene) else []


async def _teacher_says(teacher: AgentConfig, text: str, before: list[Event],
                        pace: float | None) -> AsyncGenerator[Event, None]:
    """``before`` (the grounding event, a spotlight), then ``text`` as one teacher message."""
    for event in before:
        yield event
    message_id = new_id("msg")
    yield AgentStartEvent(message_id=message_id, agent_id=teacher.id, agent_name=teacher.name,
                          avatar=teacher.avatar, color=teacher.color)
    for number, chunk in enumerate(WORDS.findall(text)):
        await asyncio.sleep((pace or 0) if number else 0)
        yield TextDeltaEvent(message_id=message_id, content=chunk)
    yield AgentEndEvent(message_id=message_id, agent_id=teacher.id)


def _answers(player: LessonPlayer, since: int) -> list[str]:
    """The round's answers that must carry the lesson: the teacher's (the one who answers in a small
    model's Q&A), else everyone's (a question put to a student with ``@id``)."""
    agents = player.runner.agents
    messages = [m for m in player.runner.classroom.messages[since:] if m.role == "agent" and m.text.strip()]
    teacher = [m.text for m in messages if (a := agents.get(m.agent_id or "")) is not None and a.role == "teacher"]
    return teacher or [m.text for m in messages]


async def ask_grounded(player: LessonPlayer, text: str, *, focus: str | None = None,
                       question: str | None = None) -> RoundResult:
    """The learner's ``text``, answered from the lesson (see the module); ``focus``: the slide element it is
    about (already checked), ``question``: what to ground when ``text`` carries more than the question."""
    runner, play = player.runner, player.play
    scene = player.scene
    about = without_call(question if question is not None else text, runner.members())  # "Mia, …": not Mia
    # A question the lesson expects: its own answer (the class's names are not what it asks about).
    matched = match(play.lesson, about, current=scene.id, ignore=[a.name for a in runner.members()])
    if matched is not None:
        return await answer_expected(player, text, matched)
    grounding = ground(play.lesson, about, current=scene.id,
                       answered=play.progress.answers.keys(), focus=focus)
    element = slide_element(player, focus) if focus is not None else None
    beyond = grounding.verdict == "beyond"
    small = runner.spec.compact_prompts
    answer = fallback_text(grounding, about) if small and not beyond and needs_answer(text, grounding) else None
    if small and isinstance(scene, DiscussionScene) and scene.id not in play.progress.closed:
        # The learner's reply in a discussion: one answer, then the closing (no live rounds on a small model).
        # A statement only weakly the lesson's, or beyond it, is thanked rather than checked against a stray line.
        weak = grounding.weak and not is_question(about)
        return await reply_in_discussion(player, text, None if beyond or weak else answer)
    if small and grounding.verdict == "lesson" and answer is None:
        beyond = True  # nothing in the lesson to answer it with: the model would only guess
    # The grounding is this question's only: it goes with this round, not into the scene's context.
    asked = RoundOverrides(lesson=player.context().model_copy(update={
        "grounding": [] if beyond else grounding.lines, "beyond": beyond, "answer": answer,
        "focus": element_whole(element) if element is not None else None}))
    if small and beyond:
        runner.add_learner_message(text)
        grounded = GroundingEvent(kind="beyond", question=text[:500])
        # The one the learner called (``Sam, …``, ``@id``) says it, as that one answers first in a round.
        first = runner.agents.get(runner.trigger_for(text) or "") or player.teacher
        return await runner.play_scripted(
            _teacher_says(first, beyond_text(scene.title if isinstance(scene, SlideScene) else
                                             player.position()), [grounded], player.pace),
            trigger=first.id)
    if answer is not None and focus is None:  # the element the answer comes from, pointed at as it is said
        _point_at(player, fallback_passages(grounding))
    since = len(runner.classroom.messages) + 1  # after the learner's message
    result = await runner.play(text, overrides=asked)
    if small and result.reason not in ("aborted", "error") and needs_answer(text, grounding):
        await _fall_back(player, text, grounding, _answers(player, since))
    return result


def _point_at(player: LessonPlayer, chosen: list[Passage]) -> None:
    """The spotlight on the first element of the slide on screen that ``chosen`` comes from, if any."""
    pointed = next((p.element_id for p in chosen if p.element_id and p.scene_id == player.scene.id), None)
    if pointed is not None:
        teacher = player.teacher
        player.runner.emit(ActionEvent(action_id=new_id("act"), action_name="spotlight",
                                       params={"elementId": pointed}, agent_id=teacher.id, message_id=new_id("msg")))


async def _fall_back(player: LessonPlayer, question: str, grounding: Grounding, replies: list[str]) -> None:
    """When no reply carries the lesson's passages, the teacher says them plainly."""
    language = player.lesson.language or "english"
    if any(carries(reply, grounding, language) for reply in replies):
        return
    said = fallback_text(grounding, question)
    if said is None:
        return
    teacher = player.teacher
    chosen = fallback_passages(grounding)
    before: list[Event] = [GroundingEvent(kind="fallback", question=question[:500], sentences=[p.text for p in chosen])]
    pointed = next((p.element_id for p in chosen if p.element_id and p.scene_id == player.scene.id), None)
    if pointed is not None:
        before.append(ActionEvent(action_id=new_id("act"), action_name="spotlight", params={"elementId": pointed},
                                  agent_id=teacher.id, message_id=new_id("msg")))
    await player.runner.play_scripted(_teacher_says(teacher, said, before, player.pace), trigger=teacher.id)


async def ask_about(player: LessonPlayer, element_id: str, question: str) -> RoundResult:
    """``/ask ID question``: the spotlight on the element, then the question with the element as its context."""
    element = slide_element(player, element_id)
    teacher = player.teacher
    player.runner.emit(ActionEvent(action_id=new_id("act"), action_name="spotlight",
                                   params={"elementId": element.id}, agent_id=teacher.id, message_id=new_id("msg")))
    asked = question.strip() or "What does this mean?"
    return await ask_grounded(player, f"About [{element.id}]: {asked}", focus=element.id, question=asked)
