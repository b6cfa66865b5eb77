"""What is said around a classroom's scenes, read back: discussions (their opening and closing lines) and faqs.

OpenMAIC has no discussion scene and no place for the questions a teacher expects, so maic writes them as
actions, each marked in its description (``formats/openmaic_write.py``):

* ``discussion: said by Name (id)`` — a discussion's opening line, before its ``discussion`` action;
* ``discussion close: said by …`` — a closing line, after it (OpenMAIC plays it when the discussion ends);
* ``discussion faq: said by …`` / ``faq: said by …`` — an expected question of the discussion or of the slide,
  a ``speech`` of the question and its answer (what OpenMAIC says), the entry itself in the action's ``faq``
  (``{q, a}``: every phrasing, the answer as written).

A ``discussion`` action OpenMAIC wrote (``topic``, ``prompt``, ``agentId``) is a discussion with no script.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from pydantic import ValidationError

from ..lessons.lesson import MAX_FAQ, DiscussionScene, ExpectedQuestion, Scene, ScriptStep
from .common import line, text
from .openmaic_class import ClassroomClass
from .openmaic_format import BEFORE, scalar

OPENING, CLOSING, DISCUSSION_FAQ, FAQ = "discussion: ", "discussion close: ", "discussion faq: ", "faq: "


def marked(action: dict[str, Any]) -> str:
    """The mark maic wrote on a speech action (one of the prefixes above), or ``""``."""
    description = scalar(action.get("description"))
    return next((mark for mark in (CLOSING, DISCUSSION_FAQ, OPENING, FAQ) if description.startswith(mark)), "")


def said(action: dict[str, Any], cls: ClassroomClass) -> ScriptStep | None:
    """A speech action as a line of a script, if it says anything."""
    words = text(action["text"]) if isinstance(action.get("text"), str) else ""
    return ScriptStep(say=words, by=cls.said_by(action.get("description"))) if words else None


def expected(action: dict[str, Any], cls: ClassroomClass, notes: Counter[str]) -> ExpectedQuestion | None:
    """A faq speech action's entry (its ``faq``: the phrasings and the answer as maic wrote them)."""
    entry = action.get("faq")
    raw_q = entry.get("q") if isinstance(entry, dict) else None
    phrasings = [line(q, 300) for q in (raw_q if isinstance(raw_q, list) else [raw_q])[:8] if isinstance(q, str)]
    answer = text(entry["a"], 1200) if isinstance(entry, dict) and isinstance(entry.get("a"), str) else ""
    try:
        return ExpectedQuestion(q=phrasings if isinstance(raw_q, list) else phrasings[0], a=answer,
                                by=cls.said_by(action.get("description")))
    except (ValidationError, IndexError):
        notes["expected questions (faq) maic cannot read back"] += 1
        return None


def read_discussions(actions: list[dict[str, Any]], scenes: list[Scene], scene_id: Callable[[str, Any], str],
                     notes: Counter[str], cls: ClassroomClass, before: bool = False) -> None:
    """The ``discussion`` actions of a scene as discussion scenes, each with the lines said just before it and
    the closing lines and faqs after it: those maic wrote as coming before the scene (``before``), or the
    others, after it."""
    lines: list[ScriptStep] = []
    current: dict[str, Any] | None = None  # the discussion being read (its closing lines and faqs follow it)
    skipping = False  # a discussion of the other kind (before / after): its lines are not this call's

    def finish() -> None:
        if current is not None:
            scenes.append(DiscussionScene(**current))

    for action in actions:
        kind, mark = action.get("type"), marked(action) if action.get("type") == "speech" else ""
        if kind == "speech" and mark == OPENING:
            if (step := said(action, cls)) is not None:
                lines.append(step)
        elif kind == "speech" and mark in (CLOSING, DISCUSSION_FAQ):
            if current is None or skipping:
                continue
            if mark == CLOSING and (step := said(action, cls)) is not None and len(current["close"]) < 20:
                current["close"].append(step)
            elif mark == DISCUSSION_FAQ and (entry := expected(action, cls, notes)) is not None \
                    and len(current["faq"]) < MAX_FAQ:
                current["faq"].append(entry)
        elif kind == "discussion":
            finish()
            current, skipping = None, scalar(action.get("description")).startswith(BEFORE) != before
            topic = line(action["topic"], 500) if isinstance(action.get("topic"), str) else ""
            if skipping or not topic:
                if not skipping:
                    notes["discussions without a topic"] += 1
                skipping, lines = True, []
                continue
            prompt = text(action["prompt"], 2000) if isinstance(action.get("prompt"), str) \
                and action["prompt"].strip() else None
            given = action.get("id")
            given = given[len("discussion-"):] if isinstance(given, str) and given.startswith("discussion-") else None
            title = line(action["title"]) if isinstance(action.get("title"), str) and action["title"].strip() \
                else None
            initiator, unknown = cls.opener(action)
            if unknown:
                notes["~discussion(s) whose agentId names no agent of the zip: the class's first student opens "
                      "them"] += 1
            current = {"type": "discussion", "id": scene_id(f"discuss {topic[:30]}", given), "topic": topic,
                       "title": title, "prompt": prompt, "initiator": initiator, "script": lines[:60], "close": [],
                       "faq": []}
            lines = []
    finish()
