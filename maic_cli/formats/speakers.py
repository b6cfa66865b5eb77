"""Who may speak a line of a lesson's script: the class's agents, by id, name or first name.

``maic lesson import`` reads a notes line ``Name: what they say`` as said by that agent when
``Name`` is one of the class (the lesson's ``agents:``, else the default class of
``agents/*.yaml``); ``maic lesson export`` writes such a step back with the agent's name (see
:mod:`maic_cli.authoring.notes_script`).  A persona folder that cannot be read leaves the ids.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ..authoring.notes_script import speaker_label, speaker_names
from ..errors import MaicError
from ..store.personas import DEFAULT_CLASS, load_registry


@dataclass(frozen=True)
class Speakers:
    names: dict[str, str] = field(default_factory=dict)  # lower-case name → agent id
    labels: dict[str, str] = field(default_factory=dict)  # agent id → how its lines are written


def class_speakers(agent_ids: Sequence[str] | None = None) -> Speakers:
    """The speakers of a class: ``agent_ids`` (a lesson's ``agents:``) or the default class."""
    ids = list(agent_ids or DEFAULT_CLASS)
    try:
        registry = load_registry()
    except MaicError:  # a broken persona file is not the deck's problem: ids still work
        agents = [(agent_id, "") for agent_id in ids]
    else:
        agents = [(agent_id, registry.agents[agent_id].name if agent_id in registry.agents else "")
                  for agent_id in ids]
    names = speaker_names(agents)
    return Speakers(names, {agent_id: speaker_label(agent_id, agents, names) for agent_id, _ in agents})
