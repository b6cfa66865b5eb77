"""Read a JSON-lines file that may have been cut off mid-line by a crash.

Used by the transcript reader (store) and the ``replay:`` model (llm), which
cannot import each other.  The file may have been crafted: only a regular file
is read, one line at a time, and a line longer than :data:`MAX_LINE_BYTES` is
refused before it is held in memory whole.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .errors import InputError
from .files import describe_size, open_regular

MAX_LINE_BYTES = 64 * 2**20  # a transcript line holds one call's prompt and reply


def read_json_lines(path: Path, what: str = "file") -> tuple[list[tuple[int, Any]], bool]:
    """``(line number, value)`` for each line, and whether the last line was cut off (dropped).

    A broken line anywhere but last is an error: that is damage, not a crash.
    """
    values: list[tuple[int, Any]] = []
    with open_regular(path, what) as handle:
        try:
            number = 0
            while line := handle.readline(MAX_LINE_BYTES + 1):
                number += 1
                if len(line) > MAX_LINE_BYTES:
                    raise InputError(f"{path}:{number}: a line longer than {describe_size(MAX_LINE_BYTES)} "
                                     f"(not a maic {what}?)")
                try:
                    values.append((number, json.loads(line.decode("utf-8"))))
                except (ValueError, RecursionError):  # not JSON, not UTF-8, nested too deeply
                    if number > 1 and not handle.read(1):
                        return values, True
                    raise InputError(f"{path}:{number}: not a JSON line (not a maic {what}?)") from None
        except OSError as exc:
            raise InputError(f"{path}: cannot read {what}: {exc.strerror or exc}") from None
    return values, False
