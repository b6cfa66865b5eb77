"""The built-in prompt set: Jinja2 templates (``*.j2``) and snippets (``*.md``) shipped as package data.

Every text the class sends a model lives here: the director's prompt, an agent's
system prompt and per-turn context (full and compact), the role and whiteboard
guidelines, and shared snippets (speech rules, output format, examples).  A user
overrides any of them by the same relative path (``$MAIC_HOME/prompts/`` or
``--prompts DIR``, see ``store/prompts.py``); ``engine/prompt_set.py`` renders them in
Jinja2's sandbox.  This module only reads its own files, through importlib.resources,
so it works from a wheel, a zip or a source checkout alike.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from importlib.resources.abc import Traversable
from types import MappingProxyType

TEMPLATE_SUFFIXES = (".j2", ".md")


def _walk(folder: Traversable, prefix: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for entry in folder.iterdir():
        if entry.is_dir():
            if not entry.name.startswith(("_", ".")):
                found.update(_walk(entry, f"{prefix}{entry.name}/"))
        elif entry.name.endswith(TEMPLATE_SUFFIXES):
            found[prefix + entry.name] = entry.read_text(encoding="utf-8")
    return found


@lru_cache(maxsize=1)
def builtin_sources() -> MappingProxyType[str, str]:
    """Relative path (``agent/system.j2``) → template source, for every built-in template."""
    return MappingProxyType(_walk(resources.files(__name__), ""))
