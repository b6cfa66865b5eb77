"""A built report's strings made safe in one walk over the model, without dumping and validating it again.

Every string of a batch report (keys too) came from files and providers: report.json holds it cleaned of
terminal control sequences and without API keys (:func:`cleaned_report`), report.md made inert Markdown
as well (:func:`inert_report`).  A report of 1,000 runs holds ~150,000 strings and a few hundred distinct
ones, so each distinct string is converted once.

The walk is copy-on-write: a model, dict or list whose contents change is copied (a model keeps which of
its fields were set, so report.json still leaves out what was never set); what does not change is the
same object (the report shares parts with the run results: a judged run's verdicts), and nothing is
modified in place.  It gives the report ``BatchReport.model_validate(converted(report.model_dump()))``
gave, for a fraction of the work: the dump, the walk over it and the validation each cost as much as
this walk.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TypeVar

from pydantic import BaseModel

from ..untrusted import clean, markdown_text, redactor
from .batch_report import BatchReport

Node = TypeVar("Node")


def once(convert: Callable[[str], str]) -> Callable[[str], str]:
    """``convert``, each distinct string converted once (a report repeats its keys and names thousands
    of times)."""
    seen: dict[str, str] = {}

    def converted(text: str) -> str:
        if (found := seen.get(text)) is None:
            found = seen[text] = convert(text)
        return found

    return converted


def rewritten(node: Node, text: Callable[[str], str], *, number: Callable[[float], float | None] | None = None,
              keep: str | None = None) -> Node:
    """``node`` (a model, dict, list or value) with every string (dict keys too) as ``text`` gives it and
    every float as ``number`` gives it; the value of a model's field named ``keep`` stays as it is (a dict's
    key of that name is converted like any other: a dict holds what came from outside).  A part with nothing
    to change is returned itself."""

    def walk(item: object) -> object:
        kind = type(item)
        if kind is str:
            return text(item)  # type: ignore[arg-type]
        if kind is float:
            return item if number is None else number(item)  # type: ignore[arg-type]
        if isinstance(item, BaseModel):
            changed: dict[str, object] = {}
            for name, value in item.__dict__.items():
                kind = type(value)
                if name == keep or value is None or kind is int or kind is bool:
                    continue  # most fields: nothing to convert
                new = walk(value)
                if not _same(new, value):
                    changed[name] = new
            if not changed:
                return item
            copy = item.model_copy()  # shallow; the fields that were set stay the ones set
            copy.__dict__.update(changed)
            return copy
        if isinstance(item, dict):
            pairs = [(walk(key), walk(value)) for key, value in item.items()]
            if all(_same(k, key) and _same(v, value) for (k, v), (key, value) in zip(pairs, item.items(),
                                                                                      strict=True)):
                return item
            return dict(pairs)  # two keys cleaned alike: the last value, at the first key's place
        if isinstance(item, list | tuple):
            values = [walk(value) for value in item]
            if type(item) is list and all(_same(v, value) for v, value in zip(values, item, strict=True)):
                return item
            return values  # a tuple becomes a list, as in the JSON it is written to
        return item

    return walk(node)  # type: ignore[return-value]


def _same(new: object, old: object) -> bool:
    """Whether the walk left ``old`` as it was (a string converted to the same text counts)."""
    return new is old or (type(new) is str and new == old)


def cleaned_report(report: BatchReport) -> BatchReport:
    """The report as report.json holds it: every string cleaned (:func:`~maic_cli.untrusted.clean`) and
    without API keys, every number finite (NaN and infinity are not JSON: ``null``; a field that must be a
    number then fails validation, as it did when the report was validated again)."""
    redact = redactor()
    odd: list[float] = []
    cleaned = rewritten(report, once(lambda text: redact(clean(text))), number=lambda x: _finite(x, odd))
    return BatchReport.model_validate(cleaned.model_dump(exclude_unset=True)) if odd else cleaned


def finite(value: float) -> float | None:
    """``value``, or ``None`` when it is NaN or infinite."""
    return value if math.isfinite(value) else None


def _finite(value: float, odd: list[float]) -> float | None:
    if math.isfinite(value):
        return value
    odd.append(value)
    return None


def inert_report(report: BatchReport) -> BatchReport:
    """The report as report.md shows it: every string that came from outside made inert Markdown (the
    statistics' descriptions are maic's own text)."""
    return rewritten(report, once(markdown_text), keep="statistics")
