"""``generate_turn``: exactly one director → (agent) cycle, stateless.

Everything the turn needs is in the :class:`TurnRequest`; it keeps nothing
between calls and ends with a ``done`` event carrying the new
``director_state``.  A provider error becomes an ``error`` event followed by
``done`` — never an exception.  Cancelling the consumer (Ctrl-C) propagates
``CancelledError``; the caller keeps the partial message it already received.
"""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator, Mapping
from contextlib import aclosing
from dataclasses import replace

from ..llm.port import LLMClient, LLMError, LLMRequest
from ..replies.speech import example_sentences
from .agent_reply import Hygiene, ReplyStream
from .calls import agent_call, director_call, learner_text, resolve_agents
from .director import MAX_PICK, decide_by_rules, parse_director_pick, read_pick
from .events import (
    AgentEndEvent,
    AgentStartEvent,
    CallUsage,
    CueUserEvent,
    DirectorCorrectionEvent,
    DoneEvent,
    ErrorEvent,
    Event,
    TextDeltaEvent,
    ThinkingEvent,
    TurnUsage,
)
from .grounded_turn import answer_text, lesson_ground, owed_answer, pointable
from .guards import guard_pick
from .models import (
    AgentConfig,
    AgentTurnSummary,
    DirectorState,
    Message,
    TurnRequest,
    new_id,
)
from .outcomes import DirectorOutcome, Pick
from .policies import DirectorPolicy, reads_only
from .prompt_set import PromptSet

MAX_PICK_ERROR = 300  # characters of a failing hook's message in the error event
RECENT_REPLIES = 12  # how many earlier agent replies a new one is checked against
RETRY_TEMPERATURE = 1.0  # a reply that copied an earlier one is asked for again, hotter


async def _collect(llm: LLMClient, request: LLMRequest, usage: CallUsage) -> str:
    """Run one call to the end and return its text, adding its usage to ``usage``."""
    parts: list[str] = []
    async for text in _timed_stream(llm, request, usage):
        parts.append(text)
    return "".join(parts)


async def _timed_stream(llm: LLMClient, request: LLMRequest, usage: CallUsage) -> AsyncGenerator[str, None]:
    start = time.monotonic()
    usage.calls += 1
    usage.ttft = None
    stream = llm.stream(request)
    try:
        async for piece in stream:
            if piece.text:
                if usage.ttft is None:
                    usage.ttft = time.monotonic() - start
                yield piece.text
            if piece.usage is not None:
                usage.prompt_tokens += piece.usage.prompt_tokens
                usage.completion_tokens += piece.usage.completion_tokens
                usage.cached_tokens += piece.usage.cached_tokens
                usage.cost += piece.usage.cost
    finally:
        usage.duration = time.monotonic() - start
        await stream.aclose()  # type: ignore[attr-defined]  # closed now, not by a finalizer task later


def _fork(state: DirectorState | None) -> DirectorState:
    """The state this turn carries on: its lists are its own (the turn appends to them), their records are
    shared (a record is never changed once made), so the request's state stays as it was."""
    if state is None:
        return DirectorState()
    return state.model_copy(update={"agent_responses": list(state.agent_responses),
                                    "whiteboard_ledger": list(state.whiteboard_ledger)})


def _done(state: DirectorState, usage: TurnUsage, outcome: DirectorOutcome, **extra: object) -> DoneEvent:
    return DoneEvent(director_state=state, usage=usage, outcome=outcome, **extra)  # type: ignore[arg-type]


async def _ask_llm(request: TurnRequest, llm: LLMClient, agents: dict[str, AgentConfig], state: DirectorState,
                   usage: TurnUsage, prompts: PromptSet | None) -> Pick:
    """One LLM director call, parsed defensively (raises :class:`LLMError`)."""
    call = director_call(request, agents, state, prompts=prompts)
    return parse_director_pick(await _collect(llm, call, usage.director))


def _policy_pick(policy: DirectorPolicy, request: TurnRequest, agents: dict[str, AgentConfig],
                 state: DirectorState) -> Pick | None:
    """The policy's pick (``None``: ask the LLM; a hook's string is read as a pick here,
    :func:`~.director.read_pick`); a hook that raises or answers something other than a pick, a
    string or ``None`` becomes a ``ValueError`` naming the policy (the round reports it)."""
    # A researcher's hook gets copies it may change at will; our own policies only read.
    given = state if reads_only(policy) else state.model_copy(deep=True)
    try:
        pick = policy.decide(list(agents.values()), given, list(request.messages), request.config)
    except Exception as exc:  # noqa: BLE001 - a researcher's hook may raise anything; the round reports it
        detail = " ".join(str(exc).split())[:MAX_PICK_ERROR]
        raise ValueError(f"director {policy.name}: {type(exc).__name__}: {detail}") from None
    if isinstance(pick, str):
        return read_pick(pick)
    if pick is not None and not isinstance(pick, Pick):
        raise ValueError(f"director {policy.name}: returned {type(pick).__name__}, not an id, USER, END or None")
    return pick


async def generate_turn(request: TurnRequest, llm: LLMClient, registry: Mapping[str, AgentConfig] | None = None,
                        *, prompts: PromptSet | None = None,
                        policy: DirectorPolicy | None = None) -> AsyncGenerator[Event, None]:
    """One director → agent cycle; ``prompts`` is the prompt set (``None``: the built-in one), ``policy``
    who picks the next speaker (``None``: the LLM).  Routing guards check every pick but the turn limit."""
    state = _fork(request.director_state)
    agents = resolve_agents(request, registry)
    usage = TurnUsage()
    config = request.config

    rules = decide_by_rules(config, state)
    pick = rules.pick
    if pick is None:
        try:
            pick = _policy_pick(policy, request, agents, state) if policy is not None else None
        except ValueError as exc:
            yield ErrorEvent(message=str(exc))
            yield _done(state, usage, DirectorOutcome.end())
            return
        if pick is None:
            yield ThinkingEvent(stage="director")
            try:
                pick = await _ask_llm(request, llm, agents, state, usage, prompts)
            except LLMError as exc:
                yield ErrorEvent(message=str(exc))
                yield _done(state, usage, DirectorOutcome.end())
                return
    if rules.reason != "max_turns":
        correction = guard_pick(pick, agents, config, state, request.messages)
        if correction is not None:
            yield DirectorCorrectionEvent(original=correction.original.label[:MAX_PICK],
                                          corrected=correction.corrected.label, rule=correction.rule)
            pick = correction.corrected

    outcome = pick.outcome(agents)
    if outcome.kind == "user":
        last = state.agent_responses[-1].agent_id if state.agent_responses else None
        yield CueUserEvent(from_agent_id=last)
        yield _done(state, usage, outcome)
        return
    agent = agents.get(outcome.agent_id or "")
    if outcome.kind != "agent" or agent is None:
        yield _done(state, usage, outcome)
        return

    async with aclosing(_run_agent(request, llm, agent, state, usage, prompts, agents)) as events:
        async for event in events:
            yield event


def earlier_replies(messages: list[Message], state: DirectorState) -> list[str]:
    """What agents said lately (this round's turns included): a new reply must not copy it."""
    said = [m.text for m in messages if m.role == "agent" and m.text.strip()]
    said += [r.content_preview for r in state.agent_responses if r.content_preview.strip()]
    return said[-RECENT_REPLIES:]


def hygiene_for(request: TurnRequest, agents: Mapping[str, AgentConfig] | None = None) -> Hygiene:
    """What an agent's reply is checked against: the learner (who must not be impersonated), what a
    small model may draw from (the learner's message, the lesson's title, scene and quiz lines, the
    current slide's elements), the lesson's gate on a small model and what a pointer may land on
    (engine/grounded_turn.py)."""
    profile = request.user_profile
    slide = request.store_state.slide
    sources = [learner_text(request.messages) or ""]
    lesson = request.config.lesson
    if lesson is not None:
        sources += [lesson.title, lesson.scene, *lesson.quiz]
    if slide is not None:
        sources += [slide.title, *(e.plain_text() for e in slide.elements)]
    titles = tuple(t for t in ((lesson.title, lesson.scene) if lesson else ()) + ((slide.title,) if slide else ()) if t)
    return Hygiene(learner_name=profile.nickname, learner_bio=profile.bio, sources="\n".join(sources),
                   ground=lesson_ground(request, list((agents or {}).values())), pointable=pointable(request),
                   titles=titles)


def _hotter(call: LLMRequest) -> LLMRequest:
    """The same call, sampled hotter: its prompt is cached, its reply differs."""
    return replace(call, temperature=max(call.temperature or 0.0, RETRY_TEMPERATURE))


async def _run_agent(request: TurnRequest, llm: LLMClient, agent: AgentConfig, state: DirectorState,
                     usage: TurnUsage, prompts: PromptSet | None,
                     agents: Mapping[str, AgentConfig]) -> AsyncGenerator[Event, None]:
    yield ThinkingEvent(stage="agent_loading", agent_id=agent.id)
    message_id = new_id("msg")
    start: Event | None = AgentStartEvent(message_id=message_id, agent_id=agent.id, agent_name=agent.name,
                                          avatar=agent.avatar, color=agent.color)
    built = agent_call(request, agent, state, prompts=prompts)
    call, allowed, context, messages = built.request, built.allowed, built.context, built.request.messages
    compact = request.config.compact_prompts
    # Small models: whole sentences only, and one more try (same prompt, so it is all cached;
    # a higher temperature) when the reply opens with a copy of an earlier one or of its prompt's
    # examples, speaks as the learner, or has nothing left to say (agent_reply.py).
    examples = example_sentences(messages[0]["content"]) if compact else []
    earlier = [*examples, *earlier_replies(request.messages, state)] if compact else []
    hygiene = hygiene_for(request, agents)
    error: LLMError | None = None
    # The speaker's card opens with the first thing it shows: a reply dropped whole takes no turn.
    for attempt in range(2 if compact else 1):
        reply = ReplyStream(agent, allowed, message_id, gated=compact, earlier=earlier, may_retry=attempt == 0,
                            hygiene=hygiene, examples=examples)
        texts = _timed_stream(llm, call if attempt == 0 else _hotter(call), usage.agent)
        try:
            async for text in texts:
                for event in reply.feed(text):
                    if start is not None:
                        yield start
                        start = None
                    yield event
                if reply.repeat:
                    break
        except LLMError as exc:
            error = exc
        finally:
            await texts.aclose()  # an abandoned turn ends its call here (its record is written now)
        finished = [] if reply.repeat else reply.finish()  # after an error too: what it said stands
        if reply.repeat and error is None:
            continue
        for event in finished:
            if start is not None:
                yield start
                start = None
            yield event
        break
    content = reply.content if not reply.repeat else ""
    owed = owed_answer(request) if error is None else []
    added = answer_text(request, agent, content, owed) if owed else None
    if added is not None:  # the question's grounded answer, which the model's own words did not carry
        if start is not None:
            yield start
            start = None
        spoken = (" " if content.strip() else "") + added
        yield TextDeltaEvent(message_id=message_id, content=spoken)
        content += spoken
    if start is not None:  # nothing was shown: no card, no turn, no summary (the director may pick again)
        if error is not None:
            yield ErrorEvent(message=str(error))
        yield _done(state, usage, DirectorOutcome.agent(agent.id), total_agents=0, agent_had_content=False,
                    reply_dropped=True, dropped_actions=reply.dropped, parse_recoveries=reply.parser.stats.recoveries,
                    ungrounded_sentences=reply.ungrounded, dropped_pointers=reply.dropped_pointers)
        return
    yield AgentEndEvent(message_id=message_id, agent_id=agent.id,
                        raw_reply="".join(reply.raw) if error is None else None, context=context)

    state.turn_count += 1
    state.agent_responses.append(AgentTurnSummary(
        agent_id=agent.id, agent_name=agent.name, content_preview=content[:300],
        action_count=reply.actions, whiteboard_actions=reply.wb_actions))
    state.whiteboard_ledger.extend(reply.wb_actions)
    if error is not None:
        yield ErrorEvent(message=str(error))
    yield _done(state, usage, DirectorOutcome.agent(agent.id), total_actions=reply.actions, total_agents=1,
                agent_had_content=bool(content.strip() or reply.actions),
                dropped_actions=reply.dropped, parse_recoveries=reply.parser.stats.recoveries,
                ungrounded_sentences=reply.ungrounded, dropped_pointers=reply.dropped_pointers,
                answered_from_lesson=added is not None)


