"""Lesson files (``lessons/*.yaml``): read and validated like personas and scenarios.

A bad file is reported as ``path:line: field: problem`` (the YAML limits of
:mod:`maic_cli.yamlfile` apply: regular files only, bounded size, aliases and
nesting).  A lesson is data: it names slides, quizzes and discussions, never a
model, an address or a place to write.  Its strings are untrusted: an error that
quotes them (an unknown field's name, an element id) is one cleaned line, with no
terminal control sequence and no line break.

Lessons have names: the built-in ones (``lessons/`` in a checkout, shipped in the
package) and the user's own in ``$MAIC_HOME/lessons`` are found by their file's stem
(``photosynthesis``), so ``maic chat --lesson photosynthesis`` and ``/lesson
photosynthesis`` work from any folder; an argument that looks like a path (a folder
separator, a ``.yaml`` ending) or names an existing file is read as a file.  A user's
lesson of the same name comes before the built-in one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError, MaicError
from ..lessons.lesson import Lesson
from ..untrusted import one_line
from ..yamlfile import load_model
from .paths import builtin_dir, maic_home

LESSON_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,79}$")
SUFFIXES = (".yaml", ".yml")

MAX_ERROR = 400  # characters of an error line


MAX_LESSON_BYTES = 4 * 2**20  # a lesson with code and scripts is bigger than a persona (1 MB)


def load_lesson(path: Path) -> Lesson:
    try:
        return load_model(path, Lesson, max_bytes=MAX_LESSON_BYTES)
    except InputError as exc:
        message = one_line(str(exc))
        cut = message[:MAX_ERROR] + ("…" if len(message) > MAX_ERROR else "")
        raise InputError(cut) from None


def lesson_dirs() -> list[Path]:
    """Where named lessons are looked up, first match wins: the user's, then the built-in ones."""
    return [maic_home() / "lessons", builtin_dir("lessons")]


def named_lessons() -> dict[str, Path]:
    """Every named lesson: file stem → file (the user's shadow the built-in ones of the same name)."""
    found: dict[str, Path] = {}
    for folder in lesson_dirs():
        if not folder.is_dir():
            continue
        for path in sorted(folder.iterdir()):
            if path.suffix in SUFFIXES and LESSON_NAME.match(path.stem) and path.stem not in found:
                found[path.stem] = path
    return found


def looks_like_path(argument: str) -> bool:
    return "/" in argument or "\\" in argument or argument.endswith(SUFFIXES) or argument.startswith(("~", "."))


def resolve_lesson(argument: str) -> Path:
    """The file a ``--lesson`` or ``/lesson`` argument means: a path as given, else a lesson's name."""
    text = argument.strip()
    if not text:
        raise InputError("a lesson: its name (maic lesson list) or a .yaml file")
    path = Path(text).expanduser()
    if looks_like_path(text) or path.exists():
        return path
    named = named_lessons()
    if text in named:
        return named[text]
    names = ", ".join(sorted(named)) or "none installed"
    raise InputError(f"no lesson named {one_line(text)[:80]!r} (lessons: {names}; a .yaml file path works too)")


@dataclass(frozen=True)
class LessonEntry:
    """A named lesson as ``maic lesson list`` shows it: its lesson, or why it cannot be read."""

    name: str
    path: Path
    lesson: Lesson | None
    problem: str | None = None


def list_lessons() -> list[LessonEntry]:
    """The named lessons, each read (a broken one is listed with its problem, not skipped)."""
    entries = []
    for name, path in named_lessons().items():
        try:
            entries.append(LessonEntry(name, path, load_lesson(path)))
        except MaicError as exc:
            entries.append(LessonEntry(name, path, None, str(exc)))
    return entries
