"""The director's prompt: who may speak, what happened, and the routing rules.

The conversation summary names every speaker (the learner apart from the
agents, each agent by name) — the reference's director confused the learner
with student agents when it did not.
"""

from __future__ import annotations

from .models import AgentConfig, DirectorState, Message, StoreState, TurnConfig, UserProfile
from .whiteboard import ledger_summary

SUMMARY_MESSAGES = 8
RULES = """# Rules
1. In Q&A, the teacher answers first. In a discussion, the initiator speaks first.
2. Never pick an agent who already spoke this round.
3. Prefer a different role from the last speaker, so the class sounds varied.
4. Do not let anyone re-explain what was already explained, or greet the learner a second time.
5. One or two agents per round is usually enough; then hand the floor back.
6. If the last speaker asked the learner a question, answer "USER" so the learner can reply.
   Do not answer "END" while a question to the learner is still open.
7. Answer "END" when the learner's message has been answered well enough.
"""
# The same rules in fewer words, for small models.
COMPACT_RULES = """# Rules
Teacher first in Q&A; initiator first in a discussion. No one twice per round; vary roles.
No re-explaining, no second greeting. One or two agents, then "USER" (always "USER" if the
learner was asked a question) or "END" when the question is answered.
"""
PREVIEW_CHARS = 160


def preview(text: str, limit: int = PREVIEW_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def conversation_summary(messages: list[Message], learner: str, limit: int = SUMMARY_MESSAGES) -> str:
    lines = []
    for message in messages[-limit:]:
        if message.role == "user":
            who = f"The learner ({learner})"
        else:
            who = f"Agent {message.agent_name or message.agent_id} [{message.agent_id}]"
        text = preview(message.text) or "(no speech)"
        note = f" +{len(message.actions)} actions" if message.actions else ""
        cut = " (interrupted)" if message.interrupted else ""
        lines.append(f"- {who}: {text}{note}{cut}")
    return "\n".join(lines) or "(nothing said yet)"


def build_director_prompt(agents: list[AgentConfig], state: DirectorState, messages: list[Message],
                          store: StoreState, config: TurnConfig, profile: UserProfile) -> str:
    roster = "\n".join(f"- id: {a.id} | name: {a.name} | role: {a.role} | priority: {a.priority}"
                       for a in sorted(agents, key=lambda a: -a.priority))
    if state.agent_responses:
        spoken = "\n".join(
            f"- {r.agent_name} [{r.agent_id}]: \"{preview(r.content_preview, 100)}\" "
            f"({r.action_count} actions"
            + (f"; whiteboard: {', '.join(w.action_name for w in r.whiteboard_actions)}"
               if r.whiteboard_actions else "") + ")"
            for r in state.agent_responses)
    else:
        spoken = "(nobody yet this round)"
    discussion = ""
    if config.discussion_topic:
        discussion = (f"\n# Discussion\nTopic: {config.discussion_topic}\n"
                      + (f"Prompt: {config.discussion_prompt}\n" if config.discussion_prompt else "")
                      + (f"Initiator: {config.initiator_id}\n" if config.initiator_id else ""))
    learner = profile.nickname + (f" — {profile.bio}" if profile.bio else "")
    rules = COMPACT_RULES if config.compact_prompts else RULES
    ids = ", ".join(f'"{a.id}"' for a in agents)
    return f"""You are the director of a small classroom of AI agents and one human learner.
You never speak yourself. You choose who speaks next.

# Agents in this class
{roster}

# Already spoken this round (turn {state.turn_count})
{spoken}

# Recent conversation (the learner is a person, not one of the agents)
{conversation_summary(messages, profile.nickname)}
{discussion}
# Whiteboard
{ledger_summary(state.whiteboard_ledger, store.whiteboard_open)}

# Learner
{learner}

{rules}
# Output
Reply with only one JSON object and nothing else:
{{"next_agent": <one of {ids}, "USER" or "END">}}"""
