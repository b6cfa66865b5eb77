"""Untrusted text in views: cleaning lives in :mod:`maic_cli.untrusted` (stores use it too);
this module re-exports it for the views and adds what only Rich needs.

Model output and persona text are data.  Views build :class:`rich.text.Text`
objects from them (never markup strings), so ``[bold red]`` shows literally, and
:func:`clean` them first, so a reply cannot move the cursor, retitle the window
or hide text.
"""

from __future__ import annotations

from functools import lru_cache

from rich.color import Color, ColorParseError


@lru_cache(maxsize=256)
def color_or_default(color: str, default: str = "white") -> str:
    """A persona's colour if Rich understands it, else ``default`` (a typo must not crash a view)."""
    try:
        Color.parse(color)
    except ColorParseError:
        return default
    return color
