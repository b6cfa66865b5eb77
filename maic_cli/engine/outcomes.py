"""How a turn and a round end: the director's outcome and the round's stop reason.

:class:`DirectorOutcome` is what the director decided for one turn — an agent
speaks, the learner's turn, the end of the round, or an invalid pick (an id
that is not in the class) — built once in ``engine/turn.py`` and read by the
round loop and the metrics without parsing strings.  Transcripts written
before it existed stored the outcome as a string (``"END"``, ``"USER"``,
``"unknown:<id>"`` or an agent id); that form is still read.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, model_validator

StopReason = Literal["end", "cue_user", "max_turns", "empty_turns", "aborted", "error"]
OutcomeKind = Literal["agent", "user", "end", "invalid"]

LEGACY_USER = "USER"
LEGACY_END = "END"
LEGACY_UNKNOWN = "unknown:"


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
        if value == LEGACY_END:
            return {"kind": "end"}
        if value == LEGACY_USER:
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
        """The old string form (``"END"``, ``"USER"``, ``"unknown:<id>"`` or the agent id)."""
        if self.kind == "end":
            return LEGACY_END
        if self.kind == "user":
            return LEGACY_USER
        if self.kind == "invalid":
            return f"{LEGACY_UNKNOWN}{self.agent_id}"
        return str(self.agent_id)
