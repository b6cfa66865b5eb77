"""The answer a lesson expects to give, said; and a discussion closed on a small model (pure engine).

* :func:`answer_expected` — a learner question that matches one of the lesson's expected questions
  (lessons/faq.py) is answered with its ``a``: on a small model (compact prompts) said as written, in
  the card of the faq's ``by`` agent (when it is in the class), else of the classmate the learner called
  by name, else of the teacher — a ``grounding`` event of kind ``expected`` first, with no model call;
  on a provider model the round is played with the answer in the agent's prompt as what the lesson
  says (``LessonContext.grounding``), the ``by`` agent (or the one called) answering first.
* :func:`close_discussion` — on a small model a discussion is no open-ended live round: the learner's
  reply has had its one answer, then the discussion's ``close:`` lines are played (or, without them, a
  short closing made of the teacher's statements in its script), once (``progress.closed``).
* :func:`reply_in_discussion` — that one answer when no expected question matches: the lesson's closest
  sentences as prose (a statement offered as a check), or, with nothing of the lesson to say, a thanks.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncGenerator
from typing import Protocol

from ..engine.events import AgentEndEvent, AgentStartEvent, Event, GroundingEvent, TextDeltaEvent
from ..engine.models import AgentConfig, LessonContext, RoundOverrides, new_id
from ..engine.round import RoundResult
from ..engine.runner import ClassRunner
from ..replies.prose import compose, sentences
from .context import LessonTask
from .faq import Match
from .lesson import DiscussionScene, LessonPlay, Scene, ScriptStep


class LessonPlayer(Protocol):
    """What this module needs of the lesson player (lessons/player.py)."""

    runner: ClassRunner
    play: LessonPlay
    pace: float | None

    @property
    def scene(self) -> Scene: ...
    @property
    def teacher(self) -> AgentConfig: ...
    def context(self, task: LessonTask = "question") -> LessonContext: ...

WORDS = re.compile(r"\S+\s*")
CLOSING_LINES = 2  # the teacher's statements a closing made from a discussion's script holds
THANKS = "Thanks, that is a good point."  # no word of its own: nothing the lesson would have to say


async def says(agent: AgentConfig, text: str, before: list[Event], pace: float | None) -> AsyncGenerator[Event, None]:
    """``before`` (a grounding event), then ``text`` as one message in ``agent``'s card."""
    for event in before:
        yield event
    message_id = new_id("msg")
    yield AgentStartEvent(message_id=message_id, agent_id=agent.id, agent_name=agent.name, avatar=agent.avatar,
                          color=agent.color)
    for number, chunk in enumerate(WORDS.findall(text)):
        await asyncio.sleep((pace or 0) if number else 0)
        yield TextDeltaEvent(message_id=message_id, content=chunk)
    yield AgentEndEvent(message_id=message_id, agent_id=agent.id)


def _speaker(player: LessonPlayer, text: str, by: str | None) -> AgentConfig:
    runner = player.runner
    if by is not None and by in runner.agents:
        return runner.agents[by]
    return runner.agents.get(runner.trigger_for(text) or "") or player.teacher


async def answer_expected(player: LessonPlayer, text: str, matched: Match) -> RoundResult:
    """The learner's ``text``, answered with the expected question it matched (see the module)."""
    runner, faq = player.runner, matched.expected.faq
    if not runner.spec.compact_prompts:  # the by agent first, else whom the learner called, else the director's pick
        lesson = player.context().model_copy(update={"grounding": [faq.a], "beyond": False, "answer": None})
        runner.add_learner_message(text)
        trigger = faq.by if faq.by in runner.agents else runner.trigger_for(text)
        return await runner.play_round(trigger, overrides=RoundOverrides(lesson=lesson))
    speaker = _speaker(player, text, faq.by)
    runner.add_learner_message(text)
    grounded = GroundingEvent(kind="expected", question=text[:500], sentences=[faq.a])
    result = await runner.play_scripted(says(speaker, faq.a, [grounded], player.pace), trigger=speaker.id)
    if result.reason not in ("aborted", "error"):
        await close_discussion(player)
    return result


async def reply_in_discussion(player: LessonPlayer, text: str, answer: str | None) -> RoundResult:
    """On a small model, the learner's reply in a discussion: one answer from the teacher (``answer``: the
    lesson's closest sentences, composed), then the closing."""
    runner, teacher = player.runner, player.teacher
    runner.add_learner_message(text)
    result = await runner.play_scripted(says(teacher, answer or THANKS, [], player.pace), trigger=teacher.id)
    if result.reason not in ("aborted", "error"):
        await close_discussion(player)
    return result


def closing(scene: DiscussionScene) -> list[ScriptStep]:
    """The discussion's ``close:`` lines, or a short closing made of its teacher's statements (not its
    questions), the last ones said."""
    if scene.close:
        return list(scene.close)
    statements = [sentence for step in scene.script if step.say and step.by is None
                  for sentence in sentences(step.say) if not sentence.endswith("?") and len(sentence.split()) >= 5]
    said = compose(statements[-CLOSING_LINES:])
    return [ScriptStep(say=f"To sum up: {said[0].lower() + said[1:]}" if said else "Thank you all, "
                       "that was a good discussion.")]


async def close_discussion(player: LessonPlayer) -> None:
    """At a discussion on a small model whose closing has not been played: play it (see the module)."""
    scene, progress = player.scene, player.play.progress
    if not isinstance(scene, DiscussionScene) or not player.runner.spec.compact_prompts or scene.id in progress.closed:
        return
    from .script import script_events

    steps = closing(scene)
    teacher = player.teacher
    mark = type(progress)(step=0)  # a scratch progress: the closing's steps are not the scene's script's
    await player.runner.play_scripted(script_events(steps, mark, teacher, player.runner.members(), pace=player.pace),
                                      trigger=teacher.id)
    progress.closed.append(scene.id)
    if scene.id not in progress.discussed:
        progress.discussed.append(scene.id)
    player.runner.save()
