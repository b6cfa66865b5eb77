"""The director: who speaks next, by rule where a rule decides, else by the LLM.

Rules (parity with the reference; ARCHITECTURE.md, "One turn"):

1. ``turn_count >= max_turns`` → end.
2. One agent: no LLM call; turn 0 dispatches it, later turns cue the learner.
3. Several agents, turn 0, a trigger that is in the class → dispatch it (no LLM).
4. Otherwise ask the LLM and parse its reply defensively.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ..replies.json_reply import first_json_object
from ..replies.sanitize import replace_surrogates
from .models import DirectorState, TurnConfig
from .outcomes import END, USER, Pick

MAX_PICK = 80  # an agent id is at most 40 characters; a longer pick is unknown anyway


def read_pick(text: str) -> Pick:
    """A pick written as a string (an agent id, ``USER`` or ``END``, any case; empty: the end) — a
    model's ``next_agent``, a researcher's hook's answer — read once, cleaned (no broken surrogates)
    and bounded (an id past :data:`MAX_PICK` is cut: unknown anyway)."""
    text = replace_surrogates(text.strip())[:MAX_PICK].rstrip()
    if not text or text.upper() == END:
        return Pick.end()
    if text.upper() == USER:
        return Pick.user()
    return Pick.agent(text)


@dataclass(frozen=True)
class RuleOutcome:
    """What the rules decided without the LLM (``pick``); ``None`` and ``ask_llm`` when they could not."""

    pick: Pick | None
    reason: Literal["max_turns", "single_agent", "trigger", "ask_llm"]


def decide_by_rules(config: TurnConfig, state: DirectorState) -> RuleOutcome:
    if state.turn_count >= config.max_turns:
        return RuleOutcome(Pick.end(), "max_turns")
    if len(config.agent_ids) == 1:
        if state.turn_count == 0:
            return RuleOutcome(Pick.agent(config.agent_ids[0]), "single_agent")
        return RuleOutcome(Pick.user(), "single_agent")
    trigger = config.trigger_agent_id
    if state.turn_count == 0 and trigger and trigger in config.agent_ids:
        return RuleOutcome(Pick.agent(trigger), "trigger")
    return RuleOutcome(None, "ask_llm")


_MAX_DECISION_DEPTH = 8  # a decision is one flat object; deeper ones are not parsed at all
_MAX_REPAIR = 2000  # characters given to json_repair (slow on long text); a decision is short


def _first_decision_object(text: str) -> dict[str, object] | None:
    """The first object with a ``next_agent`` key (replies/json_reply.py)."""
    found, _ = first_json_object(text, accept=lambda value: "next_agent" in value,
                                 max_depth=_MAX_DECISION_DEPTH, max_repair=_MAX_REPAIR)
    return found


def parse_director_pick(text: str) -> Pick:
    """Read ``{"next_agent": …}`` from anywhere in ``text``; anything unusable ends the round.

    Bounded: objects nested deeper than a decision can be are skipped unparsed, and a
    broken surrogate in the id becomes U+FFFD (no agent has it, so the round ends)."""
    found = _first_decision_object(text or "")
    value = found.get("next_agent") if found else None
    if not isinstance(value, str):
        return Pick.end()
    return read_pick(value)
