"""What a round did, measured from its events (for ``maic run`` reports and expectations).

:class:`RoundLog` folds one round's events: who spoke in what order (and their
roles), empty turns, routing-guard corrections, actions emitted and dropped, parse recoveries, greetings,
turn latencies, and how the round ended.  Pure: no files, no clock of its own
(times are passed in).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict, Field

from ..engine.events import Event
from ..engine.models import AgentConfig
from ..engine.outcomes import StopReason

GREETING = re.compile(r"^\W*(hi|hello|hey|welcome|good (morning|afternoon|evening)|greetings)\b", re.IGNORECASE)
GREETING_CHARS = 64  # how much of a reply's start the greeting check looks at


@dataclass
class RoundLog:
    index: int
    learner: str | None
    speakers: list[str] = field(default_factory=list)
    roles: list[str] = field(default_factory=list)
    reason: StopReason = "end"
    error: str | None = None
    agent_turns: int = 0
    empty_turns: int = 0
    invalid_picks: int = 0  # the director named someone not in the class
    director_corrections: int = 0  # picks a routing guard overruled (engine/guards.py)
    dropped_replies: int = 0  # replies dropped whole (engine/agent_reply.py): no turn, not an empty turn
    actions: int = 0
    dropped_actions: int = 0
    parse_recoveries: int = 0
    greetings: int = 0
    turn_latencies: list[float] = field(default_factory=list)
    _speech: dict[str, str] = field(default_factory=dict, repr=False)  # each reply's opening

    def observe(self, event: Event, agents: dict[str, AgentConfig], elapsed: float | None = None) -> None:
        """Fold one event; ``elapsed`` is the time since the previous ``done`` (turn latency)."""
        if event.type == "agent_start":
            self.speakers.append(event.agent_id)
            agent = agents.get(event.agent_id)
            self.roles.append(agent.role if agent else "?")
            self._speech[event.message_id] = ""
        elif event.type == "text_delta":
            head = self._speech.get(event.message_id)
            if head is not None and len(head) < GREETING_CHARS:  # the opening is enough; stays linear
                self._speech[event.message_id] = head + event.content
        elif event.type == "agent_end":
            if GREETING.match(self._speech.get(event.message_id, "")):
                self.greetings += 1
        elif event.type == "director_correction":
            self.director_corrections += 1
            self.invalid_picks += 1 if event.rule == "unknown_agent" else 0
        elif event.type == "done":
            kind = event.outcome.kind if event.outcome is not None else None
            if kind == "agent" and event.reply_dropped:
                self.dropped_replies += 1
            elif kind == "agent":
                self.agent_turns += 1
                self.empty_turns += 0 if event.agent_had_content else 1
            elif kind == "invalid":
                self.invalid_picks += 1
            self.actions += event.total_actions
            self.dropped_actions += event.dropped_actions
            self.parse_recoveries += event.parse_recoveries
            if elapsed is not None:
                self.turn_latencies.append(elapsed)

    @property
    def repeated_speakers(self) -> int:
        return len(self.speakers) - len(set(self.speakers))

    @property
    def same_role_in_a_row(self) -> int:
        return sum(1 for a, b in zip(self.roles, self.roles[1:], strict=False) if a == b)

    @property
    def cue_user(self) -> bool:
        return self.reason == "cue_user"

    @property
    def second_greetings(self) -> int:
        return max(0, self.greetings - 1)

    def summary(self, failures: list[str] | None = None) -> RoundSummary:
        return RoundSummary(
            index=self.index, learner=self.learner, speakers=self.speakers, roles=self.roles,
            reason=self.reason, error=self.error, agent_turns=self.agent_turns,
            empty_turns=self.empty_turns, invalid_picks=self.invalid_picks,
            director_corrections=self.director_corrections, dropped_replies=self.dropped_replies,
            actions=self.actions,
            dropped_actions=self.dropped_actions, parse_recoveries=self.parse_recoveries,
            repeated_speakers=self.repeated_speakers, same_role_in_a_row=self.same_role_in_a_row,
            second_greetings=self.second_greetings, cue_user=self.cue_user,
            turn_latencies=[round(x, 4) for x in self.turn_latencies], failures=failures or [])


class RoundSummary(BaseModel):
    """One round of a batch run, as reports read it (and as ``runs/*.json`` store it)."""

    model_config = ConfigDict(extra="ignore")

    index: int
    learner: str | None = None
    speakers: list[str] = Field(default_factory=list)
    roles: list[str] = Field(default_factory=list)
    reason: StopReason = "end"
    error: str | None = None
    agent_turns: int = 0
    empty_turns: int = 0
    invalid_picks: int = 0
    director_corrections: int = 0
    dropped_replies: int = 0
    actions: int = 0
    dropped_actions: int = 0
    parse_recoveries: int = 0
    repeated_speakers: int = 0
    same_role_in_a_row: int = 0
    second_greetings: int = 0
    cue_user: bool = False
    turn_latencies: list[float] = Field(default_factory=list)
    failures: list[str] = Field(default_factory=list)  # the expectations this round missed


def percentile(values: Iterable[float], q: float) -> float | None:
    """The q-th percentile (0–100) by linear interpolation; ``None`` for no values."""
    data = sorted(values)
    if not data:
        return None
    position = (len(data) - 1) * q / 100
    low, high = math.floor(position), math.ceil(position)
    return data[low] + (data[high] - data[low]) * (position - low)
