"""The director's prompt: who may speak, what happened, and the routing rules.

The text lives in the prompt set (``director/system.j2``, ``director/system_compact.j2``
for small models); this module only turns the request into plain data for it.
The conversation summary names every speaker (the learner apart from the agents,
each agent by name) — the reference's director confused the learner with student
agents when it did not.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from .models import AgentConfig, DirectorState, Message, StoreState, TurnConfig, UserProfile
from .prompt_set import PromptSet, resolve
from .whiteboard import ledger_summary

SUMMARY_MESSAGES = 8
PREVIEW_CHARS = 160


def preview(text: str, limit: int = PREVIEW_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


DEFAULT_NICKNAME = "Learner"  # UserProfile's default: no name was given


def learner_name(profile: UserProfile) -> str:
    """How prompts call the learner: their name, or "the learner" when none was given."""
    name = " ".join(profile.nickname.split())
    return name if name and name != DEFAULT_NICKNAME else "the learner"


def learner_data(profile: UserProfile) -> dict[str, Any]:
    """``name`` fits inside a sentence; ``Name`` opens one ("The learner's message …"); ``memory``: the
    quoted lines of their profile (data, not instructions)."""
    name = learner_name(profile)
    return {"name": name, "Name": name[:1].upper() + name[1:], "named": name != "the learner",
            "bio": profile.bio.strip(), "memory": list(profile.memory)}


_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+")


@functools.lru_cache(maxsize=1024)
def _whole_word(word: str) -> re.Pattern[str]:
    """``word`` as a whole word, compiled once (the class's names come back every director call)."""
    return re.compile(r"\b" + re.escape(word) + r"\b")


_TEACHER_WORDS = re.compile(r"\b(?:teacher|miss|sir|professor|mr|mrs|ms|dr)\b\.?", re.IGNORECASE)


def asks_learner(text: str, speaker_role: str, learner: str, others: list[str]) -> bool:
    """Whether ``text`` ends with a question to the learner (their cue), not to someone else in
    the class: a question that names another agent or the teacher is theirs to answer; one that
    names the learner is the learner's; otherwise a student's question goes to the teacher, and a
    teacher's or assistant's to the learner."""
    text = " ".join(text.split())
    if not text.endswith("?"):
        return False
    last = _SENTENCE_BREAK.split(text)[-1].lower()
    if learner and learner.lower() != "the learner" and _whole_word(learner.lower()).search(last):
        return True
    for name in others:
        words = [w for w in {name.lower(), name.lower().split(" ")[-1]} if len(w) >= 3]
        if any(_whole_word(w).search(last) for w in words):
            return False
    if _TEACHER_WORDS.search(last):
        return False
    return speaker_role != "student"


def conversation_data(messages: list[Message], limit: int = SUMMARY_MESSAGES) -> list[dict[str, Any]]:
    """The last ``limit`` messages, each with who said it (the learner or an agent, by name)."""
    return [{"learner": m.role == "user", "name": m.agent_name or m.agent_id or "", "id": m.agent_id or "",
             "text": preview(m.text), "action_count": len(m.actions), "interrupted": m.interrupted}
            for m in messages[-limit:]]


def discussion_opening(messages: list[Message], state: DirectorState, lesson_opens: bool = False) -> bool:
    """A discussion opens on the first turn of a class where no agent has spoken yet (or, in a
    lesson, on the first turn of its discussion scene's round)."""
    first_turn = state.turn_count == 0 and not state.agent_responses
    return first_turn and (lesson_opens or not any(m.role == "agent" for m in messages))


def discussion_guide(agents: list[AgentConfig], state: DirectorState, messages: list[Message],
                     lesson_opens: bool = False) -> str:
    """In a discussion's opening round, once the initiator has spoken: the teacher, who guides it
    next (``""``: not that moment, or the teacher has spoken or opened it)."""
    agent_messages = sum(1 for m in messages if m.role == "agent")
    opened_this_round = bool(state.agent_responses) and (lesson_opens or agent_messages <= len(state.agent_responses))
    spoken = {r.agent_id for r in state.agent_responses}
    teacher = next((a.id for a in agents if a.role == "teacher"), "")
    return teacher if opened_this_round and teacher not in spoken else ""


def suggested_next(agents: list[AgentConfig], state: DirectorState, messages: list[Message]) -> str:
    """A hint for small models: who would add most now (not yet spoken this round; after a teacher
    or assistant a student, after a student someone else; the least recently heard first)."""
    spoken = {r.agent_id for r in state.agent_responses}
    roles = {a.id: a.role for a in agents}
    last_role = roles.get(state.agent_responses[-1].agent_id) if state.agent_responses else None
    last_heard = {m.agent_id: i for i, m in enumerate(messages) if m.role == "agent" and m.agent_id}

    def rank(agent: AgentConfig) -> tuple[bool, int, int]:
        wanted = agent.role != "student" if last_role == "student" else agent.role == "student"
        return (not wanted if last_role else agent.role != "teacher", last_heard.get(agent.id, -1), -agent.priority)

    candidates = sorted((a for a in agents if a.id not in spoken), key=rank)
    return candidates[0].id if candidates else ""


def director_data(agents: list[AgentConfig], state: DirectorState, messages: list[Message], store: StoreState,
                  config: TurnConfig, profile: UserProfile) -> dict[str, Any]:
    spoken = [{"id": r.agent_id, "name": r.agent_name, "said": preview(r.content_preview, 100),
               "action_count": r.action_count, "whiteboard": [w.action_name for w in r.whiteboard_actions]}
              for r in state.agent_responses]
    discussion = None
    lesson_opens = config.lesson is not None and config.lesson.task == "discuss"
    if config.discussion_topic:
        discussion = {"topic": config.discussion_topic, "prompt": config.discussion_prompt or "",
                      "initiator": config.initiator_id or "",
                      "opening": discussion_opening(messages, state, lesson_opens)}
        discussion["guide"] = discussion_guide(agents, state, messages, lesson_opens)
    last_turn = state.agent_responses[-1] if state.agent_responses else None
    roles = {a.id: a.role for a in agents}
    last_asked = last_turn is not None and asks_learner(
        last_turn.content_preview, roles.get(last_turn.agent_id, ""), learner_name(profile),
        [a.name for a in agents if a.id != last_turn.agent_id])
    return {
        "agents": [{"id": a.id, "name": a.name, "role": a.role, "priority": a.priority}
                   for a in sorted(agents, key=lambda a: -a.priority)],
        "spoken": spoken, "turn": state.turn_count, "max_turns": config.max_turns,
        "conversation": conversation_data(messages), "learner": learner_data(profile),
        "discussion": discussion, "board": ledger_summary(state.whiteboard_ledger, store.whiteboard_open),
        "last_asked": last_asked, "ids": [a.id for a in agents],
        "suggested": (discussion or {}).get("guide") or suggested_next(agents, state, messages),
        "lesson": config.lesson.model_dump() if config.lesson is not None else None,
    }


def build_director_prompt(agents: list[AgentConfig], state: DirectorState, messages: list[Message],
                          store: StoreState, config: TurnConfig, profile: UserProfile, *,
                          prompts: PromptSet | None = None) -> str:
    """The director's system prompt, rendered from the prompt set (``None``: the built-in one)."""
    name = "director/system_compact.j2" if config.compact_prompts else "director/system.j2"
    return resolve(prompts).render(name, director_data(agents, state, messages, store, config, profile))
