"""Whether a lesson's class can be held: ``maic lesson check`` says what ``maic chat --lesson`` would refuse.

A lesson may name its class (``agents: [...]``, registry ids) and who opens each discussion
(``initiator``).  An id that names no persona, or an initiator outside the class, is reported as
``path:line: field: problem`` — the line of the field in the file — before anyone plays it.

A script step (or a ``close:`` step, or an expected question's answer) said ``by:`` someone outside
the class is no error (the teacher says that line instead) but a warning, one line each, from :func:`speaker_warnings`.
"""

from __future__ import annotations

from pathlib import Path

from ..engine.models import AgentConfig
from ..lessons.lesson import DiscussionScene, Lesson, SlideScene
from ..untrusted import one_line
from ..yamlfile import line_of, read_yaml
from .lessons import MAX_LESSON_BYTES
from .personas import DEFAULT_CLASS, Registry, load_registry


def class_agents(lesson: Lesson, registry: Registry | None = None) -> list[AgentConfig]:
    """The personas who hold ``lesson``: its ``agents:`` that are known, else maic's default class."""
    registry = registry if registry is not None else load_registry()
    ids = list(lesson.agents or DEFAULT_CLASS)
    return [agent for i in ids if (agent := registry.get(i)) is not None]


def class_problems(lesson: Lesson, path: Path, registry: Registry) -> list[str]:
    """Every problem with the lesson's class and its discussions' initiators, ``path:line: field: problem``."""
    _, node = read_yaml(path, MAX_LESSON_BYTES)
    problems: list[str] = []
    ids = list(lesson.agents or [i for i in DEFAULT_CLASS if i in registry.agents])
    for index, agent_id in enumerate(lesson.agents or []):
        if registry.get(agent_id) is None:
            problems.append(f"{path}:{line_of(node, ('agents', index))}: agents.{index}: unknown agent id "
                            f"{one_line(agent_id)[:80]!r} (known: {', '.join(sorted(registry.agents))})")
    for index, scene in enumerate(lesson.scenes):
        if isinstance(scene, DiscussionScene) and scene.initiator is not None and scene.initiator not in ids:
            problems.append(f"{path}:{line_of(node, ('scenes', index, 'initiator'))}: scenes.{index}.initiator: "
                            f"{one_line(scene.initiator)[:80]!r} is not in the lesson's class ({', '.join(ids)})")
    return problems


def speaker_warnings(lesson: Lesson, path: Path, registry: Registry) -> list[str]:
    """A script step said ``by:`` an agent outside the lesson's class (the teacher says it instead):
    ``path:line: scenes.N.script.M.by (scene 'id', step M+1): …``, one line each."""
    ids = list(lesson.agents or [i for i in DEFAULT_CLASS if i in registry.agents])
    found = [(index, scene.id, field, number, step.by) for index, scene in enumerate(lesson.scenes)
             if isinstance(scene, (SlideScene, DiscussionScene))
             for field, steps in (("script", scene.script), ("close", getattr(scene, "close", [])),
                                  ("faq", scene.faq))
             for number, step in enumerate(steps) if step.by is not None and step.by not in ids]
    if not found:
        return []
    _, node = read_yaml(path, MAX_LESSON_BYTES)
    return [f"{path}:{line_of(node, ('scenes', index, field, number, 'by'))}: scenes.{index}.{field}.{number}.by "
            f"(scene {one_line(scene_id)!r}, {'question' if field == 'faq' else 'step'} {number + 1}): "
            f"{one_line(by)[:80]!r} is not in the lesson's class ({', '.join(ids)}): the teacher says "
            f"{'this answer' if field == 'faq' else 'this line'}" for index, scene_id, field, number, by in found]
