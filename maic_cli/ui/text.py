"""Untrusted text: strip terminal control sequences before anything is printed.

Model output and persona text are data.  Views build :class:`rich.text.Text`
objects from them (never markup strings), so ``[bold red]`` shows literally;
:func:`clean` removes escape sequences (CSI, OSC, DCS …) and other C0/C1
controls except newline and tab, so a reply cannot move the cursor, retitle
the window or hide text.
"""

from __future__ import annotations

import re
from functools import lru_cache

from rich.color import Color, ColorParseError

_ESCAPES = re.compile(
    r"\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC … BEL/ST
    r"|\x1b[PX^_][^\x1b]*(?:\x1b\\)?"  # DCS, SOS, PM, APC … ST
    r"|\x1b\[[0-?]*[ -/]*[@-~]?"  # CSI
    r"|\x1b[@-Z\\-_]?"  # other two-character escapes (and a lone ESC)
    r"|\x9b[0-?]*[ -/]*[@-~]?"  # 8-bit CSI
)
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def clean(text: str) -> str:
    """``text`` without terminal control sequences; ``\\r\\n`` becomes ``\\n``."""
    text = text.replace("\r\n", "\n")
    return _CONTROLS.sub("", _ESCAPES.sub("", text))


class StreamCleaner:
    """:func:`clean` for text that arrives in pieces: an escape sequence split across
    pieces is held back until it is complete, then removed whole."""

    HOLD_LIMIT = 256

    def __init__(self) -> None:
        self._pending = ""

    def feed(self, text: str) -> str:
        data = self._pending + text
        self._pending = ""
        start = max(data.rfind("\x1b"), data.rfind("\x9b"))
        if start != -1 and len(data) - start <= self.HOLD_LIMIT:
            match = _ESCAPES.match(data, start)
            if match is None or match.end() == len(data):
                data, self._pending = data[:start], data[start:]
        return clean(data)

    def flush(self) -> str:
        pending, self._pending = self._pending, ""
        return clean(pending)


@lru_cache(maxsize=256)
def color_or_default(color: str, default: str = "white") -> str:
    """A persona's colour if Rich understands it, else ``default`` (a typo must not crash a view)."""
    try:
        Color.parse(color)
    except ColorParseError:
        return default
    return color
