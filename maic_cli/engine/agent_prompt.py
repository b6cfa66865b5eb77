"""An agent's prompt and its view of the conversation history.

The system prompt holds only what never changes during a session (persona,
role, output format, actions, the learner); what peers said this round, the
slide and the whiteboard go after the history, at the very end, so the prompt
of an agent's next turn extends its last one and prompt caches (llama.cpp's,
a provider's) are reused.  ``compact=True`` is the variant for small models: the
same sections, fewer words.
"""

from __future__ import annotations

import json

from .actions import describe_actions
from .director_prompt import preview
from .models import AgentConfig, DirectorState, Message, StoreState, UserProfile
from .whiteboard import whiteboard_summary

ROLE_GUIDELINES = {
    "teacher": ("You lead the class. Explain clearly and in order, use the board or slides when "
                "a picture helps, check understanding, and invite the learner to ask or answer."),
    "assistant": ("You support the teacher. Fill gaps, give a second example or a simpler "
                  "wording, and fix misunderstandings. Do not take over the lesson."),
    "student": ("You are a fellow student, not a teacher. React, ask, guess, connect ideas, in "
                "your own voice. Keep it short; never lecture."),
}
LENGTH_TARGETS = {
    "teacher": "about 60–120 words of speech",
    "assistant": "about 40–80 words of speech",
    "student": "about 15–40 words of speech",
}
FORMAT = """Reply with one JSON array and nothing else. Each item is either
  {"type": "text", "content": "<what you say>"}  or
  {"type": "action", "name": "<action name>", "params": {...}}.
Items run in order: speech and actions can interleave. Do not wrap the array in code fences."""
COMPACT_FORMAT = ('Output only a JSON array of {"type":"text","content":"..."} and '
                  '{"type":"action","name":"...","params":{...}} items.')
INTERRUPTED_NOTE = " [This message was interrupted by the learner. Do not continue it.]"


def build_agent_prompt(agent: AgentConfig, actions: list[str], profile: UserProfile, *,
                       language: str | None = None, discussion_topic: str | None = None,
                       compact: bool = False) -> str:
    """The system prompt: only what stays the same for this agent all session long."""
    sections = [f"You are {agent.name} ({agent.role}) in a classroom with one human learner "
                f"and other AI agents.\n\n# Your persona\n{agent.persona.strip()}"]
    if not compact:
        sections.append(f"# Your role\n{ROLE_GUIDELINES[agent.role]}")
    sections.append(f"# Length\nAim for {LENGTH_TARGETS[agent.role]}.")
    if language:
        sections.append(f"# Language\nSpeak only {language}.")
    sections.append("# Output format\n" + (COMPACT_FORMAT if compact else FORMAT))
    if actions:
        sections.append("# Actions you may use (no others)\n" + describe_actions(actions, compact))
    else:
        sections.append("# Actions\nYou have no actions here: speech items only.")
    learner = profile.nickname + (f": {profile.bio}" if profile.bio else "")
    sections.append(f"# The learner\n{learner}")
    if discussion_topic:
        sections.append(f"# Discussion topic\n{discussion_topic}")
    return "\n\n".join(sections)


def build_agent_context(state: DirectorState, store: StoreState, compact: bool = False) -> str:
    """What changes from turn to turn: peers this round, the slide, the whiteboard.

    ``compact`` leaves out an empty whiteboard (small models tend to repeat such lines)."""
    sections = []
    if state.agent_responses:
        peers = "\n".join(f"- {r.agent_name}: {preview(r.content_preview, 200)}"
                          for r in state.agent_responses)
        sections.append("# Already said this round (do not repeat it; add something new)\n" + peers)
    slide = store.slide
    if slide is not None:
        elements = "\n".join(f"- [{e.id}] {e.type}: {preview(e.content, 100)}" for e in slide.elements)
        sections.append(f"# Current slide: {slide.title}\n{elements or '(no elements)'}")
    if store.whiteboard or not compact:
        sections.append("# Whiteboard elements\n" + whiteboard_summary(store))
    return "\n\n".join(sections)


def build_agent_messages(system: str, history: list[dict[str, str]], context: str) -> list[dict[str, str]]:
    """System prompt, then the history, then the changing context at the very end.

    Everything before the context is a stable, growing prefix between this agent's
    turns, so prompt caches (llama.cpp's, a provider's) are reused.
    """
    messages = [{"role": "system", "content": system}, *({**m} for m in history)]
    if context:
        messages[-1]["content"] += "\n\n" + context
    return messages


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


def convert_history(messages: list[Message], agent_id: str) -> list[dict[str, str]]:
    """The chat history as this agent sees it.

    Its own messages are ``assistant`` (its raw reply, or its JSON format), preceded by
    the per-turn context it was given then, so an agent's prompt extends its previous
    one; the learner's and other agents' messages are ``user``, the latter prefixed
    ``[Name]:``; interrupted messages carry a note; empty messages are dropped;
    consecutive ``user`` turns are merged, and the list always ends with a ``user``
    message.
    """
    out: list[dict[str, str]] = []
    for message in messages:
        note = INTERRUPTED_NOTE if message.interrupted else ""
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
        out.append({"role": "user", "content": "(Your turn. Continue the class.)"})
    return out
