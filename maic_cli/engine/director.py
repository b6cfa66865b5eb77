"""The director: who speaks next, by rule where a rule decides, else by the LLM.

Rules (DESIGN §2, parity with the reference):

1. ``turn_count >= max_turns`` → end.
2. One agent: no LLM call; turn 0 dispatches it, later turns cue the learner.
3. Several agents, turn 0, a trigger that is in the class → dispatch it (no LLM).
4. Otherwise ask the LLM and parse its reply defensively.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Literal

import json_repair

from .models import DirectorState, TurnConfig
from .sanitize import json_extent, replace_surrogates

USER = "USER"
END = "END"


@dataclass(frozen=True)
class DirectorDecision:
    """``next_agent_id`` is an agent id, ``"USER"`` or ``None`` (end)."""

    next_agent_id: str | None
    should_end: bool

    @property
    def label(self) -> str:
        return self.next_agent_id or END


@dataclass(frozen=True)
class RuleOutcome:
    """What the rules decided without the LLM; ``ask_llm`` when they could not."""

    decision: DirectorDecision | None
    reason: Literal["max_turns", "single_agent", "trigger", "ask_llm"]


def decide_by_rules(config: TurnConfig, state: DirectorState) -> RuleOutcome:
    if state.turn_count >= config.max_turns:
        return RuleOutcome(DirectorDecision(None, True), "max_turns")
    if len(config.agent_ids) == 1:
        if state.turn_count == 0:
            return RuleOutcome(DirectorDecision(config.agent_ids[0], False), "single_agent")
        return RuleOutcome(DirectorDecision(USER, False), "single_agent")
    trigger = config.trigger_agent_id
    if state.turn_count == 0 and trigger and trigger in config.agent_ids:
        return RuleOutcome(DirectorDecision(trigger, False), "trigger")
    return RuleOutcome(None, "ask_llm")


_DECODER = json.JSONDecoder(strict=False)
_MAX_CANDIDATES = 64  # objects tried in one reply: keeps a reply full of "{" linear
_MAX_DECISION_DEPTH = 8  # a decision is one flat object; deeper ones are not parsed at all
_MAX_REPAIR = 2000  # characters given to json_repair (slow on long text); a decision is short


def _first_decision_object(text: str) -> dict[str, object] | None:
    """The first object with a ``next_agent`` key; objects nested deeper than a decision
    can be are skipped whole, unparsed, and at most ``_MAX_CANDIDATES`` are tried."""
    pos, tried = 0, 0
    while tried < _MAX_CANDIDATES:
        start = text.find("{", pos)
        if start == -1:
            break
        tried += 1
        end, depth = json_extent(text, start)
        if depth > _MAX_DECISION_DEPTH:
            pos = end
            continue
        pos = start + 1
        try:
            value, _ = _DECODER.raw_decode(text, start)
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict) and "next_agent" in value:
            return value
    start = text.find("{")
    if start == -1 or json_extent(text[:start + _MAX_REPAIR], start)[1] > _MAX_DECISION_DEPTH:
        return None
    try:
        repaired = json_repair.loads(text[start:start + _MAX_REPAIR])
    except Exception:  # noqa: BLE001 - any repair failure just means "no decision"
        return None
    return repaired if isinstance(repaired, dict) and "next_agent" in repaired else None


def parse_director_decision(text: str) -> DirectorDecision:
    """Read ``{"next_agent": …}`` from anywhere in ``text``; anything unusable ends the round.

    Bounded: objects nested deeper than a decision can be are skipped unparsed, and a
    broken surrogate in the id becomes U+FFFD (no agent has it, so the round ends)."""
    found = _first_decision_object(text or "")
    value = found.get("next_agent") if found else None
    if not isinstance(value, str) or not value.strip():
        return DirectorDecision(None, True)
    value = replace_surrogates(value.strip())
    if value.upper() == END:
        return DirectorDecision(None, True)
    if value.upper() == USER:
        return DirectorDecision(USER, False)
    return DirectorDecision(value, False)
