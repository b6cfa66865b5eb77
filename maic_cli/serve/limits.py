"""What a request to ``maic serve`` may be: the bounds every route reads its body with.

A body is refused with 413 before it is read when its ``Content-Length`` says it is larger than
:data:`MAX_BODY_BYTES`, and while it streams in when it has no length (chunked) and passes the
limit.  The JSON in it is read with the bounds a session file is read with (store/session.py:
a size limit, deep nesting refused rather than recursed into, ``ValueError`` for absurd numbers; ``NaN``,
``Infinity`` and numbers too large for a float refused, a lone surrogate made U+FFFD) and
with explicit ones on top, checked before any model is validated: nesting depth, the length of any
string, the items in any list or object and the values in the whole document.  A body that breaks
one is a 4xx with one line saying which, never a traceback.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

MAX_BODY_BYTES = 4 * 2**20  # 4 MB: a long class with its lesson context, far below a 30 MB attack
MAX_BODIES_HELD = 32 * 2**20  # bytes of bodies served at once (a 4 MB body in flight weighs 26 MB, measured)
MAX_DEPTH = 48  # a TurnRequest nests about 10 deep (messages → parts → actions → params)
MAX_STRING = 256 * 2**10  # characters in one string (a slide's text, a long message)
MAX_ITEMS = 20_000  # items in one list or object (messages, board elements)
MAX_VALUES = 500_000  # values in the whole document
BODY_READ_TIMEOUT = 15.0  # seconds to receive a whole body once its headers arrived
LINGER = 1.0  # seconds the rest of a refused body is read (and dropped) so its sender can read the refusal
IDLE_TIMEOUT = 15.0  # seconds a connection may take to send a request's headers, or stay idle between requests
_ESCAPED_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")  # where json.loads may make a lone surrogate
MAX_CONCURRENT_TURNS = 256  # turns in flight at once per instance; past it a turn is 503 (ask another instance)


class BodyError(ValueError):
    """A body that is not what the route reads; ``status`` is the HTTP answer (400, 413, 422)."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


def read_json(raw: bytes) -> Any:
    """``raw`` as JSON within the bounds above (:class:`BodyError` otherwise)."""
    if len(raw) > MAX_BODY_BYTES:
        raise BodyError(f"body larger than {MAX_BODY_BYTES} bytes", 413)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise BodyError("body is not UTF-8 text") from None
    try:
        data = json.loads(text, parse_constant=_not_a_number, parse_float=_finite)
    except json.JSONDecodeError as exc:
        raise BodyError(f"body is not JSON (line {exc.lineno}: {exc.msg})") from None
    except RecursionError:
        raise BodyError("body nested too deeply") from None
    except BodyError:
        raise
    except ValueError as exc:  # an integer of thousands of digits
        raise BodyError(f"body is not valid JSON ({str(exc)[:120]})") from None
    check_bounds(data)
    return _mend(data) if _ESCAPED_SURROGATE.search(text) else data


def _not_a_number(name: str) -> Any:
    raise BodyError(f"{name} is not a JSON number (a browser could not read it back)")


def _finite(number: str) -> float:
    value = float(number)
    if not math.isfinite(value):
        raise BodyError(f"{number[:40]} is too large a number")
    return value


def _mend(value: Any) -> Any:
    """``value`` with every lone surrogate (``\\ud800`` is JSON, not text; a browser cutting an emoji in half
    sends one) made U+FFFD, so that whatever is echoed back can be written.  Depth is bounded already."""
    if isinstance(value, str):
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if isinstance(value, list):
        return [_mend(item) for item in value]
    if isinstance(value, dict):
        return {_mend(key): _mend(item) for key, item in value.items()}
    return value


def check_bounds(data: Any) -> None:
    """Depth, string lengths and counts of already parsed JSON, walked without recursion (only containers are
    stacked; where a bound broke is spelled out only then)."""
    if not isinstance(data, dict | list):
        if isinstance(data, str) and len(data) > MAX_STRING:
            raise BodyError(f"$: a string longer than {MAX_STRING} characters", 413)
        return
    stack: list[tuple[Any, int, tuple[Any, ...]]] = [(data, 1, ())]
    values = 0
    while stack:
        value, depth, trail = stack.pop()
        if depth > MAX_DEPTH:
            raise BodyError(f"{_where(trail)}: nested deeper than {MAX_DEPTH}")
        items = value.items() if isinstance(value, dict) else enumerate(value)
        if len(value) > MAX_ITEMS:
            raise BodyError(f"{_where(trail)}: more than {MAX_ITEMS} items", 413)
        values += len(value)
        if values > MAX_VALUES:
            raise BodyError(f"body has more than {MAX_VALUES} values", 413)
        for key, item in items:
            if isinstance(key, str) and len(key) > MAX_STRING:
                raise BodyError(f"{_where(trail)}: a key longer than {MAX_STRING} characters", 413)
            if isinstance(item, str):
                if len(item) > MAX_STRING:
                    raise BodyError(f"{_where((trail, key))}: a string longer than {MAX_STRING} characters", 413)
            elif isinstance(item, dict | list):
                stack.append((item, depth + 1, (trail, key)))


def _where(trail: tuple[Any, ...]) -> str:
    """``$.request.config.agent_ids[3]`` from a linked trail ``((((), 'request'), 'config'), …)``."""
    keys: list[Any] = []
    while trail:
        trail, key = trail
        keys.append(key)
    return "$" + "".join(f"[{key}]" if isinstance(key, int) else f".{str(key)[:40]}" for key in reversed(keys))
