"""Read the built-in templates of this data package (through importlib.resources)."""


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
    return MappingProxyType(_walk(resources.files("maic_cli.prompts"), ""))
