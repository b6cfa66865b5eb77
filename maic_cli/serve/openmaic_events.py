"""maic's turn events as OpenMAIC's ``StatelessEvent``s, and the frames of its event stream.

OpenMAIC's client reads its chat response as server-sent events in the narrowest form: it splits the body at
blank lines, keeps a piece only when it starts with ``data: `` and parses the rest as one JSON event; anything
else (a comment, an ``event:`` or ``id:`` line, a frame split by CRLF) is dropped unread.  Its loop then waits
for a ``done`` event (it carries the next director state and tells the loop whether an agent spoke) or for the
stream to close.  So every frame here is ``data: <one line of JSON>`` and a blank line, a heartbeat is the
comment ``:heartbeat`` and a blank line, and :class:`EventTranslator` makes every stream end with ``done``.

The translation: ``thinking``, ``agent_start``, ``text_delta``, ``action``, ``agent_end``, ``cue_user`` and
``error`` carry across with OpenMAIC's field names and its agent ids (serve/openmaic_class.py maps them);
``done`` carries OpenMAIC's counts and its director state — the state the client sent, with this turn's agent
summary and whiteboard actions added (as its own route builds it).  maic's own events with no OpenMAIC
counterpart (a director correction, the lesson player's events, a grounding note) are not sent; what the class
says after a grounding note is sent as text.  A reply maic dropped whole (nothing usable in it) is an agent
turn without content, so the client's loop counts an empty turn and asks again, as it does for its own.
"""

from __future__ import annotations

import json
from typing import Any

from ..engine.events import (
    ActionEvent,
    AgentEndEvent,
    AgentStartEvent,
    CueUserEvent,
    DoneEvent,
    ErrorEvent,
    Event,
    TextDeltaEvent,
    ThinkingEvent,
)
from ..engine.models import AgentTurnSummary, StoreState, WhiteboardActionRecord
from ..engine.whiteboard import DRAW_KINDS, apply_action
from ..replies.sanitize import replace_surrogates
from ..untrusted import redact
from .openmaic_class import ClassMap

HEARTBEAT = b":heartbeat\n\n"
HEARTBEAT_SECONDS = 15.0  # as OpenMAIC's route: proxies close an SSE connection silent for 30-120 s
MAX_ERROR = 500  # characters of an error's message
BOARD_ACTIONS = frozenset({"wb_clear", "wb_delete", "wb_edit_code"})  # what else changes the ids on the board


def frame(event: dict[str, Any]) -> bytes:
    """One event as its frame: ``data: `` and the JSON on one line (JSON escapes every line break inside a
    string), then a blank line.  UTF-8 as written (a class speaking Chinese costs 3 bytes a character, not 6);
    a lone surrogate, which UTF-8 cannot carry, becomes U+FFFD."""
    text = replace_surrogates(json.dumps(event, separators=(",", ":"), ensure_ascii=False))
    return b"data: " + text.encode("utf-8") + b"\n\n"


class EventTranslator:
    """Translates one turn's events; remembers what ``done`` must say."""

    def __init__(self, ids: ClassMap, board: StoreState | None = None) -> None:
        self.ids = ids
        self.board = board  # the turn's whiteboard (a copy): a drawing's element gets the id maic gives it
        self.cue_user = False
        self.finished = False  # a ``done`` was sent: nothing follows it

    def _agent(self, maic_id: str | None) -> str:
        return self.ids.openmaic(maic_id)

    def translate(self, event: Event) -> dict[str, Any] | None:
        """``event`` as OpenMAIC's event, or ``None`` when OpenMAIC has no such event."""
        if self.finished:
            return None
        if isinstance(event, ThinkingEvent):
            data: dict[str, Any] = {"stage": event.stage}
            if event.agent_id:
                data["agentId"] = self._agent(event.agent_id)
            return {"type": "thinking", "data": data}
        if isinstance(event, AgentStartEvent):
            start = {"messageId": event.message_id, "agentId": self._agent(event.agent_id),
                     "agentName": event.agent_name, "agentAvatar": event.avatar, "agentColor": event.color}
            if not event.avatar:  # a picture too long to echo in every turn: the client draws its own
                del start["agentAvatar"]
            return {"type": "agent_start", "data": start}
        if isinstance(event, TextDeltaEvent):
            return {"type": "text_delta", "data": {"content": event.content, "messageId": event.message_id}}
        if isinstance(event, ActionEvent):
            return {"type": "action", "data": {
                "actionId": event.action_id, "actionName": event.action_name, "params": self._drawn(event),
                "agentId": self._agent(event.agent_id), "messageId": event.message_id}}
        if isinstance(event, AgentEndEvent):
            return {"type": "agent_end",
                    "data": {"messageId": event.message_id, "agentId": self._agent(event.agent_id)}}
        if isinstance(event, CueUserEvent):
            self.cue_user = True
            data = {"fromAgentId": self._agent(event.from_agent_id)} if event.from_agent_id else {}
            return {"type": "cue_user", "data": data}
        if isinstance(event, ErrorEvent):
            return error(event.message)
        if isinstance(event, DoneEvent):
            return self.done(event)
        return None

    def _drawn(self, event: ActionEvent) -> dict[str, Any]:
        """The action's params; a drawing's with the id its element has on maic's board, so that the client's
        board and the class's name it alike (a later ``wb_delete`` or ``wb_edit_code`` finds it)."""
        if self.board is None or not (event.action_name in DRAW_KINDS or event.action_name in BOARD_ACTIONS):
            return event.params
        before = {element.id for element in self.board.whiteboard}
        apply_action(self.board, event.action_name, event.params, event.agent_id)
        if event.action_name in DRAW_KINDS and "elementId" not in event.params:
            made = [element.id for element in self.board.whiteboard if element.id not in before]
            if made:
                return {**event.params, "elementId": made[-1]}
        return event.params

    def done(self, event: DoneEvent | None = None) -> dict[str, Any]:
        """The ``done`` that ends the stream: from the turn's own, or (``None``: the turn failed before it)
        with the client's director state unchanged."""
        self.finished = True
        state = self.ids.request.directorState if self.ids.request is not None else None
        responses = [r.model_dump() for r in state.agentResponses] if state is not None else []
        ledger = [r.model_dump() for r in state.whiteboardLedger] if state is not None else []
        turn_count = state.turnCount if state is not None else 0
        total_agents, total_actions, had_content = 0, 0, False
        if event is not None:
            new = event.director_state
            responses += [self._summary(s) for s in new.agent_responses[self.ids.responses_in:]]
            ledger += [self._record(r) for r in new.whiteboard_ledger[self.ids.ledger_in:]]
            turn_count = self.ids.turn_offset + new.turn_count
            total_agents = 1 if event.reply_dropped else event.total_agents
            total_actions, had_content = event.total_actions, event.agent_had_content
        return {"type": "done", "data": {
            "totalActions": total_actions, "totalAgents": total_agents, "agentHadContent": had_content,
            "cueUserReceived": self.cue_user,
            "directorState": {"turnCount": turn_count, "agentResponses": responses, "whiteboardLedger": ledger}}}

    def _record(self, record: WhiteboardActionRecord) -> dict[str, Any]:
        return {"actionName": record.action_name, "agentId": self._agent(record.agent_id),
                "agentName": record.agent_name, "params": record.params}

    def _summary(self, summary: AgentTurnSummary) -> dict[str, Any]:
        return {"agentId": self._agent(summary.agent_id), "agentName": summary.agent_name,
                "contentPreview": summary.content_preview, "actionCount": summary.action_count,
                "whiteboardActions": [self._record(r) for r in summary.whiteboard_actions]}


def error(message: str) -> dict[str, Any]:
    """OpenMAIC's ``error`` event (one line, bounded)."""
    return {"type": "error", "data": {"message": " ".join(redact(message).split())[:MAX_ERROR] or "error"}}
