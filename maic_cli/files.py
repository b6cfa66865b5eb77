"""Opening the files maic reads from users (or that users were sent): regular files only, bounded.

A FIFO would block the open until a writer comes, ``/dev/zero`` never ends and a
folder cannot be read: each is refused with one line before anything is read.
Callers bound how much they read (a whole file, or one line at a time).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import BinaryIO

from .errors import InputError

# O_NONBLOCK: opening a FIFO must not wait for a writer (no effect on a regular file's reads).
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)


def open_regular(path: Path, what: str = "file") -> BinaryIO:
    """``path`` opened for binary reading, if it is a regular file (symlinks followed)."""
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read {what}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise InputError(f"{path}: not a regular file (a {what} is read from a plain file)")
    return os.fdopen(fd, "rb")


def read_bounded(path: Path, limit: int, what: str = "file") -> bytes:
    """The whole of ``path``, refused if it is longer than ``limit`` bytes."""
    with open_regular(path, what) as handle:
        try:
            data = handle.read(limit + 1)
        except OSError as exc:
            raise InputError(f"{path}: cannot read {what}: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise InputError(f"{path}: larger than {describe_size(limit)}, too big for a {what}")
    return data


def describe_size(size: int) -> str:
    return f"{size // 2**20} MB" if size >= 2**20 else f"{size // 2**10} KB"
