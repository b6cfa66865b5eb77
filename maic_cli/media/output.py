"""Writing an export: atomically (a temp file in the same folder, then renamed), never through a link.

The media room writes its own files (ffmpeg needs a path to write to).  A target that is a link, a folder, a
FIFO or a device is refused; a folder that cannot be written is one line naming the path.  A temp file is removed
on any failure, so a crash or a failed encode leaves the old file or none, never half of one.
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..errors import InputError, MaicError


def check_target(path: Path) -> None:
    """``path`` may be written: missing or a regular file, in a folder that exists (else one line)."""
    try:
        info = path.lstat()
    except FileNotFoundError:
        info = None
    except OSError as exc:
        raise MaicError(f"{path}: cannot write: {exc.strerror or exc}") from None
    if info is not None and not stat.S_ISREG(info.st_mode):
        kind = "a link" if stat.S_ISLNK(info.st_mode) else "a folder" if stat.S_ISDIR(info.st_mode) else "not a file"
        raise InputError(f"{path}: cannot write: it is {kind}")
    folder = path.parent
    if not folder.is_dir():
        raise InputError(f"{path}: cannot write: the folder {folder} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise MaicError(f"{path}: cannot write: the folder {folder} is not writable")


@contextmanager
def atomic_path(path: Path) -> Iterator[Path]:
    """A temp path beside ``path`` to write to; renamed over ``path`` when the block ends without error."""
    check_target(path)
    try:
        fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=f".tmp{path.suffix}", dir=path.parent)
    except OSError as exc:
        raise MaicError(f"{path}: cannot write: {exc.strerror or exc}") from None
    os.close(fd)
    temp = Path(name)
    try:
        yield temp
        check_target(path)  # still not a link (something may have put one there meanwhile)
        os.replace(temp, path)
    except OSError as exc:
        raise MaicError(f"{path}: cannot write: {exc.strerror or exc}") from None
    finally:
        temp.unlink(missing_ok=True)


def write_bytes(path: Path, data: bytes) -> None:
    with atomic_path(path) as temp:
        temp.write_bytes(data)


def write_text(path: Path, text: str) -> None:
    write_bytes(path, text.encode("utf-8"))
