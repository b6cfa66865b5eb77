"""The LLM calls of one turn, built in one place: the director's and an agent's.

``generate_turn`` (engine/turn.py) sends these requests; ``maic prompts show``
(engine/preview.py) prints their messages, so what is shown is what a turn sends.
Each builder takes the :class:`~.models.TurnRequest` and the director's state of the
turn and returns an :class:`~..llm.port.LLMRequest` (messages, reply schema, token cap,
the turn's facts for the fakes).  Pure: no I/O, no model call.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..llm.port import LLMRequest, TurnFacts
from .actions import allowed_actions
from .agent_prompt import build_agent_call
from .director_prompt import build_director_prompt
from .models import AgentConfig, DirectorState, Message, TurnRequest
from .outcomes import USER
from .prompt_set import PromptSet
from .schemas import COMPACT_ACTION_PARAMS, agent_reply_schema, director_reply_schema

DIRECTOR_ASK = "Who speaks next? Reply with the JSON object only."
DIRECTOR_MAX_TOKENS = 60  # a pick is one short JSON object
COMPACT_MAX_TOKENS = 160  # a small model's turn: at most three short items


def resolve_agents(request: TurnRequest,
                   registry: Mapping[str, AgentConfig] | None) -> dict[str, AgentConfig]:
    """The class, in ``agent_ids`` order: request-scoped configs first, then the registry."""
    found: dict[str, AgentConfig] = {}
    for agent_id in request.config.agent_ids:
        agent = request.config.agent_configs.get(agent_id) or (registry or {}).get(agent_id)
        if agent is not None:
            found[agent_id] = agent
    return found


def learner_text(messages: list[Message]) -> str | None:
    """The learner's last message (``None``: the learner has not spoken)."""
    return next((m.text for m in reversed(messages) if m.role == "user"), None)


def _opener(request: TurnRequest, agents: Mapping[str, AgentConfig]) -> list[str] | None:
    """For small models, the grammar enforces "the teacher answers first in Q&A"."""
    if not request.config.compact_prompts or request.config.discussion_topic:
        return None
    return [a.id for a in agents.values() if a.role == "teacher"] or None


def _director_facts(request: TurnRequest, state: DirectorState, schema: dict[str, Any],
                    agents: Mapping[str, AgentConfig]) -> TurnFacts:
    """The facts of a director call; who may be picked is read from the reply schema just built
    (``director_reply_schema`` is the one place that decides it)."""
    choices: list[str] = schema["properties"]["next_agent"]["enum"]
    return TurnFacts(turn=state.turn_count, spoken=tuple(r.agent_id for r in state.agent_responses),
                     eligible=tuple(c for c in choices if c in agents),
                     may_hand_back=USER in choices, learner_text=learner_text(request.messages))


def director_call(request: TurnRequest, agents: Mapping[str, AgentConfig], state: DirectorState, *,
                  prompts: PromptSet | None = None) -> LLMRequest:
    """The director's call: its system prompt and the ask, the reply schema of who may be picked."""
    prompt = build_director_prompt(list(agents.values()), state, request.messages, request.store_state,
                                   request.config, request.user_profile, prompts=prompts)
    schema = director_reply_schema(list(agents), {r.agent_id for r in state.agent_responses},
                                   first_turn=state.turn_count == 0, opener=_opener(request, agents))
    return LLMRequest(messages=[{"role": "system", "content": prompt}, {"role": "user", "content": DIRECTOR_ASK}],
                      purpose="director", temperature=request.model.temperature, max_tokens=DIRECTOR_MAX_TOKENS,
                      response_schema=schema, facts=_director_facts(request, state, schema, agents))


def agent_actions(request: TurnRequest, agent: AgentConfig) -> list[str]:
    """The actions ``agent`` may use in this call (small models: the simple ones only)."""
    allowed = allowed_actions(agent, request.store_state.scene_type)
    if request.config.compact_prompts:
        allowed = [name for name in allowed if name in COMPACT_ACTION_PARAMS]
    return allowed


@dataclass(frozen=True)
class AgentCall:
    """An agent's call, the actions it may use and the per-turn context its message keeps."""

    request: LLMRequest
    allowed: list[str]
    context: str


def agent_call(request: TurnRequest, agent: AgentConfig, state: DirectorState, *,
               prompts: PromptSet | None = None) -> AgentCall:
    """``agent``'s call: system prompt, its view of the history and the context, its reply schema."""
    allowed = agent_actions(request, agent)
    messages, context = build_agent_call(request, agent, allowed, state, prompts=prompts)
    compact = request.config.compact_prompts
    call = LLMRequest(messages=messages, purpose="agent", agent_id=agent.id, temperature=request.model.temperature,
                      max_tokens=COMPACT_MAX_TOKENS if compact else request.model.max_tokens,
                      response_schema=agent_reply_schema(allowed, compact=compact),
                      facts=TurnFacts(turn=state.turn_count, spoken=tuple(r.agent_id for r in state.agent_responses),
                                      learner_text=learner_text(request.messages), agent_role=agent.role))
    return AgentCall(call, allowed, context)
