"""OpenMAIC's agents as a maic lesson's class: personas from a classroom, and who says a line or opens a discussion.

A classroom's ``agents`` (``{name, role, persona, avatar, color, priority, voiceConfig?}``, in OpenMAIC's order)
become the lesson's ``agents:``.  An agent that is one of maic's own personas (the same name and role: a classroom
maic wrote) keeps that persona's id; any other becomes a new persona (:func:`persona_yaml`; ``maic lesson import``
writes them as files beside the lesson) with an id made from its name (``role_N`` when the name has no latin
letters), unlike any persona maic has.  Every text is untrusted: cleaned and cut; an avatar that is a picture's
path (OpenMAIC's are) becomes maic's default, a colour that is not ``#rrggbb`` too.

Who speaks: OpenMAIC's speech has no speaker; a line maic wrote says it in its description (``said by Sam
(curious_student)``).  A discussion names its opener by ``agentId``: OpenMAIC's server names its generated agents
``gen-server-N`` (the N-th agent of the manifest) and its built-in class ``default-1`` … ``default-6`` (the same
six roles, in the same order, as maic's default class); any other id names an agent the zip does not identify.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import yaml
from pydantic import ValidationError

from ..engine.models import AgentConfig, Role
from ..store.personas import DEFAULT_CLASS, Registry
from .common import line, slug, text

MAX_AGENTS = 20  # = Lesson.agents' limit
MAX_PERSONA = 2_000
_SAID = re.compile(r"(?:said|opened) by (.{1,80}?) \(([a-z0-9][a-z0-9_-]{0,39})\)\s*$")
_COLOR = re.compile(r"#[0-9A-Fa-f]{6}")


@dataclass
class ClassroomClass:
    """The lesson's class as read from a classroom: its ids in OpenMAIC's order, the new personas among them."""

    ids: list[str] = field(default_factory=list)  # [] : the classroom names no agents (maic's default class)
    new: list[AgentConfig] = field(default_factory=list)  # personas maic does not have: to be written as files
    names: dict[str, str] = field(default_factory=dict)  # a name as OpenMAIC shows it -> the agent's id
    notes: list[str] = field(default_factory=list)

    @property
    def members(self) -> list[str]:
        return self.ids or list(DEFAULT_CLASS)

    def said_by(self, description: Any) -> str | None:
        """Who ``description`` (``said by Name (id)`` / ``opened by Name (id)``, as maic writes it) names, if one
        of the class: by id, else by name; else nobody."""
        match = _SAID.search(description) if isinstance(description, str) else None
        if match is None:
            return None
        name, agent_id = match.group(1), match.group(2)
        if agent_id in self.members:
            return agent_id
        return self.names.get(name)

    def opener(self, action: dict[str, Any]) -> tuple[str | None, bool]:
        """Who opens a discussion action, and whether its ``agentId`` named an agent the zip does not identify."""
        agent_id, index = action.get("agentId"), action.get("agentIndex")  # (agentIndex: OpenMAIC's earlier field)
        if isinstance(index, int) and not isinstance(index, bool) and 0 <= index < len(self.ids) and not agent_id:
            return self.ids[index], False
        if isinstance(agent_id, str) and agent_id:
            if (server := re.fullmatch(r"gen-server-(\d{1,3})", agent_id)) and self.ids \
                    and int(server.group(1)) < len(self.ids):
                return self.ids[int(server.group(1))], False
            if (builtin := re.fullmatch(r"default-([1-6])", agent_id)) and not self.ids:
                return DEFAULT_CLASS[int(builtin.group(1)) - 1], False
            if agent_id in self.members:  # (a classroom maic-compatible tools wrote with maic's ids)
                return agent_id, False
            by = self.said_by(action.get("description"))
            return by, by is None
        return self.said_by(action.get("description")), False


def _role(raw: dict[str, Any]) -> Role:
    value = raw.get("role")
    return "teacher" if value == "teacher" else "assistant" if value == "assistant" else "student"


def _agent(raw: dict[str, Any], agent_id: str) -> AgentConfig:
    role = _role(raw)
    name = line(raw["name"], 60) if isinstance(raw.get("name"), str) else ""
    persona = text(raw["persona"], MAX_PERSONA) if isinstance(raw.get("persona"), str) else ""
    avatar = raw.get("avatar")
    color = raw.get("color")
    priority = raw.get("priority")
    return AgentConfig(
        id=agent_id, name=name or agent_id, role=role, persona=persona.strip() or f"A {role} of the class.",
        avatar=line(avatar, 8) if isinstance(avatar, str) and 0 < len(avatar.strip()) <= 8 and "/" not in avatar
        and "." not in avatar else "🙂",
        color=color if isinstance(color, str) and _COLOR.fullmatch(color) else "white",
        priority=min(10, max(1, int(priority))) if isinstance(priority, (int, float)) and not isinstance(priority, bool)
        and priority == priority and abs(priority) < 1e6 else 5)


def read_class(raw_agents: Any, registry: Registry) -> ClassroomClass:
    """The class of a manifest's ``agents`` (maic's own personas recognised in ``registry``)."""
    out = ClassroomClass()
    listed = [a for a in raw_agents if isinstance(a, dict)] if isinstance(raw_agents, list) else []
    if not listed:
        return out
    if len(listed) > MAX_AGENTS:
        out.notes.append(f"{len(listed) - MAX_AGENTS:,} agent(s) beyond the {MAX_AGENTS} of a lesson's class: not "
                         "carried")
        listed = listed[:MAX_AGENTS]
    own = {(agent.name, agent.role): agent.id for agent in registry.agents.values()}
    taken = set(registry.agents)
    voiced = 0
    for number, raw in enumerate(listed, 1):
        name = line(raw["name"], 60) if isinstance(raw.get("name"), str) else ""
        role = _role(raw)
        known = own.get((name, role))
        if known is not None and known not in out.ids:
            out.ids.append(known)
        else:
            word = slug(name, "").replace("-", "_")[:36] or f"{role}_{number}"
            agent_id, count = word, 1
            while agent_id in taken:
                count += 1
                agent_id = f"{word}_{count}"
            try:
                out.new.append(_agent(raw, agent_id))
            except ValidationError:  # (what the cleaning above missed: the agent is left to maic's class)
                out.notes.append(f"agent {number} could not be read as a persona: not carried")
                continue
            taken.add(agent_id)
            out.ids.append(agent_id)
        if name:
            out.names.setdefault(name, out.ids[-1])
        voiced += isinstance(raw.get("voiceConfig"), dict)
    shown = ", ".join(line(a["name"], 40) if isinstance(a.get("name"), str) else "?" for a in listed[:8])
    out.notes.insert(0, f"OpenMAIC's class of {len(listed)} ({shown}{', …' if len(listed) > 8 else ''}) is the "
                        f"lesson's class ({len(out.new)} persona(s) maic did not have)")
    if out.ids == list(DEFAULT_CLASS):  # maic's own default class (a lesson that named none): it names none again
        out.ids = []
    if voiced:
        out.notes.append(f"{voiced} agent(s)' OpenMAIC voice (voiceConfig): not carried (maic casts a voice for "
                         "each from its own engine)")
    return out


def persona_yaml(agent: AgentConfig, source: str) -> str:
    """A persona file for ``agent``, saying where it came from (``source``, cleaned, one line)."""
    fields: dict[str, Any] = {"id": agent.id, "name": agent.name, "role": agent.role, "avatar": agent.avatar,
                              "color": agent.color, "priority": agent.priority, "persona": agent.persona}
    header = f"# {line(f'From the OpenMAIC classroom {source} (maic lesson import)', 200)}\n"
    return header + yaml.safe_dump(fields, sort_keys=False, allow_unicode=True, width=100)
