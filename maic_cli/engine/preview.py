"""What the next call of a class would send, built by the very builders a turn uses.

``maic prompts show`` prints these messages, the first thing anyone tuning a class
needs.  Nothing here writes a prompt of its own: the director's call is
:func:`~.director_prompt.build_director_prompt` plus :data:`~.turn.DIRECTOR_ASK`,
an agent's is :func:`~.agent_prompt.build_agent_call` with the actions
:func:`~.actions.allowed_actions` gives it (the simple ones for small models), as in
``turn.py``; tests compare them with what ``generate_turn`` really sends.
"""

from __future__ import annotations

from collections.abc import Mapping

from .actions import allowed_actions
from .agent_prompt import build_agent_call
from .director_prompt import build_director_prompt
from .models import AgentConfig, DirectorState, TurnRequest
from .prompt_set import PromptSet
from .schemas import COMPACT_ACTION_PARAMS
from .turn import DIRECTOR_ASK, resolve_agents

Messages = list[dict[str, str]]


def agent_actions(request: TurnRequest, agent: AgentConfig) -> list[str]:
    """The actions ``agent`` may use in this call (small models: the simple ones only)."""
    allowed = allowed_actions(agent, request.store_state.scene_type)
    if request.config.compact_prompts:
        allowed = [name for name in allowed if name in COMPACT_ACTION_PARAMS]
    return allowed


def director_call_messages(request: TurnRequest, registry: Mapping[str, AgentConfig] | None = None, *,
                           prompts: PromptSet | None = None) -> Messages:
    """The messages of the director's next call: its system prompt and the ask."""
    state = request.director_state or DirectorState()
    agents = resolve_agents(request, registry)
    prompt = build_director_prompt(list(agents.values()), state, request.messages, request.store_state,
                                   request.config, request.user_profile, prompts=prompts)
    return [{"role": "system", "content": prompt}, {"role": "user", "content": DIRECTOR_ASK}]


def agent_call_messages(request: TurnRequest, agent: AgentConfig, *, prompts: PromptSet | None = None) -> Messages:
    """The messages of ``agent``'s next call: system prompt, its view of the history, the context."""
    state = request.director_state or DirectorState()
    messages, _context = build_agent_call(request, agent, agent_actions(request, agent), state, prompts=prompts)
    return messages
