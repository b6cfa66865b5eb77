"""OpenMAIC-shaped chat requests and a reader of its event stream, for the ``/api/chat`` tests.

The bodies are written after OpenMAIC's types (``lib/types/chat.ts``: ``StatelessChatRequest``; its stage and
scene types for ``storeState``) and after what its web client sends (``components/chat/use-chat-sessions.ts``):
UI messages with ``parts`` and ``metadata``, the whole stage and scenes, the class in ``config``, the director
state of the previous response, and the model settings a browser holds (``apiKey``, ``baseUrl``, ``model``,
``providerType``), which a maic server must never use.

:func:`client_events` reads a response body as OpenMAIC's client loop does (``lib/chat/agent-loop.ts``): split at
blank lines, keep a piece only if it starts with ``data: ``, parse the rest; everything else is dropped.
:func:`agent_loop` plays its loop: one request per agent turn, the director state carried from each ``done`` into
the next request, until a ``cue_user``, a turn with no agent, two empty turns in a row, or the turn limit.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st

SLIDE_SCENE: dict[str, Any] = {
    "id": "scene-halves", "stageId": "stage-1", "type": "slide", "title": "What a half is", "order": 1,
    "content": {"type": "slide", "canvas": {
        "id": "canvas-halves", "viewportSize": 1000, "viewportRatio": 0.5625,
        "theme": {"backgroundColor": "#fff", "themeColors": [], "fontColor": "#333", "fontName": "Inter"},
        "elements": [
            {"id": "title_1", "type": "text", "left": 60, "top": 20, "width": 800, "height": 60, "rotate": 0,
             "textType": "title", "content": "<p>What a half is</p>", "defaultFontName": "", "defaultColor": ""},
            {"id": "body_1", "type": "text", "left": 60, "top": 120, "width": 800, "height": 200, "rotate": 0,
             "content": "<ul><li>Cut a whole into two equal parts.</li><li>Each part is one half.</li></ul>",
             "defaultFontName": "", "defaultColor": ""},
        ]}},
    "actions": [
        {"id": "sp-1", "type": "speech", "text": "Today we look at halves."},
        {"id": "spot-1", "type": "spotlight", "elementId": "body_1"},
    ],
}
QUIZ_SCENE: dict[str, Any] = {
    "id": "scene-quiz", "stageId": "stage-1", "type": "quiz", "title": "Check", "order": 2,
    "content": {"type": "quiz", "questions": [
        {"id": "q1", "type": "single", "question": "How many halves make a whole?",
         "options": [{"label": "Two", "value": "A"}, {"label": "Three", "value": "B"}], "answer": ["A"]}]},
}
STAGE: dict[str, Any] = {"id": "stage-1", "name": "Fractions for beginners", "description": "Halves first.",
                         "createdAt": 1_700_000_000_000, "updatedAt": 1_700_000_000_000}
GENERATED_AGENTS: list[dict[str, Any]] = [
    {"id": "gen-T3ach_r1", "name": "Professor Lin", "role": "teacher", "persona": "A patient maths teacher.",
     "avatar": "/avatars/teacher.png", "color": "#3b82f6", "allowedActions": ["spotlight", "wb_open",
                                                                              "wb_draw_text", "wb_close"],
     "priority": 10, "isGenerated": True, "boundStageId": "stage-1"},
    {"id": "gen-Stud_Nt2", "name": "Kai", "role": "student", "persona": "Asks why, often.",
     "avatar": "/avatars/curious.png", "color": "#ec4899", "allowedActions": ["wb_draw_text"], "priority": 5,
     "isGenerated": True, "boundStageId": "stage-1"},
]
BROWSER_MODEL = {"apiKey": "sk-browser-key-never-used", "model": "openai:gpt-4o-mini", "providerType": "openai",
                 "thinkingConfig": {"enabled": False}}


def user_message(text: str, number: int = 1) -> dict[str, Any]:
    return {"id": f"user-{number}", "role": "user", "parts": [{"type": "text", "text": text}],
            "metadata": {"senderName": "Ana", "originalRole": "user", "createdAt": 1_700_000_000_000 + number}}


def agent_message(agent_id: str, name: str, text: str, number: int = 1,
                  actions: list[tuple[str, dict[str, Any]]] = ()) -> dict[str, Any]:  # type: ignore[assignment]
    parts: list[dict[str, Any]] = [{"type": "text", "text": text}]
    parts += [{"type": f"action-{action}", "actionId": f"act-{number}-{n}", "actionName": action, "input": params,
               "state": "result", "output": {"success": True}} for n, (action, params) in enumerate(actions)]
    return {"id": f"assistant-{agent_id}-{number}", "role": "assistant", "parts": parts,
            "metadata": {"senderName": name, "originalRole": "agent", "agentId": agent_id,
                         "createdAt": 1_700_000_000_000 + number}}


def store_state(scenes: list[dict[str, Any]] | None = None, current: str | None = "scene-halves",
                whiteboard_open: bool = False) -> dict[str, Any]:
    return {"stage": STAGE, "scenes": [SLIDE_SCENE, QUIZ_SCENE] if scenes is None else scenes,
            "currentSceneId": current, "mode": "autonomous", "whiteboardOpen": whiteboard_open}


def qa_request(question: str | None = "Why are both halves the same size?",
               agent_ids: tuple[str, ...] = ("default-1", "default-4"), **extra: Any) -> dict[str, Any]:
    """A Q&A question to OpenMAIC's default class (``question=None``: the first request of its loop, sent
    before the typed question reached the client's messages)."""
    messages = [user_message(question)] if question is not None else []
    body: dict[str, Any] = {"messages": messages, "storeState": store_state(),
                            "config": {"agentIds": list(agent_ids), "sessionType": "qa"},
                            "userProfile": {"nickname": "Ana", "bio": "Year 5"}, **BROWSER_MODEL}
    body.update(extra)
    return body


def discussion_request(trigger: str = "gen-Stud_Nt2") -> dict[str, Any]:
    """A discussion the class opens (OpenMAIC's roundtable): no learner message, a topic, a first speaker."""
    return {"messages": [], "storeState": store_state(),
            "config": {"agentIds": [a["id"] for a in GENERATED_AGENTS], "sessionType": "discussion",
                       "discussionTopic": "Is a half of a big pizza still a half?",
                       "discussionPrompt": "Talk about whether halves depend on the size of the whole.",
                       "triggerAgentId": trigger, "agentConfigs": GENERATED_AGENTS},
            "userProfile": {"nickname": "Ana"}, **BROWSER_MODEL}


def client_events(body: bytes) -> list[dict[str, Any]]:
    """The events OpenMAIC's client loop reads from a response body (it drops every other piece)."""
    events = []
    for piece in body.decode("utf-8").split("\n\n"):
        line = piece.strip()
        if not line.startswith("data: "):
            continue
        try:
            events.append(json.loads(line[len("data: "):]))
        except ValueError:
            continue
    return events


def agent_loop(send: Callable[[dict[str, Any]], bytes], template: dict[str, Any], max_turns: int = 6,
               late: dict[str, Any] | None = None) -> tuple[str, list[list[dict[str, Any]]]]:
    """OpenMAIC's client loop over ``send`` (one POST): why it stopped, and the events of each request.  The
    agents' messages are added to the conversation as its client adds them (text and action parts); ``late``
    is the learner's typed message as its client's quirk sends it: in the messages from the second request on
    (after what the first request's agent said)."""
    messages = list(template["messages"])
    director_state: dict[str, Any] | None = None
    empty = 0
    streams: list[list[dict[str, Any]]] = []
    turn_count = 0
    while turn_count < max_turns:
        body = {**template, "messages": messages}
        if director_state is not None:
            body["directorState"] = director_state
        events = client_events(send(body))
        streams.append(events)
        done = next((e["data"] for e in events if e["type"] == "done"), None)
        if done is None:
            return "no_done", streams
        for start in (e["data"] for e in events if e["type"] == "agent_start"):
            said = "".join(e["data"]["content"] for e in events if e["type"] == "text_delta"
                           and e["data"].get("messageId") == start["messageId"])
            acted = [(e["data"]["actionName"], e["data"]["params"]) for e in events if e["type"] == "action"
                     and e["data"].get("messageId") == start["messageId"]]
            messages.append(agent_message(start["agentId"], start["agentName"], said, len(messages) + 1, acted))
        if late is not None and len(streams) == 1:
            messages.append(late)
        director_state = done["directorState"]
        turn_count = director_state["turnCount"] if director_state else turn_count + 1
        if any(e["type"] == "cue_user" for e in events):
            return "cue_user", streams
        if done["totalAgents"] == 0:
            return "end", streams
        empty = 0 if done.get("agentHadContent", True) else empty + 1
        if empty >= 2:
            return "empty_turns", streams
    return "max_turns", streams


# -- hypothesis: bodies shaped like OpenMAIC's request, and anything else in each place ------------------------

_json = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=30),
                     lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner,
                                                                                  max_size=4), max_leaves=20)
_part = st.fixed_dictionaries({"type": st.sampled_from(["text", "action-wb_draw_text", "action-bogus", "file"])},
                              optional={"text": st.text(max_size=50) | _json, "input": _json,
                                        "actionName": st.text(max_size=20)})
_message = st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant", "system", "tool"])},
                                 optional={"parts": st.lists(_part, max_size=3) | _json,
                                           "metadata": st.fixed_dictionaries({}, optional={
                                               "agentId": st.sampled_from(["default-1", "gen-X", "END"]) | _json,
                                               "senderName": st.text(max_size=20), "interrupted": _json})})
chat_bodies = st.fixed_dictionaries({}, optional={
    "messages": st.lists(_message, max_size=4) | _json,
    "storeState": st.fixed_dictionaries({}, optional={"stage": _json, "scenes": st.lists(_json, max_size=3),
                                                      "currentSceneId": _json, "whiteboardOpen": _json,
                                                      "quizResults": _json}) | _json,
    "config": st.fixed_dictionaries({"agentIds": st.lists(st.sampled_from(
        ["default-1", "default-3", "USER", "end", "gen-Ab", "x" * 50]), max_size=3) | _json}, optional={
        "sessionType": _json, "discussionTopic": _json, "triggerAgentId": _json,
        "agentConfigs": st.lists(st.fixed_dictionaries({"id": st.sampled_from(["gen-Ab", "USER", "a"]) | _json},
                                                       optional={"name": _json, "role": _json, "persona": _json,
                                                                 "allowedActions": _json, "priority": _json}),
                                 max_size=2)}) | _json,
    "directorState": st.fixed_dictionaries({}, optional={"turnCount": _json, "agentResponses": _json,
                                                         "whiteboardLedger": st.lists(_json, max_size=3)}) | _json,
    "userProfile": _json, "apiKey": _json, "baseUrl": _json})
