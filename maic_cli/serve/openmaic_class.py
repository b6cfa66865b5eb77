"""An OpenMAIC chat request as one maic turn: its agents, conversation, board and director state.

:func:`build_turn` turns a checked :class:`~.openmaic_request.ChatRequest` into maic's
:class:`~maic_cli.engine.models.TurnRequest` (what ``generate_turn`` runs) and a :class:`ClassMap` that
carries what the way back needs (serve/openmaic_events.py): OpenMAIC's agent ids, and how much of the director
state came in, so that ``done`` hands back the client's state with this turn's additions.

- **The class** is the request's agents, in ``config.agentIds`` order: a generated agent's config from
  ``agentConfigs`` (its name, role, persona, avatar, colour, priority, and the allowed actions maic knows); one of
  OpenMAIC's default agents (``default-1`` … ``default-6``: teacher, assistant, four students) is maic's default
  class in the same order (store/personas.py), under OpenMAIC's id and look.  An id maic cannot use as is (a
  generated ``gen-Xy_12ab``) gets a maic id here and its own back in every event.  Agents nobody knows are left
  out; a class with none left is refused.
- **The conversation**: user messages are the learner's lines, assistant messages the agents' (their text parts,
  and their ``action-*`` parts as actions), an interrupted one marked so; system messages are not the class's.
- **The board** is what the client's stage shows on its whiteboard (its text, formulas, tables and code, read
  as the classroom reader reads a slide), else the whiteboard ledger replayed through maic's reducer
  (engine/whiteboard.py).
- **A discussion** (``sessionType: discussion``, a topic, a prompt, who speaks first) is maic's discussion round:
  topic, prompt and initiator in the class settings, the first speaker as the round's trigger (as in maic, each
  agent speaks at most once in a round, then the learner has the word).
- **A first request with no new learner line** (OpenMAIC's loop may send its first request before the typed
  line reaches its messages) opens with an agent, as OpenMAIC's route does, so that the loop goes on to the
  request that carries the line (:func:`_opener`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from ..engine.action_params import PARAM_MODELS
from ..engine.models import (
    ActionRecord,
    AgentConfig,
    AgentTurnSummary,
    DirectorState,
    Message,
    MessagePart,
    Role,
    StoreState,
    TurnConfig,
    TurnRequest,
    UserProfile,
    WhiteboardActionRecord,
    default_initiator,
)
from ..engine.whiteboard import apply_action
from ..formats.common import line, text
from .openmaic_lesson import read_request_lesson, read_stage_board
from .openmaic_request import MAX_TEXT, AgentSpec, ChatRequest, RequestProblem, UIMessage, WhiteboardRecord

MAX_TURNS = 50  # agent turns a client's loop may take in one round before the director ends it (maic's most)
_MAIC_ID = re.compile(r"^[a-z0-9][a-z0-9_-]{0,39}$")
# OpenMAIC's default agents (its agent registry), in order, and the look its web client draws them with.
OPENMAIC_DEFAULTS = {
    "default-1": ("teacher", "/avatars/teacher.png", "#3b82f6"),
    "default-2": ("assistant", "/avatars/assist.png", "#10b981"),
    "default-3": ("class_clown", "/avatars/clown.png", "#f59e0b"),
    "default-4": ("curious_student", "/avatars/curious.png", "#ec4899"),
    "default-5": ("note_taker", "/avatars/note-taker.png", "#06b6d4"),
    "default-6": ("deep_thinker", "/avatars/thinker.png", "#8b5cf6"),
}


@dataclass
class ClassMap:
    """OpenMAIC's agent ids ↔ maic's, and the director state as it came in (for ``done``)."""

    to_maic: dict[str, str] = field(default_factory=dict)
    to_openmaic: dict[str, str] = field(default_factory=dict)
    responses_in: int = 0  # maic summaries made from the request's agentResponses (one each)
    ledger_in: int = 0  # maic ledger records made from the request's whiteboardLedger
    turn_offset: int = 0  # turns the client counted that maic's round does not (a line that came late)
    request: ChatRequest | None = None

    def add(self, openmaic_id: str) -> str:
        if openmaic_id in self.to_maic:
            return self.to_maic[openmaic_id]
        maic_id = openmaic_id
        if not _MAIC_ID.fullmatch(maic_id) or maic_id.upper() in {"USER", "END"} or maic_id in self.to_openmaic:
            number = len(self.to_maic) + 1
            while f"agent-{number}" in self.to_openmaic or f"agent-{number}" in self.to_maic:
                number += 1
            maic_id = f"agent-{number}"
        self.to_maic[openmaic_id] = maic_id
        self.to_openmaic[maic_id] = openmaic_id
        return maic_id

    def openmaic(self, maic_id: str | None) -> str:
        return self.to_openmaic.get(maic_id or "", maic_id or "")


def _role(value: str) -> Role:
    return value if value in ("teacher", "assistant", "student") else "student"  # type: ignore[return-value]


def _actions(names: list[str]) -> list[str]:
    return list(dict.fromkeys(name for name in names if name in PARAM_MODELS))


def _generated(spec: AgentSpec, maic_id: str) -> AgentConfig:
    role = _role(spec.role)
    name = line(spec.name, 60) or maic_id
    priority = spec.priority if spec.priority == spec.priority else 5  # (NaN)
    return AgentConfig(id=maic_id, name=name, role=role,
                       persona=text(spec.persona, MAX_TEXT) or f"{name}, a {role} in this class.",
                       avatar=line(spec.avatar, 2000) if len(spec.avatar) <= 2000 else "",  # (a picture inline)
                       color=line(spec.color, 40) or "white",
                       priority=int(min(max(priority, 1), 10)), allowed_actions=_actions(spec.allowedActions))


def _agents(request: ChatRequest, defaults: Mapping[str, AgentConfig], ids: ClassMap) -> dict[str, AgentConfig]:
    specs = {spec.id: spec for spec in request.config.agentConfigs or []}
    agents: dict[str, AgentConfig] = {}
    for openmaic_id in dict.fromkeys(request.config.agentIds):
        spec = specs.get(openmaic_id)
        known = OPENMAIC_DEFAULTS.get(openmaic_id)
        if spec is not None:
            maic_id = ids.add(openmaic_id)
            agents[maic_id] = _generated(spec, maic_id)
        elif known is not None and known[0] in defaults:
            maic_id = ids.add(openmaic_id)
            agents[maic_id] = defaults[known[0]].model_copy(update={"id": maic_id, "avatar": known[1],
                                                                   "color": known[2]})
    if not agents:
        raise RequestProblem("INVALID_REQUEST", "config.agentIds: none of these agents is known here (send a "
                                                "generated agent's config in config.agentConfigs)")
    return agents


def _message(raw: UIMessage, ids: ClassMap) -> Message | None:
    """One UI message as maic's (``None``: nothing of the class's in it)."""
    if raw.role == "system":
        return None
    metadata = raw.metadata
    parts: list[MessagePart] = []
    for number, part in enumerate(raw.parts):
        if part.type == "text" and part.text:
            if said := text(part.text, MAX_TEXT, keep_ends=True):
                parts.append(MessagePart(kind="text", text=said))
        elif part.type.startswith("action-") and raw.role == "assistant":
            action = part.actionName or part.type[len("action-"):]
            if action in PARAM_MODELS:
                record = ActionRecord(action_id=line(part.actionId or f"action-{number + 1}", 100), name=action,
                                      params=part.input or {})
                parts.append(MessagePart(kind="action", action=record))
    if not parts:
        return None
    interrupted = bool(metadata and metadata.interrupted)
    if raw.role == "user":
        return Message(role="user", parts=parts, interrupted=interrupted)
    agent_id = metadata.agentId if metadata else None
    sender: str | None = line(metadata.senderName, 60) if metadata and metadata.senderName else None
    return Message(role="agent", agent_id=ids.to_maic.get(agent_id or ""), agent_name=sender or agent_id,
                   parts=parts, interrupted=interrupted)


def _record(raw: WhiteboardRecord, ids: ClassMap) -> WhiteboardActionRecord | None:
    if raw.actionName not in PARAM_MODELS:
        return None
    agent_id: str = ids.to_maic.get(raw.agentId) or line(raw.agentId, 100)
    return WhiteboardActionRecord(action_name=raw.actionName, agent_id=agent_id,
                                  agent_name=line(raw.agentName, 60) or agent_id, params=raw.params)


def _director_state(request: ChatRequest, ids: ClassMap, late_line: bool) -> DirectorState:
    """The client's director state as maic's.  ``late_line``: the learner's line came after this round's turns
    (OpenMAIC's loop sends it one request late): for maic a line begins a round, so the director starts afresh
    (nobody has answered it yet) on the board drawn so far, and the client's count goes on from where it was."""
    incoming = request.directorState
    if incoming is None:
        return DirectorState()
    responses = []
    for raw in incoming.agentResponses:
        actions = [r for r in (_record(a, ids) for a in raw.whiteboardActions) if r is not None]
        agent_id: str = ids.to_maic.get(raw.agentId) or line(raw.agentId, 100)
        responses.append(AgentTurnSummary(agent_id=agent_id, agent_name=line(raw.agentName, 60) or agent_id,
                                          content_preview=text(raw.contentPreview, 300),
                                          action_count=raw.actionCount, whiteboard_actions=actions))
    ledger = [r for r in (_record(raw, ids) for raw in incoming.whiteboardLedger) if r is not None]
    ids.ledger_in = len(ledger)
    if late_line:
        ids.turn_offset = incoming.turnCount
        return DirectorState(whiteboard_ledger=ledger)
    ids.responses_in = len(responses)
    return DirectorState(turn_count=incoming.turnCount, agent_responses=responses, whiteboard_ledger=ledger)


def _board(request: ChatRequest, state: DirectorState) -> StoreState:
    """The whiteboard as the client shows it (its stage's board, which holds this round's drawings too), else
    as the ledger drew it."""
    store = StoreState()
    drawn = read_stage_board(request.storeState.stage)
    if drawn:
        for name, params in drawn:
            apply_action(store, name, params)
    else:
        for record in state.whiteboard_ledger:
            apply_action(store, record.action_name, record.params, record.agent_id)
    store.whiteboard_open = request.storeState.whiteboardOpen
    return store


def _opener(agents: Mapping[str, AgentConfig], discussion: bool) -> str:
    """Who speaks first in a round no learner line began: OpenMAIC's loop sends its first request before the
    line the learner typed is in its messages, and its own route has an agent speak then (a round that ended
    on the learner's turn here would never send the question).  The teacher in Q&A, a student in a discussion."""
    listed = list(agents.values())
    if discussion:
        return default_initiator(listed)
    return next((a.id for a in listed if a.role == "teacher"), listed[0].id)


def build_turn(request: ChatRequest, defaults: Mapping[str, AgentConfig], *,
               compact_prompts: bool = False) -> tuple[TurnRequest, ClassMap]:
    """The maic turn ``request`` asks for (``defaults``: maic's default class by its ids), and the id map back."""
    ids = ClassMap(request=request)
    agents = _agents(request, defaults, ids)
    messages = [m for m in (_message(raw, ids) for raw in request.messages) if m is not None]
    incoming_turns = request.directorState.turnCount if request.directorState is not None else 0
    late_line = incoming_turns > 0 and bool(messages) and messages[-1].role == "user"
    state = _director_state(request, ids, late_line)
    store = _board(request, state)
    config = request.config
    discussion = config.sessionType == "discussion" or bool(config.discussionTopic)
    named = ids.to_maic.get(config.triggerAgentId or "")  # OpenMAIC sends it with every request of the loop
    trigger = None if late_line else named  # (it opens the client's round, not the one a late line begins)
    learner_spoke = any(m.role == "user" for m in messages)
    if trigger is None and not late_line and state.turn_count == 0 and (not messages or messages[-1].role != "user"):
        trigger = _opener(agents, discussion)
    read = read_request_lesson(request.storeState.stage, request.storeState.scenes,
                               request.storeState.currentSceneId)
    context = None
    if read is not None:
        lesson, store.slides = read
        store.current_slide = lesson.slide_on_screen()
        quiz = request.storeState.quizResults
        context = lesson.context("discuss" if discussion and not learner_spoke else "question",
                                 quiz if quiz is not None and quiz.sceneId == request.storeState.currentSceneId
                                 else None)
    topic = line(config.discussionTopic, 500) if discussion and config.discussionTopic else None
    turn_config = TurnConfig(
        agent_ids=list(agents), agent_configs=agents, max_turns=MAX_TURNS,
        discussion_topic=topic or ("an open discussion" if discussion else None),
        discussion_prompt=text(config.discussionPrompt, MAX_TEXT) or None
        if discussion and config.discussionPrompt else None,
        initiator_id=(named or trigger) if discussion else None, trigger_agent_id=trigger, lesson=context,
        compact_prompts=compact_prompts)
    profile = request.userProfile
    user = UserProfile(nickname=line(profile.nickname, 60) if profile and profile.nickname else "Learner",
                       bio=text(profile.bio, 2000) if profile and profile.bio else "")
    turn = TurnRequest(messages=messages, store_state=store, config=turn_config, director_state=state,
                       user_profile=user)
    return turn, ids
