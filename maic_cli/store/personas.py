"""Persona files (``agents/<id>.yaml``) and the registry they make.

The registry is built from the built-in class, then ``$MAIC_HOME/agents``, then
any ``--agents-dir`` folders: a file in a later folder with the same id overrides
an earlier one (the registry remembers which files it overrode).  Two files with
one id in the same folder are an error.  A bad file stops loading with
``path:line: field: what is wrong``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ..engine.models import AgentConfig
from ..errors import InputError, MaicError
from ..yamlfile import line_of, load_model, read_yaml, yaml_files
from .paths import builtin_dir, maic_home

DEFAULT_CLASS = ["teacher", "assistant", "class_clown", "curious_student", "note_taker", "deep_thinker"]


@dataclass
class Registry:
    agents: dict[str, AgentConfig] = field(default_factory=dict)
    sources: dict[str, Path] = field(default_factory=dict)
    overridden: dict[str, list[Path]] = field(default_factory=dict)  # files an id's winner replaced

    def get(self, agent_id: str) -> AgentConfig | None:
        return self.agents.get(agent_id)

    def require(self, ids: Iterable[str]) -> list[AgentConfig]:
        missing = [i for i in ids if i not in self.agents]
        if missing:
            raise InputError(f"unknown agent id(s): {', '.join(missing)} "
                             f"(known: {', '.join(sorted(self.agents))})")
        return [self.agents[i] for i in ids]


def load_persona(path: Path) -> AgentConfig:
    return load_model(path, AgentConfig)


def load_registry(extra_dirs: Iterable[Path] = ()) -> Registry:
    registry = Registry()
    folders = [builtin_dir("agents"), maic_home() / "agents", *extra_dirs]
    for index, folder in enumerate(folders):
        if not folder.is_dir():
            if index >= 2:  # a folder the user named must exist
                raise InputError(f"{folder}: no such agents folder")
            continue
        in_folder: dict[str, Path] = {}
        for path in yaml_files(folder):
            agent = load_persona(path)
            _check_unique(agent, path, in_folder)
            if agent.id in registry.sources:
                registry.overridden.setdefault(agent.id, []).append(registry.sources[agent.id])
            registry.agents[agent.id] = agent
            registry.sources[agent.id] = path
    return registry


def _check_unique(agent: AgentConfig, path: Path, in_folder: dict[str, Path]) -> None:
    """Two files in one folder must not silently replace each other."""
    other = in_folder.setdefault(agent.id, path)
    if other != path:
        _, node = read_yaml(path)
        raise InputError(f"{path}:{line_of(node, ('id',))}: id: duplicate of {other}")


def validate_paths(paths: Iterable[Path]) -> list[tuple[Path, str | None]]:
    """Check persona files (folders are expanded); ``None`` means the file is valid."""
    results: list[tuple[Path, str | None]] = []
    for path in paths:
        files = yaml_files(path) if path.is_dir() else [path]
        in_folder: dict[str, Path] = {}
        for file in files:
            try:
                _check_unique(load_persona(file), file, in_folder)
                results.append((file, None))
            except MaicError as exc:
                results.append((file, str(exc)))
    return results
