"""What a prompt template may be given: plain data (str, int, float, bool, None, and dicts with string keys,
lists and tuples of them), never a model object or a callable a template could poke at; checked fast for the
usual case (:func:`plain_at_a_glance`), else with the path of what is wrong (:func:`check_plain`).  And the key a
built-in render is remembered by (:func:`render_key`, engine/prompt_set.py)."""

from __future__ import annotations

import marshal
from collections.abc import Mapping
from typing import Any

PLAIN_TYPES = (str, int, float, bool, type(None))
RENDER_CACHE_KEY_BYTES = 65_536  # data whose marshalled form is longer is rendered, not remembered
_EXACTLY_PLAIN = frozenset(PLAIN_TYPES)


def render_key(name: str, data: Mapping[str, Any]) -> tuple[str, bytes] | None:
    """What a built-in render is remembered by: the template and its data marshalled (``None``: not a dict,
    data ``marshal`` refuses — any subclass, anything not built of its types — or past the key's size)."""
    if type(data) is not dict:
        return None
    try:
        key = marshal.dumps(data, 0)  # format 0: by value alone (later formats mark objects the data shares)
    except ValueError:  # an object of another type (or nested past marshal's depth)
        return None
    return (name, key) if len(key) <= RENDER_CACHE_KEY_BYTES else None


def plain_at_a_glance(value: Any) -> bool:
    """True when ``value`` is built of exactly the plain types (the usual case, checked fast); False leaves
    the verdict to :func:`check_plain`, which also accepts their subclasses and names what is wrong."""
    kind = type(value)
    if kind in _EXACTLY_PLAIN:
        return True
    if kind is dict:
        for key, item in value.items():
            if type(key) is not str or (type(item) not in _EXACTLY_PLAIN and not plain_at_a_glance(item)):
                return False
        return True
    if kind is list or kind is tuple:
        for item in value:
            if type(item) not in _EXACTLY_PLAIN and not plain_at_a_glance(item):
                return False
        return True
    return False


def check_plain(value: Any, where: str) -> None:
    """Templates get plain data only: never a model object or a callable they could poke at."""
    if isinstance(value, PLAIN_TYPES):
        return
    if isinstance(value, Mapping):
        for key, item in value.items():
            if not isinstance(key, str):
                raise TypeError(f"{where}: template data keys must be strings, not {type(key).__name__}")
            check_plain(item, f"{where}.{key}")
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            check_plain(item, f"{where}[{index}]")
    else:
        raise TypeError(f"{where}: templates get plain data only, not {type(value).__name__}")
