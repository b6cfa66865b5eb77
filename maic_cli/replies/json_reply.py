"""The one way a JSON object is read out of a model's reply (a director's decision, a quiz grade, a
judge's verdict, a step of ``maic lesson new``).

A reply may wrap its object in prose, code fences or a ``<think>`` block that holds a brace of its
own, and a small model may leave it broken.  :func:`first_json_object` tries the braces in order
(at most ``candidates`` of them, so a reply full of ``{`` stays linear), skips unparsed any object
nested deeper than the caller's replies can be, and returns the first object the caller accepts;
failing that, it hands a bounded piece from the first brace to json-repair.  Its strings are made
encodable here, where model text enters: a ``"\ud800"`` escape (a lone surrogate) becomes U+FFFD, so no
verdict, grade or lesson step can later fail to be saved.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import json_repair

from .sanitize import clean_tree, json_extent

_DECODER = json.JSONDecoder(strict=False)


def first_json_object(text: str, *, accept: Callable[[dict[str, Any]], bool] = lambda value: True,
                      max_depth: int, max_repair: int, candidates: int = 64) -> tuple[dict[str, Any] | None, bool]:
    """The first object in ``text`` that ``accept`` takes, and whether it had to be repaired."""
    pos = 0
    for _ in range(candidates):
        start = text.find("{", pos)
        if start == -1:
            break
        end, depth = json_extent(text, start)
        if depth > max_depth:  # deeper than a reply can be: junk, skipped whole (and no recursion)
            pos = end
            continue
        pos = start + 1
        try:
            value, _ = _DECODER.raw_decode(text, start)
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict):
            value = clean_tree(value, max_depth + 1, cut=True)
            if accept(value):
                return value, False
    start = text.find("{")
    if start == -1 or json_extent(text[:start + max_repair], start)[1] > max_depth:
        return None, False
    try:
        repaired = json_repair.loads(text[start:start + max_repair])
    except Exception:  # noqa: BLE001 - a reply json-repair cannot mend is simply unusable
        return None, False
    if not isinstance(repaired, dict) or not repaired:
        return None, False
    repaired = clean_tree(repaired, max_depth + 1, cut=True)
    return (repaired, True) if accept(repaired) else (None, False)
