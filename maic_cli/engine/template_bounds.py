"""What a prompt template may compute: every operation that can make a big value is checked before it runs.

A template is shared data, and Jinja2's sandbox stops it reaching Python, but not from asking Python
for a huge number or string in one C call that neither the step budget nor Ctrl-C can interrupt
(``(((10**64)**64)**64)**64``, ``'%0999999999d' % 1``, ``'{:>999999999}'.format(1)``,
``s|replace('', s)``, ``s|indent(width=10**5)`` on many lines, ``a ~ a`` doubled thirty times).
So the operands are measured first and the operation is refused (:class:`TooBig`, an
``OverflowError``) when its result would be larger than:

* :data:`MAX_INT_BITS` bits for an integer (``**``, ``*``): about 1,200 digits;
* :data:`MAX_VALUE` characters (or items) for a string or a list (``*``, ``+``, ``~``, ``%``,
  ``format``, ``replace``, ``indent``, ``join``, ``center``, ``wordwrap`` … as filters or as
  string methods), and :data:`MAX_WIDTH` for a format width or precision.

Each check is a little arithmetic on lengths, so a render is a series of short steps: the step
budget (engine/prompt_set.py) then bounds their number, and Ctrl-C lands between any two.
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable, Iterable
from typing import Any

MAX_VALUE = 200_000  # characters of a string (items of a list) a template may make: a rendered prompt's limit
MAX_INT_BITS = 4_096  # an integer a template may make (10**64 is 213 bits)
MAX_WIDTH = 10_000  # a format width or precision ('%10000d', '{:>10000}')
_SIZED = (str, bytes, list, tuple, dict)
_PERCENT_SPEC = re.compile(r"%(?:\([^)]*\))?[-#0 +]*(\*|\d+)?(?:\.(\*|\d+))?[hlL]?[a-zA-Z%]")
_DIGITS = re.compile(r"\d+")


class TooBig(OverflowError):
    """An operation whose result a prompt template may not make."""


def weight(value: Any, limit: int = MAX_VALUE) -> int:
    """About how many characters ``value`` holds (a string's length; a list's items and theirs), counted
    without recursion and only up to just past ``limit``."""
    total = 0
    stack = [value]
    while stack and total <= limit:
        item = stack.pop()
        if isinstance(item, str | bytes):
            total += len(item)
        elif isinstance(item, list | tuple):
            total += len(item)
            stack.extend(item)
        elif isinstance(item, dict):
            total += len(item)
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, int) and not isinstance(item, bool):
            total += item.bit_length() // 3 + 1
        else:
            total += 1
    return total


def _refuse(what: str) -> TooBig:
    return TooBig(f"{what} in a prompt template (at most {MAX_VALUE:,} characters)")


def _check_size(size: int, what: str) -> None:
    if size > MAX_VALUE:
        raise _refuse(what)


def _check_int(bits: int, what: str) -> None:
    if bits > MAX_INT_BITS:
        raise TooBig(f"{what} in a prompt template: a number of more than {MAX_INT_BITS:,} bits")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def check_binop(operator: str, left: Any, right: Any) -> None:
    """Refuse ``left OPERATOR right`` if its result would be too big (before it is computed)."""
    if operator == "**":
        if _is_int(left) and _is_int(right) and right > 0 and abs(left) > 1:
            _check_int(max(left.bit_length() - 1, 1) * right, "an exponent too large for its base")
        elif isinstance(right, int | float) and abs(right) > 1_024:
            raise TooBig("an exponent above 1,024 in a prompt template")
    elif operator == "*":
        if _is_int(left) and _is_int(right):
            _check_int(left.bit_length() + right.bit_length(), "a product")
        for seq, times in ((left, right), (right, left)):
            if isinstance(seq, _SIZED) and _is_int(times) and times > 1:
                _check_size(weight(seq) * times, "a repetition")
    elif operator == "+":
        if isinstance(left, _SIZED) and isinstance(right, _SIZED):
            _check_size(weight(left) + weight(right), "a concatenation")
    elif operator == "%" and isinstance(left, str | bytes):
        check_percent_format(left if isinstance(left, str) else left.decode("latin-1"), right)


def check_concat(values: Iterable[Any]) -> None:
    """``a ~ b ~ …``: refused if the joined string would be too long."""
    _check_size(sum(weight(value) for value in values), "a concatenation (~)")


def _check_width(number: int | str | None, what: str) -> None:
    if number is not None and int(number) > MAX_WIDTH:
        raise TooBig(f"{what} above {MAX_WIDTH:,} in a prompt template")


def check_percent_format(fmt: str, args: Any) -> None:
    """``fmt % args``: no width or precision above :data:`MAX_WIDTH`, written or taken from ``args`` (``*``)."""
    given = list(args) if isinstance(args, tuple) else [args]
    starred = 0
    for match in _PERCENT_SPEC.finditer(fmt):
        for part in match.groups():
            if part == "*":
                value = given[starred] if starred < len(given) else 0
                starred += 1
                if _is_int(value):
                    _check_width(abs(value), "a % width")
            elif part is not None and len(part) > 6:
                raise TooBig(f"a % width above {MAX_WIDTH:,} in a prompt template")
            else:
                _check_width(part, "a % width")
    _check_size(len(fmt) + sum(weight(value) for value in given), "a % formatting")


def check_brace_format(fmt: str, args: Iterable[Any] = (), kwargs: dict[str, Any] | None = None) -> None:
    """``fmt.format(...)``: no width or precision above :data:`MAX_WIDTH`, and none computed from a
    nested field (``{:{}}``), which this check could not see."""
    for _, _, spec, _ in string.Formatter().parse(fmt):
        if not spec:
            continue
        if "{" in spec:
            raise TooBig("a format width computed from a nested field in a prompt template")
        for digits in _DIGITS.findall(spec):
            if len(digits) > 6:
                raise TooBig(f"a format width above {MAX_WIDTH:,} in a prompt template")
            _check_width(digits, "a format width")
    _check_size(len(fmt) + sum(weight(value) for value in args) + weight(list((kwargs or {}).values())),
                "a formatted string")


def _replaced_size(text: Any, old: Any, new: Any, count: Any = -1) -> int:
    if not (isinstance(text, str) and isinstance(old, str) and isinstance(new, str)) and \
            not (isinstance(text, bytes) and isinstance(old, bytes) and isinstance(new, bytes)):
        return 0
    found = text.count(old) if old else len(text) + 1  # type: ignore[arg-type]  # both str or both bytes
    if _is_int(count) and count >= 0:
        found = min(found, count)
    return len(text) + found * max(0, len(new) - len(old))


def _indented_size(text: Any, width: Any = 4, *rest: Any, **options: Any) -> int:
    lines = str(text).count("\n") + 1
    return len(str(text)) + lines * (width if _is_int(width) else len(str(width)))


def _wrapped_size(text: Any, width: Any = 79, break_long_words: Any = True, wrapstring: Any = None,
                  *rest: Any, **options: Any) -> int:
    lines = len(str(text)) // max(width if _is_int(width) else 1, 1) + 1
    return len(str(text)) + lines * len(str(wrapstring if wrapstring is not None else "\n"))


def _joined_size(items: Any, separator: Any = "", *rest: Any, **options: Any) -> int:
    items = list(items) if isinstance(items, list | tuple) else []
    return sum(weight(item) for item in items) + max(len(items) - 1, 0) * len(str(separator))


def _padded_size(text: Any, width: Any = 80, *rest: Any, **options: Any) -> int:
    return max(len(str(text)), width if _is_int(width) else 0)


def _truncated_size(text: Any, length: Any = 255, killwords: Any = False, end: Any = "...", *rest: Any,
                    **options: Any) -> int:
    return min(len(str(text)), length if _is_int(length) else 0) + len(str(end))


def _tab_size(text: Any, tabsize: Any = 8, *rest: Any, **options: Any) -> int:
    return len(str(text)) + str(text).count("\t") * (tabsize if _is_int(tabsize) else 0)


# A filter (or a string method) → the size of its result, from its arguments (the value first).
SIZES: dict[str, Callable[..., int]] = {
    "replace": lambda text, old="", new="", count=None, *rest, **options: _replaced_size(
        text, old, new, -1 if count is None else count),
    "indent": _indented_size, "wordwrap": _wrapped_size, "join": _joined_size, "center": _padded_size,
    "ljust": _padded_size, "rjust": _padded_size, "zfill": _padded_size, "truncate": _truncated_size,
    "expandtabs": _tab_size,
}


def check_filter(name: str, value: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """Refuse the filter ``name`` (or string method) on ``value`` if its result would be too big."""
    if name == "format" and isinstance(value, str):
        check_percent_format(value, tuple(args) if args else tuple(kwargs.values()))
        return
    size = SIZES.get(name)
    if size is not None:
        try:
            estimate = size(value, *args, **kwargs)
        except TypeError:  # wrong arguments: the call itself says so
            return
        _check_size(estimate, f"{'an' if name[:1] in 'aeiou' else 'a'} {name} result")


def check_method(method: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """A method of a string or bytes called from a template (``s.replace('', s)``, ``''.join(xs)``)."""
    owner = getattr(method, "__self__", None)
    if not isinstance(owner, str | bytes):
        return
    name = getattr(method, "__name__", "")
    if name == "join":
        items = list(args[0]) if args and isinstance(args[0], list | tuple) else []
        _check_size(sum(weight(item) for item in items) + max(len(items) - 1, 0) * len(owner), "a join result")
    elif name not in ("format", "format_map"):  # those two are checked where the sandbox wraps them
        check_filter(name, owner, args, kwargs)
