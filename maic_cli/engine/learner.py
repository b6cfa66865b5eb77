"""A simulated learner: a model that plays the learner's seat, from a learner profile.

:class:`LearnerProfile` is what a learner file (store/learners.py) holds: a name,
a level, a persona, what they know, their misconceptions, optionally an incorrect
solution they believe, and how they behave (follow-up questions, giving up after
N turns, answering when asked).  Every text in it is cleaned of terminal control
sequences when read: a learner file may come from someone else.

:class:`SimulatedLearner` builds the learner's prompt from the profile and the
class so far, asks its own model (``purpose="learner"``: its calls are counted and
priced apart from the class's and the judge's), and reads the reply — bounded,
cleaned, one utterance, plain text: a model that answers as an agent would (a JSON array of
text and action items, a JSON object) is reduced to the speech in it, and a JSON reply with
no speech is a model failure (:class:`~maic_cli.llm.port.LLMError`), never said raw.  A reply that
ends with ``<done>`` means the learner is satisfied: what it says before the marker is its last line.
Pure: no files, no terminal; the caller decides when to stop (:meth:`SimulatedLearner.may_speak`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ..llm.port import LLMClient, LLMError, LLMRequest, TurnFacts, read_reply
from ..replies.parser import StructuredStreamParser
from ..replies.parser_items import TextItem
from ..untrusted import clean
from .models import Message, UserProfile

DONE = re.compile(r"<\s*done\s*>", re.IGNORECASE)
MAX_REPLY_CHARS = 4_000  # read of one learner reply (a server ignoring max_tokens stops here)
MAX_UTTERANCE_CHARS = 1_500  # kept of it
MAX_HISTORY_MESSAGES = 30  # the latest messages of the class shown to the learner
MAX_MESSAGE_CHARS = 2_000  # of each
MAX_TOKENS = 300
DEFAULT_TURNS = 8  # a learner file that gives no limit speaks at most this many times


def _cleaned(value: object) -> object:
    if isinstance(value, str):
        return clean(value).strip()
    if isinstance(value, list):
        return [clean(v).strip() if isinstance(v, str) else v for v in value]
    return value


class Behaviour(BaseModel):
    model_config = ConfigDict(extra="forbid")

    asks_follow_ups: bool = True  # asks about what is unclear, rather than only answering
    answers_when_asked: bool = True  # answers the class's questions (else: says what it thinks)
    gives_up_after: int | None = Field(default=None, ge=1, le=50)  # learner turns before it stops


class LearnerProfile(BaseModel):
    """A simulated learner, as a learner file describes them."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=80)
    level: str = Field(default="", max_length=200)
    persona: str = Field(default="", max_length=2_000)
    knows: list[str] = Field(default_factory=list, max_length=30)
    misconceptions: list[str] = Field(default_factory=list, max_length=30)
    incorrect_solution: str | None = Field(default=None, max_length=8_000)
    opening: str | None = Field(default=None, max_length=2_000)  # what they say first (else: the model's)
    behaviour: Behaviour = Field(default_factory=Behaviour)

    @field_validator("name", "level", "persona", "knows", "misconceptions", "incorrect_solution", "opening",
                     mode="before")
    @classmethod
    def _clean(cls, value: object) -> object:
        return _cleaned(value)

    @field_validator("knows", "misconceptions")
    @classmethod
    def _short_items(cls, items: list[str]) -> list[str]:
        if any(len(item) > 500 for item in items):
            raise ValueError("each item at most 500 characters")
        return [item for item in items if item]

    def user_profile(self) -> UserProfile:
        """How the class sees this learner (its name, and its level and persona as the bio)."""
        bio = ". ".join(part for part in (self.level, self.persona) if part)
        return UserProfile(nickname=self.name, bio=bio[:500])

    def first_line(self) -> str | None:
        """What the learner opens with when the file says it (``None``: its model writes it)."""
        if self.opening:
            return self.opening
        if self.incorrect_solution:
            return "Here is my solution:\n" + self.incorrect_solution.replace("\\n", "\n").strip()
        return None


@dataclass(frozen=True)
class LearnerMove:
    text: str  # what the learner says ("" : nothing)
    done: bool  # satisfied (or silent): it speaks no more


def system_prompt(profile: LearnerProfile) -> str:
    b = profile.behaviour
    lines = [f"You are role-playing {profile.name}, a learner in a class"
             + (f" ({profile.level})" if profile.level else "") + ". Stay in character: you are the learner, "
             "not a teacher and not an assistant."]
    if profile.persona:
        lines.append(f"Who you are: {profile.persona}")
    if profile.knows:
        lines.append("What you already know:\n" + "\n".join(f"- {item}" for item in profile.knows))
    if profile.misconceptions:
        lines.append("What you believe (mistakenly; you hold on to it until someone helps you see why it is "
                     "wrong):\n" + "\n".join(f"- {item}" for item in profile.misconceptions))
    if profile.incorrect_solution:
        lines.append("Your solution, which you believe is right (it is not; do not fix it on your own — change "
                     "your mind only when the class's questions or hints lead you to see the mistake yourself):\n"
                     + profile.incorrect_solution.replace("\\n", "\n").strip())
    how = ["Answer the questions the class asks you, showing your reasoning." if b.answers_when_asked
           else "You rarely answer questions directly; you say what you think instead.",
           "Ask a short follow-up question when something is unclear to you." if b.asks_follow_ups
           else "You do not ask questions of your own."]
    lines.append("How you behave:\n" + "\n".join(f"- {item}" for item in how))
    lines.append("Reply with only what you say next: one to three sentences of plain text, no name in front, "
                 "no stage directions. When you have understood and have nothing more to ask, end your reply "
                 "with <done>.")
    return "\n\n".join(lines)


def history(messages: Sequence[Message]) -> list[dict[str, str]]:
    """The class so far from the learner's side: its own lines are ``assistant``, the class's ``user``
    (each agent named; consecutive agents in one message), the latest ``MAX_HISTORY_MESSAGES`` only."""
    shown: list[dict[str, str]] = []
    for message in messages[-MAX_HISTORY_MESSAGES:]:
        text = message.text.strip()[:MAX_MESSAGE_CHARS]
        if not text:
            continue
        if message.role == "user":
            shown.append({"role": "assistant", "content": text})
            continue
        line = f"{message.agent_name or message.agent_id or 'Teacher'}: {text}"
        if shown and shown[-1]["role"] == "user":
            shown[-1]["content"] += "\n\n" + line
        else:
            shown.append({"role": "user", "content": line})
    if not shown or shown[0]["role"] != "user":  # a chat starts with the other side
        shown.insert(0, {"role": "user", "content": "(The class begins.)"})
    return shown


_FENCE = re.compile(r"^\s*```[\w-]*\s*\n?|\n?\s*```\s*$")
_JSON_START = re.compile(r'^\s*(?:\[\s*[\[{"\]]|\{\s*["}])')
_ITEMS_INSIDE = re.compile(r'\[\s*\{\s*"type"\s*:')
_SPEECH_KEYS = ("content", "text", "speech", "say", "utterance", "message", "reply", "answer")


def _said_in(value: Any, depth: int = 0) -> list[str]:
    """The speech in a parsed JSON reply: text items of an array (actions say nothing), an object's text."""
    if isinstance(value, str):
        return [value] if depth else []  # a bare JSON string is said; so is a string in an array
    if isinstance(value, list) and depth < 2:
        return [text for item in value for text in _said_in(item, depth + 1)]
    if isinstance(value, dict) and value.get("type", "text") in ("text", "speech"):
        return next(([value[key]] for key in _SPEECH_KEYS if isinstance(value.get(key), str)), [])
    return []


def json_speech(reply: str) -> str | None:
    """What a reply written as JSON says (``""``: nothing); ``None`` when the reply is not JSON.  JSON is
    what parses as an array, an object or a string, and what looks like an agent's items or an object but
    is cut off or wrapped in prose (``[laughs] I think…`` is text)."""
    text = _FENCE.sub("", reply.strip())
    if text[:1] in ('[', '{', '"'):
        try:
            value = json.loads(text)
        except (ValueError, RecursionError):
            pass
        else:
            return value if isinstance(value, str) else " ".join(
                part.strip() for part in _said_in(value) if part.strip())
    if not (_JSON_START.match(text) or _ITEMS_INSIDE.search(text)):
        return None
    if text.startswith("{"):  # a broken object: what a repair reads of it
        import json_repair

        try:
            value = json_repair.loads(text[:MAX_REPLY_CHARS])
        except (ValueError, RecursionError):
            return ""
        return " ".join(part.strip() for part in _said_in(value) if part.strip())
    parser = StructuredStreamParser()  # cut off, or prose around the array: what the parser salvages
    items = [*parser.feed(text), *parser.finish()]
    return " ".join(i.content.strip() for i in items if isinstance(i, TextItem) and i.content.strip())


def read_move(reply: str, name: str = "") -> LearnerMove:
    """A learner reply as an utterance: cleaned, one bounded text, without a ``Name:`` (or ``Student:``)
    echo; ``<done>``
    (anywhere) ends the learner's part after this line.  A JSON reply is reduced to its speech; one with
    none raises :class:`LLMError`."""
    speech = json_speech(reply)
    if speech is not None and not DONE.sub("", speech).strip() and not DONE.search(reply):
        raise LLMError("other", "the simulated learner's model", "it answered with JSON that holds nothing to "
                       "say (a learner replies in plain text)")
    text = clean(reply if speech is None else speech + (" <done>" if DONE.search(reply) else ""))
    done = bool(DONE.search(text))
    text = DONE.sub("", text).strip()
    for label in (name, "student", "learner"):  # a model that names the speaker first
        if label and text.lower().startswith(label.lower() + ":"):
            text = text[len(label) + 1:].strip()
            break
    text = text[:MAX_UTTERANCE_CHARS].strip()
    return LearnerMove(text, done or not text)


class SimulatedLearner:
    """``llm`` is the learner's own model; ``turns`` the most it speaks (its file's ``gives_up_after``
    wins when smaller)."""

    def __init__(self, profile: LearnerProfile, llm: LLMClient, *, turns: int | None = None,
                 temperature: float | None = None) -> None:
        self.profile = profile
        self.llm = llm
        self.temperature = temperature
        limits = [n for n in (turns, profile.behaviour.gives_up_after) if n is not None]
        self.turns = min(limits) if limits else DEFAULT_TURNS
        self.spoken = 0
        self.done = False

    @property
    def may_speak(self) -> bool:
        return not self.done and self.spoken < self.turns

    def request(self, messages: Sequence[Message]) -> LLMRequest:
        chat = [{"role": "system", "content": system_prompt(self.profile)}, *history(messages)]
        last = next((m for m in reversed(messages) if m.role == "user"), None)
        return LLMRequest(messages=chat, purpose="learner", agent_id=None, temperature=self.temperature,
                          max_tokens=MAX_TOKENS, facts=TurnFacts(learner_text=last.text if last else None))

    async def next_move(self, messages: Sequence[Message]) -> LearnerMove:
        """What the learner says next (the file's opening line first, if it has one); ``LLMError``
        propagates.  After its last allowed turn, or a ``<done>``, :attr:`may_speak` is false."""
        if not self.may_speak:
            return LearnerMove("", True)
        first = self.profile.first_line() if self.spoken == 0 else None
        if first is not None:
            move = LearnerMove(first[:MAX_REPLY_CHARS], False)
        else:
            move = read_move(await read_reply(self.llm, self.request(messages), MAX_REPLY_CHARS), self.profile.name)
        if move.text:
            self.spoken += 1
        self.done = move.done
        return move
