"""A scene's script played as events: each speaker in its own card (lessons/player.py plays it).

A step's ``by:`` names who says it — a classmate, the assistant — and that line is shown in that
agent's own card (its ``agent_start``/``text``/``agent_end`` message with its name, avatar and
colour); a step without ``by:`` is the teacher's, and so is a ``by:`` naming nobody in the class
(``maic lesson check`` warns about it).  Consecutive steps of one speaker share a card; a new
speaker closes the card and opens its own.  A ``spotlight``/``laser`` step is the teacher's: it
joins the teacher's card (opening it after a classmate's line), so an export shows where she pointed.

``progress.step`` moves on right after a step's last event, with no pause in between, so a cancel
falls between steps or inside a ``say`` (which is then said again, whole, in a new card on resume).
Nothing is saved per step: the player saves when the script ends or stops.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence

from ..engine.events import ActionEvent, AgentEndEvent, AgentStartEvent, Event, TextDeltaEvent
from ..engine.models import AgentConfig, new_id
from .lesson import LessonProgress, ScriptStep

WORDS = re.compile(r"\S+\s*")


def speaker(step: ScriptStep, teacher: AgentConfig, members: Sequence[AgentConfig]) -> AgentConfig:
    """Who says ``step``: the class member its ``by:`` names, else the teacher."""
    if step.by is None:
        return teacher
    return next((agent for agent in members if agent.id == step.by), teacher)


def chunks(text: str, after_text: bool) -> list[str]:
    """``text`` in word-sized pieces (a space before the first when the card already has text)."""
    words = WORDS.findall(text.strip())
    if words and after_text:
        words[0] = " " + words[0]
    return words


async def script_events(script: Sequence[ScriptStep], progress: LessonProgress, teacher: AgentConfig,
                        members: Sequence[AgentConfig], *, pace: float | None = None,
                        on_step: Callable[[int], None] | None = None,
                        wait_spoken: Callable[[], Awaitable[None]] | None = None) -> AsyncGenerator[Event, None]:
    """The rest of ``script`` from ``progress.step`` (see the module).  ``wait_spoken`` (a class that speaks,
    chat/speaking.py): awaited before a pointer step, before the next speaker's card and at the end, so the
    spotlight moves and the next card opens when what came before has been heard."""
    card: tuple[str, AgentConfig] | None = None  # the open card: message id, who speaks in it
    said = False  # the open card has text
    while progress.step < len(script):
        step = script[progress.step]
        who = speaker(step, teacher, members) if step.say is not None else teacher  # the teacher points
        if card is None or card[1].id != who.id:
            if card is not None:
                if wait_spoken is not None:
                    await wait_spoken()
                yield AgentEndEvent(message_id=card[0], agent_id=card[1].id)
            card, said = (new_id("msg"), who), False
            yield AgentStartEvent(message_id=card[0], agent_id=who.id, agent_name=who.name,
                                  avatar=who.avatar, color=who.color)
        if step.say is not None:
            for chunk in chunks(step.say, said):
                await asyncio.sleep(pace or 0)  # also where a cancel lands
                yield TextDeltaEvent(message_id=card[0], content=chunk)
            said = True
        else:
            await (wait_spoken() if wait_spoken is not None else asyncio.sleep(0))
            yield ActionEvent(action_id=new_id("act"), action_name="spotlight" if step.spotlight else "laser",
                              params={"elementId": step.target}, agent_id=teacher.id, message_id=card[0])
        progress.step += 1
        if on_step is not None:
            on_step(progress.step)
    if card is not None:
        if wait_spoken is not None:
            await wait_spoken()
        yield AgentEndEvent(message_id=card[0], agent_id=card[1].id)
