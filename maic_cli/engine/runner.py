"""``ClassRunner``: one class, played one learner turn at a time.

Chat, batch runs and ``replay --check`` all play a class the same way: a learner
message arrives (an ``@id`` mention, or a name it opens with — ``Sam, …`` — picks who answers
first), it is recorded,
a round runs, the round is finished and everything is saved.  The runner owns
that sequence; what differs between them — where the class is recorded, saved
and shown — plugs in as :class:`RunnerHooks`.

It lives in the engine because it is pure orchestration: hooks are callbacks,
so the runner itself never touches a file or a terminal.  A hook's
``round_finished`` is called even when the round raises, so a view can always
restore the terminal.

Saves happen at boundaries only — a learner message, the end of a round or a scripted
lecture, and the lesson player's steps (``save``) — never per agent turn or per event: a
one-question class is written at most (agent turns + 2) times.  A save is atomic (the store's
job), so a process killed at any moment leaves the last boundary's complete session.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncGenerator, Mapping, Sequence
from contextlib import aclosing

from ..llm.port import LLMClient
from ..llm.spec import ModelSpec
from .addressing import addressed_agent
from .classroom import Classroom
from .events import Event
from .models import (
    AgentConfig,
    ClassSettings,
    LessonContext,
    ModelSettings,
    RoundContext,
    RoundOverrides,
    TurnConfig,
    UserProfile,
)
from .policies import DirectorPolicy, choose_policy
from .prompt_set import PromptSet
from .round import RoundResult, TurnClient, run_round

MENTION = re.compile(r"^@([A-Za-z0-9_-]+)\b")


def mentioned(text: str) -> str | None:
    """The agent id a message starts with (``@teacher why?``), whether or not it is in the class."""
    match = MENTION.match(text.strip())
    return match.group(1) if match else None


class RunnerHooks:
    """What a class is recorded, saved and shown with; override what you need."""

    def learner(self, text: str) -> None:
        """A learner message was added to the class."""

    def round_started(self, trigger: str | None, overrides: RoundOverrides | None = None) -> None:
        """A round begins (``trigger``: the agent asked to answer first; ``overrides``: the config as
        this round alone has it — a lesson's live lecture or discussion — which a transcript records)."""

    def lecture_started(self, trigger: str | None) -> None:
        """A scripted lecture begins (events no model wrote, shown like a round but not a round of
        the class: a transcript marks it so reports and the judge leave it out).  By default, a round."""
        self.round_started(trigger)

    def event(self, event: Event) -> None:
        """An engine event, after the classroom has folded it in."""

    def round_finished(self, result: RoundResult) -> None:
        """The round ended; also called when it raised (then ``result.reason`` is ``error``)."""

    def save(self) -> None:
        """A boundary to save at: after a learner message, a round, a lecture, a scene entered, a quiz answer."""


class ClassRunner:
    """``spec`` is the model behind ``llm`` (default: parsed from ``llm.model``); the prompt variant
    (compact for small models) follows it at request time, whatever a session or scenario stored.

    The runner owns the round: ``config`` holds the class's saved settings (the session's own object,
    never written here), and what one round is played with — its trigger, the lesson the class is in,
    the prompt variant, the routing guard — is a :class:`~.models.RoundContext` built for that round.
    The lesson player asks (:meth:`enter_scene`, :meth:`play_round` with typed overrides) instead of
    writing into the runner."""

    def __init__(self, classroom: Classroom, config: ClassSettings, llm: LLMClient, *,
                 agents: Mapping[str, AgentConfig], profile: UserProfile | None = None,
                 model: ModelSettings | None = None, spec: ModelSpec | None = None,
                 prompts: PromptSet | None = None, hooks: Sequence[RunnerHooks] = (),
                 director: DirectorPolicy | None = None, allow_repeat_speaker: bool = False,
                 turns: TurnClient | None = None) -> None:
        if isinstance(config, TurnConfig) and any(getattr(config, name) != field.default
                                                  for name, field in RoundContext.model_fields.items()):
            # A programming error, not a user's: a round's context given as a class setting would be lost.
            raise ValueError("ClassRunner takes the class's settings; a round's context is the runner's own "
                             "(allow_repeat_speaker=…, enter_scene(…), the model's spec, play_round's trigger)")
        self.classroom = classroom
        self.config = config
        self.agents = dict(agents)
        self.profile = profile or UserProfile()
        self.model = model
        self.hooks = list(hooks)
        self.prompts = prompts  # None: the built-in prompt set
        self.llm = llm
        self.spec = spec or ModelSpec.parse(llm.model)
        self.director = director  # None: the config's built-in policy, else the model's default
        self.allow_repeat_speaker = allow_repeat_speaker  # set by code only, never by a file
        self.turns = turns  # where a turn runs (None: here; serve/client.py: on a maic serve instance)
        self._lesson: LessonContext | None = None  # where the class is in a lesson (the lesson player says)

    @property
    def policy(self) -> DirectorPolicy:
        """Who picks the speakers (engine/policies.py, :func:`~.policies.choose_policy`)."""
        return choose_policy(self.director, self.config.director, self.spec.compact_prompts)

    def set_llm(self, llm: LLMClient, spec: ModelSpec | None = None) -> None:
        """Serve the next rounds with another model (``/model``)."""
        self.llm, self.spec = llm, spec or ModelSpec.parse(llm.model)

    def add_hook(self, hook: RunnerHooks) -> None:
        """Record, save or show the class with one more hook from now on."""
        self.hooks.append(hook)

    # -- the class and the lesson it is in -------------------------------------------------------
    def members(self) -> list[AgentConfig]:
        """The class's agents in class order (the settings' own configs first, then the registry's)."""
        found = (self.config.agent_configs.get(i) or self.agents.get(i) for i in self.config.agent_ids)
        return [agent for agent in found if agent is not None]

    @property
    def lesson(self) -> LessonContext | None:
        """Where the class is in a lesson, as the next rounds' prompts see it (``None``: no lesson)."""
        return self._lesson

    def enter_scene(self, context: LessonContext | None) -> None:
        """The class is now at ``context`` in its lesson (a scene entered, a quiz answered; ``None``:
        no lesson): every round from here on has it in its prompts until the next call."""
        self._lesson = context

    def round_context(self, trigger: str | None = None) -> RoundContext:
        """What a round started now is played with beyond the class's settings."""
        return RoundContext(trigger_agent_id=trigger, lesson=self._lesson, compact_prompts=self.spec.compact_prompts,
                            allow_repeat_speaker=self.allow_repeat_speaker)

    # -- the learner's turn ---------------------------------------------------------------
    def trigger_for(self, text: str) -> str | None:
        """Who answers ``text`` first: the agent it mentions (``@id``), if that agent is in the class,
        else the class member it opens by calling by name (``Sam, …``: engine/addressing.py).  The
        director's rule for a round's first turn dispatches it, whatever the policy would pick."""
        agent_id = mentioned(text)
        if agent_id is not None:
            return agent_id if agent_id in self.agents else None
        return addressed_agent(text, self.members())

    def add_learner_message(self, text: str) -> None:
        self.classroom.add_learner_message(text)
        for hook in self.hooks:
            hook.learner(text)
        self._save()

    async def play(self, text: str, *, overrides: RoundOverrides | None = None) -> RoundResult:
        """The learner says ``text``; the class answers (one round, with ``overrides`` if given)."""
        self.add_learner_message(text)
        return await self.play_round(self.trigger_for(text), overrides=overrides)

    @property
    def opens_discussion(self) -> bool:
        """Discussion mode, and nobody has spoken yet: the initiator opens it."""
        return bool(self.config.discussion_topic and self.config.initiator_id and not self.classroom.messages)

    async def open_discussion(self) -> RoundResult | None:
        """In discussion mode, before anyone has spoken, the initiator opens the discussion."""
        return await self.play_round(self.config.initiator_id) if self.opens_discussion else None

    async def play_round(self, trigger: str | None = None, *, overrides: RoundOverrides | None = None,
                         fresh: bool = False) -> RoundResult:
        """One round; ``overrides`` change the settings for this round only (the lesson player's lecture
        and discussion rounds: ``max_turns``, ``discussion_topic``, ``lesson`` …).  ``fresh``: a new round
        that no learner message began (a lecture, a discussion scene): the director starts over."""
        if fresh:
            self.classroom.director_state = None
        policy = self.policy
        context = self.round_context(trigger)
        config = TurnConfig.for_round(self.config, context, overrides, director=policy.name)
        # What a transcript records of this round: its own changes, and the lesson it was in.
        changes = (overrides or RoundOverrides()).model_copy(update={"lesson": config.lesson})
        recorded = changes if changes.settings() or changes.lesson is not None else None
        for hook in self.hooks:
            hook.round_started(trigger, recorded)
        result = RoundResult(reason="error", error="the round stopped unexpectedly")
        try:
            result = await run_round(self.classroom, config, self.llm, registry=self.agents,
                                     profile=self.profile, model=self.model, on_event=self._on_event,
                                     prompts=self.prompts, policy=policy, turns=self.turns)
        finally:
            for hook in self.hooks:
                hook.round_finished(result)
            self._save()
        return result

    # -- events from outside a round (the lesson player) ------------------------------------------
    def emit(self, event: Event) -> None:
        """An event that no round produced (a lesson opened, a scene, a quiz answer): folded into the
        class and handed to the hooks, as a round's events are."""
        self.classroom.apply(event)
        self._on_event(event)

    def save(self) -> None:
        """Ask the hooks to save now (the lesson player: a scene entered, a lecture ended, an answer graded)."""
        self._save()

    async def play_scripted(self, events: AsyncGenerator[Event, None], trigger: str | None = None) -> RoundResult:
        """Events that are not a model's (a scripted lecture), shown and recorded as one round.

        Cancelling it (Ctrl-C) ends it ``aborted``, like a round: the open message is kept and
        marked interrupted.  ``round_finished`` is called whatever happens, then the class is saved.
        """
        for hook in self.hooks:
            hook.lecture_started(trigger)
        result = RoundResult(reason="error", error="the lecture stopped unexpectedly")
        speakers: list[str] = []
        open_message: str | None = None
        try:
            async with aclosing(events) as stream:
                async for event in stream:
                    if event.type == "agent_start":
                        open_message = event.message_id
                        speakers.append(event.agent_id)
                    elif event.type == "agent_end":
                        open_message = None
                    self.emit(event)
            result = RoundResult(reason="end", speakers=speakers)
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None:
                task.uncancel()  # handled here: the lecture ends "aborted"
            result = RoundResult(reason="aborted", speakers=speakers, interrupted_message_id=open_message)
            if open_message is not None:
                self.classroom.mark_interrupted(open_message)
        finally:
            for hook in self.hooks:
                hook.round_finished(result)
            self._save()
        return result

    # -- plumbing -------------------------------------------------------------------------------
    def _on_event(self, event: Event) -> None:
        for hook in self.hooks:
            hook.event(event)

    def _save(self) -> None:
        for hook in self.hooks:
            hook.save()
