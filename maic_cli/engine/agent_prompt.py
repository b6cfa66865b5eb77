"""An agent's prompt and its view of the conversation history.

The system prompt holds only what never changes during a session (persona,
role, speech rules, output format, actions, the learner, the discussion topic);
what peers said this round, the discussion's stage, the slide and the whiteboard
go after the history, at the very end, so the prompt of an agent's next turn
extends its last one and prompt caches (llama.cpp's, a provider's) are reused.
``compact=True`` is the variant for small models: fewer words, one example.

The text lives in the prompt set (``agent/*.j2`` and the snippets they include);
this module turns the engine's models into the plain data a template gets.
"""

from __future__ import annotations

import json
from typing import Any

from .actions import CATALOGUE
from .director_prompt import learner_data, preview
from .models import AgentConfig, DirectorState, Message, StoreState, TurnConfig, TurnRequest, UserProfile
from .prompt_set import PromptSet, resolve
from .schemas import COMPACT_ACTION_PARAMS
from .whiteboard import describe_element

PEER_PREVIEW_CHARS = 200
ELEMENT_PREVIEW_CHARS = 100  # a slide element in the context of a question or discussion
LECTURE_ELEMENT_CHARS = 1500  # a live lecture explains the elements: each is shown whole (bounded)
ERASING = ("wb_clear", "wb_delete")


def agent_data(agent: AgentConfig) -> dict[str, str]:
    return {"id": agent.id, "name": agent.name, "role": agent.role, "persona": agent.persona}


def _compact_params(name: str) -> str:
    return json.dumps({key: "..." for key in COMPACT_ACTION_PARAMS.get(name, {})})


def actions_data(actions: list[str], compact: bool) -> list[dict[str, str]]:
    return [{"name": n, "summary": CATALOGUE[n].summary,
             "params": _compact_params(n) if compact else CATALOGUE[n].params}
            for n in actions if n in CATALOGUE]


def build_agent_prompt(agent: AgentConfig, actions: list[str], profile: UserProfile, *,
                       language: str | None = None, discussion_topic: str | None = None,
                       discussion_prompt: str | None = None, compact: bool = False,
                       prompts: PromptSet | None = None) -> str:
    """The system prompt: only what stays the same for this agent all session long."""
    discussion = {"topic": discussion_topic, "prompt": discussion_prompt or ""} if discussion_topic else None
    data = {
        "agent": agent_data(agent), "learner": learner_data(profile),
        "actions": actions_data(actions, compact), "action_names": list(actions),
        "has_slide_actions": any(CATALOGUE[n].scope == "slide" for n in actions if n in CATALOGUE),
        "has_whiteboard_actions": any(n.startswith("wb_") for n in actions),
        "can_erase": any(n in ERASING for n in actions),
        "language": language or "", "discussion": discussion,
    }
    return resolve(prompts).render("agent/system_compact.j2" if compact else "agent/system.j2", data)


def _names(state: DirectorState, messages: list[Message], agent: AgentConfig | None,
           config: TurnConfig | None) -> dict[str, str]:
    """Agent id → name, from everything the request knows (for "drawn by …")."""
    names = {a.id: a.name for a in (config.agent_configs.values() if config else [])}
    names.update({m.agent_id: m.agent_name for m in messages if m.agent_id and m.agent_name})
    names.update({r.agent_id: r.agent_name for r in state.whiteboard_ledger})
    names.update({r.agent_id: r.agent_name for r in state.agent_responses})
    if agent is not None:
        names[agent.id] = agent.name
    return names


def board_data(store: StoreState, names: dict[str, str], agent_id: str | None) -> dict[str, Any]:
    return {"open": store.whiteboard_open,
            "elements": [{"id": e.id, "summary": describe_element(e),
                          "author": names.get(e.agent_id or "", e.agent_id or ""),
                          "mine": agent_id is not None and e.agent_id == agent_id}
                         for e in store.whiteboard]}


def discussion_stage(peers: list[dict[str, str]], messages: list[Message] | None, lesson_opens: bool = False) -> str:
    """``open`` (nobody has spoken in the class yet, or a lesson's discussion scene opens), ``join``
    (someone spoke this round) or ``continue``."""
    if peers:
        return "join"
    if lesson_opens or messages is None or not any(m.role == "agent" for m in messages):
        return "open"
    return "continue"


def lesson_data(config: TurnConfig | None) -> dict[str, Any] | None:
    """The lesson the class follows (request-scoped, set by the lesson player), as template data."""
    return config.lesson.model_dump() if config is not None and config.lesson is not None else None


def build_agent_context(state: DirectorState, store: StoreState, compact: bool = False, *,
                        agent: AgentConfig | None = None, config: TurnConfig | None = None,
                        messages: list[Message] | None = None, profile: UserProfile | None = None,
                        prompts: PromptSet | None = None) -> str:
    """What changes from turn to turn: the discussion's stage, peers this round, the lesson, the slide, the board.

    ``agent`` leaves the agent's own turns out of "already said" and marks what it drew;
    ``config`` (its discussion topic and prompt) and ``messages`` decide whether the agent
    opens the discussion, joins it this round, or continues it in a later round.
    """
    peers = [{"name": r.agent_name, "said": preview(r.content_preview, PEER_PREVIEW_CHARS)}
             for r in state.agent_responses if agent is None or r.agent_id != agent.id]
    discussion = None
    if config is not None and config.discussion_topic:
        lesson_opens = config.lesson is not None and config.lesson.task == "discuss"
        discussion = {"topic": config.discussion_topic, "prompt": config.discussion_prompt or "",
                      "stage": discussion_stage(peers, messages, lesson_opens)}
    slide = store.slide
    lecturing = config is not None and config.lesson is not None and config.lesson.task == "lecture"
    element_chars = LECTURE_ELEMENT_CHARS if lecturing else ELEMENT_PREVIEW_CHARS  # a lecture sees each whole
    data = {
        "agent": agent_data(agent) if agent else {"id": "", "name": "", "role": "", "persona": ""},
        "learner": learner_data(profile or UserProfile()), "peers": peers, "discussion": discussion,
        "slide": None if slide is None else {
            "title": slide.title,
            "elements": [{"id": e.id, "type": e.type, "content": preview(e.plain_text(), element_chars)}
                         for e in slide.elements]},
        "board": board_data(store, _names(state, messages or [], agent, config), agent.id if agent else None),
        "lesson": lesson_data(config),
    }
    return resolve(prompts).render("agent/context_compact.j2" if compact else "agent/context.j2", data)


def build_agent_messages(system: str, history: list[dict[str, str]], context: str) -> list[dict[str, str]]:
    """System prompt, then the history, then the changing context at the very end.

    Everything before the context is a stable, growing prefix between this agent's
    turns, so prompt caches (llama.cpp's, a provider's) are reused.
    """
    messages = [{"role": "system", "content": system}, *({**m} for m in history)]
    if context:
        messages[-1]["content"] += "\n\n" + context
    return messages


def build_agent_call(request: TurnRequest, agent: AgentConfig, actions: list[str], state: DirectorState, *,
                     prompts: PromptSet | None = None) -> tuple[list[dict[str, str]], str]:
    """Everything an agent's call sends, from the turn request: ``(messages, context)``.

    The one place that passes the whole request to the builders above (the discussion
    prompt and stage, the learner, the agent's own id for "already said" and "drawn by");
    the context is returned too, since the agent's message keeps it for its next turn.
    """
    config = request.config
    system = build_agent_prompt(agent, actions, request.user_profile, language=config.language,
                                discussion_topic=config.discussion_topic, discussion_prompt=config.discussion_prompt,
                                compact=config.compact_prompts, prompts=prompts)
    context = build_agent_context(state, request.store_state, config.compact_prompts, agent=agent, config=config,
                                  messages=request.messages, profile=request.user_profile, prompts=prompts)
    history = convert_history(request.messages, agent.id, prompts=prompts, current_round_only=config.compact_prompts)
    return build_agent_messages(system, history, context), context


def message_as_json(message: Message) -> str:
    """An agent's own earlier message, in the output format it is asked to use."""
    items: list[dict[str, object]] = []
    for part in message.parts:
        if part.kind == "text" and part.text:
            items.append({"type": "text", "content": part.text})
        elif part.action is not None:
            items.append({"type": "action", "name": part.action.name, "params": part.action.params})
    return json.dumps(items, ensure_ascii=False)


def _action_note(message: Message) -> str:
    names = [a.name for a in message.actions]
    return f" (actions: {', '.join(names)})" if names else ""


def convert_history(messages: list[Message], agent_id: str, *, prompts: PromptSet | None = None,
                    current_round_only: bool = False) -> list[dict[str, str]]:
    """The chat history as this agent sees it.

    Its own messages are ``assistant`` (its raw reply, or its JSON format), preceded by
    the per-turn context it was given then, so an agent's prompt extends its previous
    one; the learner's and other agents' messages are ``user``, the latter prefixed
    ``[Name]:``; interrupted messages carry a note; empty messages are dropped;
    consecutive ``user`` turns are merged, and the list always ends with a ``user``
    message.

    ``current_round_only`` (small models): only the messages since the learner's last
    one.  A 135M model copied an earlier answer (or an earlier question) word for word
    when it could see it; it gains little from the rest of the conversation.
    """
    prompt_set = resolve(prompts)
    if current_round_only:
        start = max((i for i, m in enumerate(messages) if m.role == "user"), default=0)
        messages = messages[start:]
    interrupted = " " + prompt_set.render("snippets/interrupted_note.md", {})
    out: list[dict[str, str]] = []
    for message in messages:
        note = interrupted if message.interrupted else ""
        if message.role == "agent" and message.agent_id == agent_id:
            if not message.parts:
                continue
            if message.context:  # exactly what this agent saw then: its prompt's prefix is stable
                if out and out[-1]["role"] == "user":
                    out[-1]["content"] += "\n\n" + message.context
                else:
                    out.append({"role": "user", "content": message.context})
            role, content = "assistant", (message.raw_reply or message_as_json(message)) + note
        else:
            text = message.text.strip()
            if not text and not message.actions:
                continue
            prefix = f"[{message.agent_name or message.agent_id}]: " if message.role == "agent" else ""
            role, content = "user", prefix + text + _action_note(message) + note
        if out and out[-1]["role"] == role == "user":
            out[-1]["content"] += "\n\n" + content
        else:
            out.append({"role": role, "content": content})
    if not out or out[-1]["role"] != "user":
        out.append({"role": "user", "content": prompt_set.render("snippets/your_turn.md", {})})
    return out
