"""Exports of a class: Markdown (speakers, speech, actions as notes, the final whiteboard)."""

from __future__ import annotations

from ..engine.classroom import Classroom
from ..engine.models import AgentConfig
from ..engine.whiteboard import describe_element
from .text import clean
from .views import action_badge


def _md_escape(text: str) -> str:
    return clean(text).replace("<", "&lt;").replace(">", "&gt;")


def classroom_to_markdown(classroom: Classroom, agents: dict[str, AgentConfig], *, title: str = "maic class",
                          learner: str = "Learner", meta: dict[str, str] | None = None) -> str:
    lines = [f"# {_md_escape(title)}", ""]
    for key, value in (meta or {}).items():
        lines.append(f"- **{_md_escape(key)}**: {_md_escape(value)}")
    if meta:
        lines.append("")
    for message in classroom.messages:
        if message.role == "user":
            who = f"🧑 {learner} (learner)"
        else:
            agent = agents.get(message.agent_id or "")
            who = f"{clean(agent.avatar) + ' ' if agent else ''}{message.agent_name or message.agent_id}"
        lines.append(f"**{_md_escape(who)}**")
        lines.append("")
        speech: list[str] = []
        for part in message.parts:
            if part.kind == "text":
                speech.append(_md_escape(part.text))
            elif part.action is not None:
                speech.append(f" *[{_md_escape(action_badge(part.action.name, part.action.params))}]* ")
        if message.interrupted:
            speech.append(" *(interrupted)*")
        lines.append("".join(speech).strip() or "*(no speech)*")
        lines.append("")
    store = classroom.store
    lines.append("## Final whiteboard")
    lines.append("")
    if store.whiteboard:
        for element in store.whiteboard:
            lines.append(f"- {_md_escape(describe_element(element, limit=200))}")
            if element.kind == "code":
                lines.append("")
                lines.append(f"  ```{clean(str(element.params.get('language', '')))}")
                lines.extend(f"  {clean(line.text)}" for line in element.lines)
                lines.append("  ```")
    else:
        lines.append("*(empty)*")
    lines.append("")
    return "\n".join(lines)
