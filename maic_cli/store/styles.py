"""Teaching styles: built-in prompt sets by name (``--style NAME`` in ``maic chat`` and ``maic run``).

A style is a folder of template overrides shipped in ``styles/`` (like ``agents/``):
``direct`` (direct explanation), ``socratic`` (Socratic questioning) and
``worked_example`` (a worked example, then practice).  ``--style NAME`` is the same
as ``--prompts`` with that folder: its label in reports is its name, and a batch
compares several styles like several prompt sets.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import InputError
from .paths import builtin_dir


def builtin_styles() -> dict[str, Path]:
    folder = builtin_dir("styles")
    if not folder.is_dir():
        return {}
    return {path.name: path for path in sorted(folder.iterdir()) if path.is_dir() and not path.name.startswith(".")}


def style_folder(name: str) -> Path:
    """The prompt-set folder of a built-in style; an unknown name is refused with the known ones."""
    styles = builtin_styles()
    if name not in styles:
        raise InputError(f"--style {name}: no such teaching style (known: {', '.join(styles) or 'none'})")
    return styles[name]
