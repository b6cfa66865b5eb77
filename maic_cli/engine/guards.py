"""Routing guards: the director's pick checked in code, whatever policy or provider made it.

The reply schema already limits the choices for providers that honour structured
output; these guards hold for every provider and every policy (an LLM, the
rules, a researcher's hook):

* ``repeat_speaker`` — an agent who already spoke this round is not dispatched again:
  someone in the class who has not spoken goes instead, and when everyone has, the round
  hands to the learner (a director that keeps naming the teacher got teacher, student,
  teacher, teacher, teacher).  With ``allow_repeat_speaker`` an agent may speak again this
  round, but never twice in a row: the last speaker is replaced the same way;
* ``unanswered`` — in a Q&A round (no discussion topic) nobody ends the round or cues
  the learner before an agent has answered;
* ``unknown_agent`` — an id that is not in the class falls back to the best eligible
  agent (the learner's turn when everyone has spoken), instead of silently ending.

A correction names the rule, the original pick and the corrected one; the turn
reports it as a ``director_correction`` event.  Pure functions, no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from .models import AgentConfig, DirectorState, Message, TurnConfig
from .outcomes import Pick

GuardRule = Literal["repeat_speaker", "unanswered", "unknown_agent"]
ROLE_ORDER = {"teacher": 0, "assistant": 1, "student": 2}


@dataclass(frozen=True)
class Correction:
    """The director picked ``original``; the guard ``rule`` dispatched ``corrected`` instead."""

    original: Pick
    corrected: Pick
    rule: GuardRule


def spoken_ids(state: DirectorState) -> set[str]:
    return {r.agent_id for r in state.agent_responses}


def eligible_agents(agents: Mapping[str, AgentConfig], state: DirectorState) -> list[AgentConfig]:
    """Who has not spoken this round, in class order."""
    spoken = spoken_ids(state)
    return [a for a in agents.values() if a.id not in spoken]


def opens_discussion(config: TurnConfig, messages: Sequence[Message]) -> bool:
    """The discussion's opening turn: nobody in the class has spoken yet (not every round's first turn)."""
    return bool(config.discussion_topic) and not any(m.role == "agent" for m in messages)


def rank(agents: list[AgentConfig], config: TurnConfig, state: DirectorState,
         opening: bool = False) -> list[AgentConfig]:
    """Best first: the initiator on a discussion's ``opening`` turn; otherwise by role (teacher,
    assistant, student), then priority (highest first), then class order."""
    order = {a.id: i for i, a in enumerate(agents)}
    opening = opening and state.turn_count == 0

    def key(agent: AgentConfig) -> tuple[int, int, int, int]:
        first = 0 if opening and agent.id == config.initiator_id else 1
        return first, ROLE_ORDER.get(agent.role, 3), -agent.priority, order[agent.id]

    return sorted(agents, key=key)


def best_eligible(agents: Mapping[str, AgentConfig], config: TurnConfig, state: DirectorState,
                  opening: bool = False) -> str | None:
    """The best agent who has not spoken this round (``None``: everyone has)."""
    ranked = rank(eligible_agents(agents, state), config, state, opening)
    return ranked[0].id if ranked else None


def guard_pick(pick: Pick, agents: Mapping[str, AgentConfig], config: TurnConfig,
               state: DirectorState, messages: Sequence[Message] = ()) -> Correction | None:
    """Check one pick; ``None`` when it stands."""
    answered = state.turn_count > 0 or bool(state.agent_responses)
    found = best_eligible(agents, config, state, opens_discussion(config, messages))
    best = Pick.agent(found) if found is not None else None
    if pick.kind != "agent":
        if not answered and not config.discussion_topic and best is not None:
            return Correction(pick, best, "unanswered")
        return None
    if pick.agent_id not in agents:
        return Correction(pick, best or Pick.user(), "unknown_agent")
    last = state.agent_responses[-1].agent_id if state.agent_responses else None
    if pick.agent_id in spoken_ids(state) and (not config.allow_repeat_speaker or pick.agent_id == last):
        return Correction(pick, best or Pick.user(), "repeat_speaker")
    return None


