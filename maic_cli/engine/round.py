"""``run_round``: the client loop that calls ``generate_turn`` until the round stops.

It feeds each turn's ``director_state`` into the next, folds every event into
the :class:`Classroom` and hands it to ``on_event`` (the live view, the
transcript, the session saver).  Stop reasons (ARCHITECTURE.md, "One round"): ``end``,
``cue_user``, ``max_turns``, ``empty_turns`` (two agent turns in a row with no
content), ``aborted`` (the task was cancelled: the partial message is kept and
marked interrupted) and ``error``.

Where a turn runs is a :class:`TurnClient`: :class:`LocalTurns` calls ``generate_turn`` in this
process; ``serve/client.py``'s ``HttpTurns`` asks a ``maic serve`` instance (``--server URL``), wired by
the CLI, so the runner, the chat and the batch do not know where a turn ran.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from .classroom import Classroom
from .events import Event
from .models import AgentConfig, ModelSettings, TurnConfig, TurnRequest, UserProfile
from .outcomes import DirectorOutcome, StopReason

if TYPE_CHECKING:  # the turn (and its templates: Jinja2) is imported when a round runs: a replay needs
    #               only RoundResult
    from ..llm.port import LLMClient
    from .policies import DirectorPolicy
    from .prompt_set import PromptSet

EventSink = Callable[[Event], Awaitable[None] | None]
EMPTY_TURNS_LIMIT = 2


class TurnClient(Protocol):
    """Where one stateless turn runs: its events, ending with ``done`` (an ``error`` before it when it failed)."""

    def turn(self, request: TurnRequest, llm: LLMClient, registry: Mapping[str, AgentConfig] | None, *,
             prompts: PromptSet | None, policy: DirectorPolicy | None) -> AsyncGenerator[Event, None]: ...


class LocalTurns:
    """The turn in this process: ``generate_turn`` on the runner's client."""

    def turn(self, request: TurnRequest, llm: LLMClient, registry: Mapping[str, AgentConfig] | None, *,
             prompts: PromptSet | None, policy: DirectorPolicy | None) -> AsyncGenerator[Event, None]:
        from .turn import generate_turn  # Jinja2 and the templates: when a turn runs

        return generate_turn(request, llm, registry, prompts=prompts, policy=policy)


@dataclass
class RoundResult:
    reason: StopReason
    speakers: list[str] = field(default_factory=list)
    error: str | None = None
    interrupted_message_id: str | None = None
    outcome: DirectorOutcome | None = None  # the director's last outcome (None: no turn finished)


async def run_round(classroom: Classroom, config: TurnConfig, llm: LLMClient, *,
                    registry: Mapping[str, AgentConfig] | None = None,
                    profile: UserProfile | None = None,
                    model: ModelSettings | None = None,
                    on_event: EventSink | None = None,
                    prompts: PromptSet | None = None,
                    policy: DirectorPolicy | None = None, turns: TurnClient | None = None) -> RoundResult:
    """Run turns until the round stops; ``classroom`` is updated as events arrive; ``policy``
    picks the speakers (``None``: the LLM director); ``turns``: where each turn runs (default: here)."""
    result = RoundResult(reason="end")
    open_message: str | None = None
    empty_in_a_row = 0

    async def emit(event: Event) -> None:
        classroom.apply(event)
        if on_event is not None:
            outcome = on_event(event)
            if inspect.isawaitable(outcome):
                await outcome

    turns = turns or LocalTurns()
    try:
        while True:
            request = TurnRequest(messages=classroom.messages, store_state=classroom.store,
                                  config=config, director_state=classroom.director_state,
                                  user_profile=profile or UserProfile(),
                                  model=model or ModelSettings(model=llm.model))
            outcome, had_content, error = None, False, None
            # aclosing: the turn's stream is closed even if emit raises
            async with aclosing(turns.turn(request, llm, registry, prompts=prompts, policy=policy)) as events:
                async for event in events:
                    if event.type == "agent_start":
                        open_message = event.message_id
                        result.speakers.append(event.agent_id)
                    elif event.type == "agent_end":
                        open_message = None
                    elif event.type == "error":
                        error = event.message
                    elif event.type == "done":
                        outcome, had_content = event.outcome, event.agent_had_content
                        result.outcome = outcome
                    await emit(event)
            if error is not None:
                result.reason, result.error = "error", error
                return result
            if outcome is not None and outcome.kind == "user":
                result.reason = "cue_user"
                return result
            state = classroom.director_state
            if outcome is None or outcome.ends_round:
                at_limit = state is not None and state.turn_count >= config.max_turns
                result.reason = "max_turns" if at_limit else "end"
                return result
            empty_in_a_row = 0 if had_content else empty_in_a_row + 1
            if empty_in_a_row >= EMPTY_TURNS_LIMIT:
                result.reason = "empty_turns"
                return result
    except asyncio.CancelledError:
        task = asyncio.current_task()
        if task is not None:
            task.uncancel()  # the cancellation is handled here: the round ends "aborted"
        if open_message is not None:
            classroom.mark_interrupted(open_message)
            result.interrupted_message_id = open_message
        result.reason = "aborted"
        return result
