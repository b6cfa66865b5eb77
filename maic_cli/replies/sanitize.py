"""Making model (and file) data safe to keep: broken surrogates and nesting depth.

A reply cut inside an emoji leaves a lone surrogate (``"\\ud83d"``); such a
string cannot be encoded as UTF-8, so it would crash the terminal, the
transcript and the session file.  :func:`replace_surrogates` turns every
surrogate code point into U+FFFD (one for one, so the result does not depend on
how the reply was chunked).  :func:`clean_tree` does that for every string of a
JSON-like value and refuses (or cuts) what is nested deeper than a limit (recursive code
downstream — serializers, ``repr`` — must never meet a thousand levels), and
:func:`json_extent` measures JSON text nesting without parsing it.
"""

from __future__ import annotations

import re
from typing import Any

REPLACEMENT = "\ufffd"
MAX_DEPTH = 20  # containers inside an action's params (a table is 2, a chart 3)
_SURROGATE = re.compile(r"[\ud800-\udfff]")
_JSON_STOP = re.compile(r'[\[\]{}"\\]')


def replace_surrogates(text: str) -> str:
    """``text`` with every surrogate code point replaced by U+FFFD."""
    if text.isascii() or _SURROGATE.search(text) is None:
        return text
    return _SURROGATE.sub(REPLACEMENT, text)


class TooDeep(ValueError):
    """A value nested deeper than allowed."""


def clean_tree(value: Any, max_depth: int = MAX_DEPTH, *, cut: bool = False) -> Any:
    """A copy of a JSON-like value with surrogates replaced in its strings and keys.

    Past ``max_depth`` containers it raises :class:`TooDeep`, or with ``cut`` puts
    ``None`` there.  Anything else (a model instance already validated) is kept as it is."""
    return _clean(value, max_depth, cut)


def _clean(value: Any, depth: int, cut: bool) -> Any:
    if isinstance(value, str):
        return replace_surrogates(value)
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, dict | list | tuple):
        if depth <= 0:
            if cut:
                return None
            raise TooDeep("nested too deeply")
        if isinstance(value, dict):
            return {replace_surrogates(str(k)): _clean(v, depth - 1, cut) for k, v in value.items()}
        return [_clean(v, depth - 1, cut) for v in value]
    return value


def clean_object(value: Any, max_depth: int = MAX_DEPTH) -> dict[str, Any]:
    """:func:`clean_tree` for a value that should be an object: ``{}`` if it is not one,
    or if it is nested too deeply."""
    if not isinstance(value, dict):
        return {}
    try:
        cleaned: dict[str, Any] = clean_tree(value, max_depth)
    except TooDeep:
        return {}
    return cleaned


def json_extent(text: str, start: int) -> tuple[int, int]:
    """Where the JSON value that opens at ``text[start]`` ends, and how deep it nests.

    One forward scan, no recursion, no parsing: strings (with their escapes) are
    skipped; an unclosed value ends with the text."""
    depth, deepest, in_string, escaped_until = 0, 0, False, -1
    for match in _JSON_STOP.finditer(text, start):
        at = match.start()
        if at < escaped_until:  # the character after a backslash in a string
            continue
        char = match.group()
        if in_string:
            if char == "\\":
                escaped_until = at + 2
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
            if depth <= 0:
                return at + 1, deepest
    return len(text), deepest
