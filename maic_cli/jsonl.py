"""Read a JSON-lines file that may have been cut off mid-line by a crash.

Used by the transcript reader (store) and the ``replay:`` model (llm), which
cannot import each other.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .errors import InputError


def read_json_lines(path: Path, what: str = "file") -> tuple[list[tuple[int, Any]], bool]:
    """``(line number, value)`` for each line, and whether the last line was cut off (dropped).

    A broken line anywhere but last is an error: that is damage, not a crash.
    """
    try:
        lines = path.read_text(encoding="utf-8").split("\n")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read {what}: {getattr(exc, 'strerror', None) or exc}") from None
    if lines and lines[-1] == "":
        lines.pop()
    values: list[tuple[int, Any]] = []
    for number, line in enumerate(lines, 1):
        try:
            values.append((number, json.loads(line)))
        except json.JSONDecodeError:
            if number == len(lines) and number > 1:
                return values, True
            raise InputError(f"{path}:{number}: not a JSON line (not a maic {what}?)") from None
    return values, False
