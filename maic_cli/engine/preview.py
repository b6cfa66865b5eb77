"""What the next call of a class would send, built by the very builders a turn uses.

``maic prompts show`` prints these messages, the first thing anyone tuning a class
needs.  Nothing here builds a call of its own: the director's and an agent's calls are
:func:`~.calls.director_call` and :func:`~.calls.agent_call`, the functions
``generate_turn`` sends; tests compare them with what a turn really sends.
"""

from __future__ import annotations

from collections.abc import Mapping

from .calls import agent_call, director_call, resolve_agents
from .models import AgentConfig, DirectorState, TurnRequest
from .prompt_set import PromptSet

Messages = list[dict[str, str]]


def director_call_messages(request: TurnRequest, registry: Mapping[str, AgentConfig] | None = None, *,
                           prompts: PromptSet | None = None) -> Messages:
    """The messages of the director's next call: its system prompt and the ask."""
    state = request.director_state or DirectorState()
    return director_call(request, resolve_agents(request, registry), state, prompts=prompts).messages


def agent_call_messages(request: TurnRequest, agent: AgentConfig, *, prompts: PromptSet | None = None) -> Messages:
    """The messages of ``agent``'s next call: system prompt, its view of the history, the context."""
    state = request.director_state or DirectorState()
    return agent_call(request, agent, state, prompts=prompts).request.messages
