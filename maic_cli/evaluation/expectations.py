"""Expectations for a round (from scenario files) and the check against a :class:`RoundLog`."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ..engine.outcomes import StopReason
from .metrics import RoundLog


class Expectations(BaseModel):
    """What one round must do; every field is optional."""

    model_config = ConfigDict(extra="forbid")

    first_speaker: list[str] | None = None
    end_reasons: list[StopReason] | None = None
    max_agents: int | None = Field(default=None, ge=0)
    min_agents: int | None = Field(default=None, ge=0)
    must_include: list[str] = Field(default_factory=list)
    must_not_include: list[str] = Field(default_factory=list)
    no_disallowed_actions: bool = False
    no_parse_failures: bool = False

    @field_validator("first_speaker", mode="before")
    @classmethod
    def _one_or_many(cls, value: object) -> object:
        return [value] if isinstance(value, str) else value

    def merged(self, override: Expectations | None) -> Expectations:
        if override is None:
            return self
        return self.model_copy(update=override.model_dump(exclude_unset=True))


def check_round(expect: Expectations, log: RoundLog) -> list[str]:
    """The expectations this round failed, each as one readable line."""
    failures: list[str] = []
    first = log.speakers[0] if log.speakers else None
    if expect.first_speaker is not None and first not in expect.first_speaker:
        failures.append(f"first speaker was {first or 'nobody'}, expected {' or '.join(expect.first_speaker)}")
    if expect.end_reasons is not None and log.reason not in expect.end_reasons:
        failures.append(f"round ended with {log.reason}, expected {' or '.join(expect.end_reasons)}")
    if expect.max_agents is not None and len(log.speakers) > expect.max_agents:
        failures.append(f"{len(log.speakers)} agent turns, expected at most {expect.max_agents}")
    if expect.min_agents is not None and len(log.speakers) < expect.min_agents:
        failures.append(f"{len(log.speakers)} agent turns, expected at least {expect.min_agents}")
    for agent_id in expect.must_include:
        if agent_id not in log.speakers:
            failures.append(f"{agent_id} did not speak")
    for agent_id in expect.must_not_include:
        if agent_id in log.speakers:
            failures.append(f"{agent_id} spoke but must not")
    if expect.no_disallowed_actions and log.dropped_actions:
        failures.append(f"{log.dropped_actions} disallowed action(s) dropped")
    if expect.no_parse_failures and log.parse_recoveries:
        failures.append(f"{log.parse_recoveries} reply parse recovery(ies)")
    return failures
