"""Lesson files (``lessons/*.yaml``): read and validated like personas and scenarios.

A bad file is reported as ``path:line: field: problem`` (the YAML limits of
:mod:`maic_cli.yamlfile` apply: regular files only, bounded size, aliases and
nesting).  A lesson is data: it names slides, quizzes and discussions, never a
model, an address or a place to write.  Its strings are untrusted: an error that
quotes them (an unknown field's name, an element id) is one cleaned line, with no
terminal control sequence and no line break.
"""

from __future__ import annotations

from pathlib import Path

from ..engine.lesson import Lesson
from ..errors import InputError
from ..untrusted import one_line
from ..yamlfile import load_model

MAX_ERROR = 400  # characters of an error line


MAX_LESSON_BYTES = 4 * 2**20  # a lesson with code and scripts is bigger than a persona (1 MB)


def load_lesson(path: Path) -> Lesson:
    try:
        return load_model(path, Lesson, max_bytes=MAX_LESSON_BYTES)
    except InputError as exc:
        message = one_line(str(exc))
        cut = message[:MAX_ERROR] + ("…" if len(message) > MAX_ERROR else "")
        raise InputError(cut) from None
