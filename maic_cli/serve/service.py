"""``TurnService``: one stateless turn on the server's model, for any route that serves one.

The service holds what the *server* decides and a request never does: the model client (and so
where a call goes and with which key), its prompt variant, the prompt set, the ``--director``
policy, the cap on turns in flight and the metrics.  A route turns its body into the engine's
:class:`~maic_cli.engine.models.TurnRequest` and plays it::

    service = request.app[TURN_SERVICE]          # the one shared service (serve/app.py)
    async with service.turn_slot(), aclosing(service.run_turn(turn_request)) as events:  # Busy: answer 503
        async for event in events:
            ...                                   # write the event in the route's own format

``run_turn`` is exactly one director → agent cycle (``engine/turn.py: generate_turn``): it yields
the engine's events and ends with ``done`` (an ``error`` event before it when the turn failed; never
an exception, not even for a failure inside the engine: that is logged, then ``error`` and ``done`` with the
request's director state).  Nothing is kept between requests.  The app runs handlers with
``handler_cancellation``: a client that goes away cancels its handler, the ``CancelledError`` reaches
the turn, and the turn's model stream is closed under it (the model server sees its connection
close).  The request's ``model`` settings and prompt variant are replaced by the server's; the
director is the server's ``--director`` if given, else a built-in name the request's class names
(a name never imports code), else the model's default.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from contextlib import aclosing, asynccontextmanager
from typing import TYPE_CHECKING

from ..engine.events import DoneEvent, ErrorEvent, Event
from ..engine.models import AgentConfig, DirectorState, ModelSettings, TurnRequest
from ..engine.outcomes import DirectorOutcome
from ..engine.policies import DirectorPolicy, choose_policy
from ..untrusted import one_line
from .limits import MAX_CONCURRENT_TURNS
from .metrics import Metrics

if TYPE_CHECKING:
    from ..engine.prompt_set import PromptSet
    from ..llm.port import LLMClient
    from ..llm.spec import ModelSpec


log = logging.getLogger("maic.serve")


class Busy(Exception):
    """Every turn slot of this instance is taken (the route answers 503: ask another instance)."""


class TurnService:
    def __init__(self, llm: LLMClient, spec: ModelSpec, *, prompts: PromptSet | None = None,
                 director: DirectorPolicy | None = None, registry: Mapping[str, AgentConfig] | None = None,
                 temperature: float | None = None, max_concurrent: int = MAX_CONCURRENT_TURNS,
                 metrics: Metrics | None = None) -> None:
        self.llm = llm
        self.spec = spec
        self.prompts = prompts
        self.director = director
        self.registry = dict(registry or {})
        self.temperature = temperature
        self.max_concurrent = max_concurrent
        self.metrics = metrics or Metrics()

    @asynccontextmanager
    async def turn_slot(self) -> AsyncIterator[None]:
        """Hold one of the instance's turn slots while a turn runs (:class:`Busy` when none is free)."""
        if self.metrics.in_flight >= self.max_concurrent:
            self.metrics.turns["busy"] += 1
            raise Busy(f"this instance is running {self.max_concurrent} turns; ask again or another instance")
        self.metrics.in_flight += 1
        try:
            yield
        finally:
            self.metrics.in_flight -= 1

    def prepare(self, request: TurnRequest) -> TurnRequest:
        """``request`` as this server plays it: its model and its prompt variant, whatever the body said."""
        config = request.config.model_copy(update={"compact_prompts": self.spec.compact_prompts})
        return request.model_copy(update={"config": config,
                                          "model": ModelSettings(model=self.llm.model, temperature=self.temperature)})

    def policy_for(self, request: TurnRequest) -> DirectorPolicy:
        return choose_policy(self.director, request.config.director, self.spec.compact_prompts)

    async def run_turn(self, request: TurnRequest) -> AsyncGenerator[Event, None]:
        """One director → agent cycle for ``request`` on the server's model (see the module docstring)."""
        from ..engine.turn import generate_turn  # Jinja2 and the templates: when a turn runs

        prepared = self.prepare(request)
        start = time.monotonic()
        outcome, prompt_tokens, completion_tokens = "cancelled", 0, 0
        failed: Exception | None = None
        ended = False
        try:
            try:
                async with aclosing(generate_turn(prepared, self.llm, self.registry, prompts=self.prompts,
                                                  policy=self.policy_for(prepared))) as events:
                    async for event in events:
                        if event.type == "error":
                            outcome = "error"
                        elif event.type == "done":
                            ended = True
                            outcome = "error" if outcome == "error" else "ok"
                            usage = event.usage
                            prompt_tokens = usage.director.prompt_tokens + usage.agent.prompt_tokens
                            completion_tokens = usage.director.completion_tokens + usage.agent.completion_tokens
                        yield event
            except Exception as exc:  # noqa: BLE001 - a turn that fails inside (a prompt past its bound) still ends
                failed = exc
            if failed is not None and not ended:
                outcome = "error"
                log.warning("turn failed: %s: %s", type(failed).__name__, one_line(str(failed))[:200])
                yield ErrorEvent(message=f"the turn failed on the server ({type(failed).__name__})")
                yield DoneEvent(director_state=request.director_state or DirectorState(),
                                outcome=DirectorOutcome.end())
        finally:
            self.metrics.turn_finished(outcome, time.monotonic() - start, prompt_tokens, completion_tokens)
