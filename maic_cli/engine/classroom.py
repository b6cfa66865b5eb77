"""The client's state between turns, and the one reducer that events update.

:class:`Classroom` holds the conversation, the board and slides, the current
round's ``director_state`` and usage totals.  :meth:`Classroom.apply` folds an
event into it; the round loop, the live view and replay all use it, so they can
never disagree about what happened.

It also keeps itself saveable: every string that reaches it (an event from a
reply or a replayed transcript, a session file) loses broken surrogates, and a
loaded class cuts anything nested absurdly deep, so a save or a reload never fails
on what a model wrote.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field, model_validator

from ..replies.sanitize import MAX_DEPTH, clean_tree, replace_surrogates
from .events import CallUsage, Event
from .models import ActionRecord, DirectorState, Message, MessagePart, StoreState
from .whiteboard import apply_action

# A class nests about eight containers deep before an action's params begin.
_CLASSROOM_DEPTH = MAX_DEPTH + 12


def _clean_optional(text: str | None) -> str | None:
    return None if text is None else replace_surrogates(text)


class UsageTotals(BaseModel):
    director: CallUsage = Field(default_factory=CallUsage)
    agent: CallUsage = Field(default_factory=CallUsage)

    @property
    def total_tokens(self) -> int:
        return sum(u.prompt_tokens + u.completion_tokens for u in (self.director, self.agent))

    @property
    def cost(self) -> float:
        return self.director.cost + self.agent.cost


class Classroom(BaseModel):
    messages: list[Message] = Field(default_factory=list)
    store: StoreState = Field(default_factory=StoreState)
    director_state: DirectorState | None = None
    usage: UsageTotals = Field(default_factory=UsageTotals)

    @model_validator(mode="before")
    @classmethod
    def _clean_loaded(cls, data: Any) -> Any:
        """A loaded class (a session file): no broken surrogates, nothing nested absurdly deep."""
        return clean_tree(data, _CLASSROOM_DEPTH, cut=True) if isinstance(data, dict) else data

    def add_learner_message(self, text: str) -> Message:
        """A learner message starts a new round: the director forgets the last one."""
        message = Message.from_learner(replace_surrogates(text))
        self.messages.append(message)
        self.director_state = None
        return message

    def message(self, message_id: str) -> Message | None:
        for message in reversed(self.messages):
            if message.id == message_id:
                return message
        return None

    def apply(self, event: Event) -> None:
        if event.type == "agent_start":
            self.messages.append(Message(id=event.message_id, role="agent",
                                         agent_id=event.agent_id, agent_name=event.agent_name))
        elif event.type == "text_delta":
            target = self.message(event.message_id)
            if target is not None:
                target.append_text(replace_surrogates(event.content))
        elif event.type == "action":
            target = self.message(event.message_id)
            if target is not None:
                target.parts.append(MessagePart(kind="action", action=ActionRecord(
                    action_id=event.action_id, name=event.action_name, params=event.params)))
            apply_action(self.store, event.action_name, event.params, event.agent_id)
        elif event.type == "agent_end":
            target = self.message(event.message_id)
            if target is not None:
                target.raw_reply = _clean_optional(event.raw_reply)
                target.context = _clean_optional(event.context)
        elif event.type == "lesson":
            self.store.slides = [slide.model_copy(deep=True) for slide in event.slides]
            self.store.current_slide, self.store.spotlight, self.store.laser = 0, None, None
        elif event.type == "scene":
            if event.slide is not None and event.slide < len(self.store.slides):
                self.store.current_slide = event.slide
            self.store.spotlight = self.store.laser = None
        elif event.type == "done":
            self.director_state = event.director_state
            self.usage.director.add(event.usage.director)
            self.usage.agent.add(event.usage.agent)

    def mark_interrupted(self, message_id: str) -> None:
        target = self.message(message_id)
        if target is not None:
            target.interrupted = True
