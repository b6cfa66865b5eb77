"""Lesson files (``lessons/*.yaml``): read and validated like personas and scenarios.

A bad file is reported as ``path:line: field: problem`` (the YAML limits of
:mod:`maic_cli.yamlfile` apply: regular files only, bounded size, aliases and
nesting).  A lesson is data: it names slides, quizzes and discussions, never a
model, an address or a place to write.
"""

from __future__ import annotations

from pathlib import Path

from ..engine.lesson import Lesson
from ..yamlfile import load_model


def load_lesson(path: Path) -> Lesson:
    return load_model(path, Lesson)
