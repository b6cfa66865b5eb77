"""A slide with no script, lectured on a small model: read from its own elements.  Pure engine.

A 135M model asked to lecture a slide it has never seen explained invents ("1/4 = half") and points
at elements of other slides.  So on a small model (the spec's compact prompts) the lecture of a slide
without a script is the slide itself, said by the teacher as one message: each element in order,
spotlighted as it is read, its text as sentences (a bullet, a text's sentences, a formula, a table's
rows with their headers, a picture's description), joined by fixed phrases that say nothing of the
subject.  Every sentence made from the slide passes the lesson's gate (replies/gate.py) or is left
out, so nothing is said that the lesson does not say.  A hosted model lectures such a slide live.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncGenerator

from ..engine.events import ActionEvent, AgentEndEvent, AgentStartEvent, Event, TextDeltaEvent
from ..engine.models import AgentConfig, SlideElement, new_id
from ..engine.round import RoundResult
from ..replies.gate import Ground, build_ground, passes
from .ask import LessonPlayer
from .grounding import as_sentence, lesson_sources
from .lesson import SlideScene

WORDS = re.compile(r"\S+\s*")
MOST_SENTENCES = 14  # a slide read out at most this long
MOST_ROWS = 6  # of a table
POINTED = ("text", "bullets", "formula", "table", "image", "chart", "code", "video", "shape")
OPENINGS = {"open": "Let us begin.", "continue": "Next:", "close": "One last slide:", "only": "Today:"}


def _lower_first(text: str) -> str:
    """``A clock face`` → ``a clock face`` (a description said after "The picture shows")."""
    return text[0].lower() + text[1:] if text[:1].isupper() and not text[1:2].isupper() else text


def _row(header: list[str], row: list[str]) -> str:
    cells = [c.strip() for c in row]
    if not header or len(header) != len(cells):
        return "; ".join(c for c in cells if c)
    head = f"{header[0]} {cells[0]}".strip()
    rest = ", ".join(f"{_lower_first(h)} {c}".strip() for h, c in zip(header[1:], cells[1:], strict=True) if c)
    return f"{head}: {rest}" if rest else head


def element_sentences(element: SlideElement) -> list[str]:
    """What the teacher says of one element, in the slide's own words."""
    content = " ".join((element.content or "").split())
    if element.type == "bullets":
        return [as_sentence(" ".join(item.split())) for item in element.items if item.strip()]
    if element.type == "table":
        rows = [[" ".join(c.split()) for c in row] for row in element.rows if any(c.strip() for c in row)]
        header = rows[0] if len(rows) > 1 else []
        return [as_sentence(_row(header, row)) for row in rows[1 if header else 0:][:MOST_ROWS]]
    if not content:
        return []
    if element.type == "formula":
        return [as_sentence(f"On the slide: {content}")]
    if element.type in ("image", "chart", "video", "shape"):
        return [as_sentence(f"The picture shows {_lower_first(content)}")]
    if element.type == "code":
        return []  # code is shown, not read aloud
    return [as_sentence(content)]


def slide_lecture(scene: SlideScene, ground: Ground, stage: str | None = None) -> list[tuple[str | None, str]]:
    """The lecture as (element to spotlight, what is said) pairs: the slide's sentences that pass the gate."""
    said: list[tuple[str | None, str]] = [(None, f"{OPENINGS.get(stage or '', 'Next:')} {as_sentence(scene.title)}")]
    count = 0
    for element in scene.elements:
        kept = [s for s in element_sentences(element) if passes(s, ground)]
        kept = kept[:max(0, MOST_SENTENCES - count)]
        if kept:
            said.append((element.id if element.type in POINTED else None, " ".join(kept)))
            count += len(kept)
    return said


async def _lecture_events(teacher: AgentConfig, parts: list[tuple[str | None, str]],
                          pace: float | None) -> AsyncGenerator[Event, None]:
    message_id = new_id("msg")
    yield AgentStartEvent(message_id=message_id, agent_id=teacher.id, agent_name=teacher.name,
                          avatar=teacher.avatar, color=teacher.color)
    for number, (element_id, text) in enumerate(parts):
        if element_id is not None:
            yield ActionEvent(action_id=new_id("act"), action_name="spotlight", params={"elementId": element_id},
                              agent_id=teacher.id, message_id=message_id)
        for index, chunk in enumerate(WORDS.findall(text.strip())):
            await asyncio.sleep(0 if number == index == 0 else (pace or 0))  # also where a cancel lands
            yield TextDeltaEvent(message_id=message_id, content=" " + chunk if number and not index else chunk)
    yield AgentEndEvent(message_id=message_id, agent_id=teacher.id)


async def read_slide(player: LessonPlayer, scene: SlideScene, teacher: AgentConfig) -> RoundResult:
    """The slide on screen read out by ``teacher`` as one message (see the module)."""
    lesson = player.lesson
    ground = build_ground(lesson_sources(lesson, player.play.progress.answers.keys(), scene.id),
                          language=(lesson.language or "english").lower())
    parts = slide_lecture(scene, ground, player.context("lecture").stage)
    return await player.runner.play_scripted(_lecture_events(teacher, parts, player.pace), trigger=teacher.id)
