"""How a turn and a round end: the director's pick, its outcome and the round's stop reason.

:class:`Pick` is who the director picked — an agent, the learner or the end — as the rules,
a policy, the LLM director and the routing guards all hand it on: a string becomes a pick once,
where it comes in (a model's reply, a researcher's hook: ``engine/director.py: read_pick``), and a
string again only
where it goes out (an event, a prompt: :attr:`Pick.label`).

:class:`DirectorOutcome` is what the director decided for one turn — an agent
speaks, the learner's turn, the end of the round, or an invalid pick (an id
that is not in the class) — built once from the turn's pick (:meth:`Pick.outcome`) and read by the
round loop and the metrics without parsing strings.  Transcripts written
before it existed stored the outcome as a string (``"END"``, ``"USER"``,
``"unknown:<id>"`` or an agent id); that form is still read.
"""

from __future__ import annotations

from collections.abc import Container
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, model_validator

StopReason = Literal["end", "cue_user", "max_turns", "empty_turns", "aborted", "error"]
OutcomeKind = Literal["agent", "user", "end", "invalid"]
PickKind = Literal["agent", "user", "end"]

USER = "USER"  # a pick's string form: the learner's turn
END = "END"  # a pick's string form: the end of the round
LEGACY_UNKNOWN = "unknown:"


@dataclass(frozen=True)
class Pick:
    """Who the director picked for the next turn: an agent (``agent_id``), the learner or the end."""

    kind: PickKind
    agent_id: str | None = None

    def __post_init__(self) -> None:
        if self.kind == "agent" and not self.agent_id:
            raise ValueError("an agent pick names the agent")
        if self.kind != "agent" and self.agent_id is not None:
            raise ValueError(f"a pick of kind {self.kind!r} names no agent")

    @classmethod
    def agent(cls, agent_id: str) -> Pick:
        return cls("agent", agent_id)

    @classmethod
    def user(cls) -> Pick:
        return cls("user")

    @classmethod
    def end(cls) -> Pick:
        return cls("end")

    @property
    def label(self) -> str:
        """The string form, for events and prompts: the agent id, ``USER`` or ``END``."""
        if self.kind == "agent":
            return str(self.agent_id)
        return USER if self.kind == "user" else END

    def outcome(self, class_ids: Container[str]) -> DirectorOutcome:
        """The turn's outcome, given who is in the class (an id that is not: ``invalid``)."""
        if self.kind == "user":
            return DirectorOutcome.user()
        if self.kind == "end" or self.agent_id is None:
            return DirectorOutcome.end()
        if self.agent_id in class_ids:
            return DirectorOutcome.agent(self.agent_id)
        return DirectorOutcome.invalid(self.agent_id)


class DirectorOutcome(BaseModel):
    """``agent_id`` names the agent dispatched (``agent``) or the id the director made up (``invalid``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: OutcomeKind
    agent_id: str | None = None

    @classmethod
    def agent(cls, agent_id: str) -> DirectorOutcome:
        return cls(kind="agent", agent_id=agent_id)

    @classmethod
    def user(cls) -> DirectorOutcome:
        return cls(kind="user")

    @classmethod
    def end(cls) -> DirectorOutcome:
        return cls(kind="end")

    @classmethod
    def invalid(cls, agent_id: str) -> DirectorOutcome:
        return cls(kind="invalid", agent_id=agent_id)

    @model_validator(mode="before")
    @classmethod
    def _from_legacy_string(cls, value: object) -> object:
        """Read the string form older transcripts hold."""
        if not isinstance(value, str):
            return value
        if value == END:
            return {"kind": "end"}
        if value == USER:
            return {"kind": "user"}
        if value.startswith(LEGACY_UNKNOWN):
            return {"kind": "invalid", "agent_id": value.removeprefix(LEGACY_UNKNOWN)}
        return {"kind": "agent", "agent_id": value}

    @model_validator(mode="after")
    def _agent_id_where_needed(self) -> DirectorOutcome:
        needs_id = self.kind in ("agent", "invalid")
        if needs_id and not self.agent_id:
            raise ValueError(f"a director outcome of kind {self.kind!r} names an agent_id")
        if not needs_id and self.agent_id is not None:
            raise ValueError(f"a director outcome of kind {self.kind!r} has no agent_id")
        return self

    @property
    def ends_round(self) -> bool:
        """The round stops here without cueing the learner (``end`` or an invalid pick)."""
        return self.kind in ("end", "invalid")

    @property
    def label(self) -> str:
        """The pick as an event writes it (``"END"``, ``"USER"``, ``"unknown:<id>"`` or the agent id)."""
        if self.kind == "end":
            return END
        if self.kind == "user":
            return USER
        if self.kind == "invalid":
            return f"{LEGACY_UNKNOWN}{self.agent_id}"
        return str(self.agent_id)
