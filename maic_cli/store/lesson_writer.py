"""Writing a lesson file (``maic lesson new``): readable YAML, written atomically and privately.

The YAML is block style with unicode kept, keys in the lesson's own order, and empty or
unset fields left out, so the file reads like the hand-written samples in ``lessons/``.
A header comment says what made it (topic, model, date); its lines are cleaned and kept
on one line each, so a topic cannot break out of the comment.  The file appears whole
or not at all (:func:`~maic_cli.store.paths.write_atomic`, 0600 when new).
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from ..authoring.scenes import LessonOutline
from ..errors import InputError
from ..lessons.lesson import Lesson
from ..untrusted import one_line
from .lessons import MAX_LESSON_BYTES
from .paths import write_atomic

_EMPTY: tuple[object, ...] = (None, "", [], {})


class _BlockDumper(yaml.SafeDumper):
    """Safe YAML, with list items indented under their key (as people write them)."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)


def _prune(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _prune(v) for k, v in value.items() if v not in _EMPTY}
    if isinstance(value, list):
        return [_prune(v) for v in value]
    return value


def lesson_yaml(lesson: Lesson, header: Sequence[str] = ()) -> str:
    """The lesson as YAML text, after ``header`` as comment lines."""
    data = _prune(lesson.model_dump(mode="json", exclude_none=True))
    body = yaml.dump(data, Dumper=_BlockDumper, sort_keys=False, allow_unicode=True, default_flow_style=False,
                     width=100)
    comments = "".join(f"# {one_line(line)}\n" for line in header)
    return comments + body


def outline_yaml(outline: LessonOutline, header: Sequence[str] = ()) -> str:
    """An outline (``maic lesson new --outline-only``) as YAML to edit, after ``header`` as comment lines."""
    body = yaml.dump(_prune(outline.model_dump(mode="json")), Dumper=_BlockDumper, sort_keys=False,
                     allow_unicode=True, default_flow_style=False, width=100)
    return "".join(f"# {one_line(line)}\n" for line in header) + body


def check_writable(path: Path, force: bool) -> None:
    """Refuse an existing file unless ``force``; refuse what is not a regular file in any case, and a
    folder that cannot be (a file on the way): before any model call, not after the last."""
    for folder in path.parents:
        if folder.exists():
            if not folder.is_dir():
                raise InputError(f"{path}: {folder} is not a folder; choose another --out")
            try:  # a folder maic cannot write in fails now, not after the model calls were paid for
                tempfile.TemporaryFile(dir=folder).close()
            except OSError as exc:
                raise InputError(f"{path}: cannot write in {folder} ({exc.strerror or exc}); "
                                 "choose another --out") from None
            break
    if path.exists() or path.is_symlink():
        if not path.is_file():
            raise InputError(f"{path}: exists and is not a regular file; choose another --out")
        if not force:
            raise InputError(f"{path}: already exists; pass --force to overwrite it, or choose another --out")


def free_name(path: Path) -> Path:
    """``path``, or the first ``stem-2.yaml``, ``stem-3.yaml``… that does not exist yet."""
    candidate, number = path, 1
    while candidate.exists() or candidate.is_symlink():
        number += 1
        candidate = path.with_name(f"{path.stem}-{number}{path.suffix}")
    return candidate


def write_lesson(path: Path, lesson: Lesson, header: Sequence[str], *, force: bool) -> None:
    check_writable(path, force)
    text = lesson_yaml(lesson, header)
    if len(text.encode("utf-8")) > MAX_LESSON_BYTES:  # what load_lesson reads: never write a file it refuses
        raise InputError(f"{path}: the lesson came out at {len(text.encode('utf-8')) / 2**20:.1f} MB, more than a "
                         f"lesson file may hold ({MAX_LESSON_BYTES // 2**20} MB); ask for fewer --scenes")
    write_atomic(path, text)
