"""Where things live: ``$MAIC_HOME`` moves all user data; built-in data ships with the package.

What maic writes (sessions, transcripts, reports, exports, history) may hold a
learner's words and a provider's replies, so every file it creates is private to
the user (0600) and every folder it creates is too (0700): :func:`private_dir`,
:func:`open_private` and :func:`write_atomic`.  Files and folders that already
exist keep the permissions their owner gave them.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import IO

PACKAGE_DIR = Path(__file__).resolve().parent.parent
PRIVATE_FILE = 0o600
PRIVATE_DIR = 0o700


def maic_home() -> Path:
    """User data: ``$MAIC_HOME``, else the platform's data dir (e.g. ``~/.local/share/maic``)."""
    env = os.environ.get("MAIC_HOME")
    if env:
        return Path(env).expanduser()
    from platformdirs import user_data_dir

    return Path(user_data_dir("maic", appauthor=False))


def builtin_dir(name: str) -> Path:
    """A folder shipped with maic (``agents``, ``scenarios``, ``transcripts``, ``lessons``).

    In a wheel it is inside the package (``maic_cli/_defaults/NAME``); in a source
    checkout (editable install, tests) it is the repository's top-level folder.
    """
    packaged = PACKAGE_DIR / "_defaults" / name
    if packaged.is_dir():
        return packaged
    return PACKAGE_DIR.parent / name


def private_dir(folder: Path) -> Path:
    """``folder``, created (with any missing parents) as 0700 if it does not exist yet."""
    missing: list[Path] = []
    current = folder
    while not current.exists() and current.parent != current:
        missing.append(current)
        current = current.parent
    for path in reversed(missing):
        try:
            path.mkdir(mode=PRIVATE_DIR)
        except FileExistsError:
            continue  # another process made it first
        os.chmod(path, PRIVATE_DIR)  # mkdir's mode passes through the umask
    return folder


def open_private(path: Path, mode: str = "a") -> IO[str]:
    """Open a text file to append (``"a"``) or overwrite (``"w"``); a new file is created 0600."""
    if mode not in ("a", "w"):
        raise ValueError(f"open_private writes only: mode 'a' or 'w', not {mode!r}")
    private_dir(path.parent)
    flags = os.O_WRONLY | os.O_CREAT | (os.O_APPEND if mode == "a" else os.O_TRUNC)
    return os.fdopen(os.open(path, flags, PRIVATE_FILE), mode, encoding="utf-8")


def write_atomic(path: Path, text: str, *, durable: bool = True) -> None:
    """Write ``text`` to ``path`` so that a crash leaves the old file or the new one, never half.

    A temp file in the same folder (created 0600), renamed over the target.  ``durable`` also fsyncs the
    data and the rename (a session file).  Without it a crashed process still never leaves
    a half file, but a crashed machine may lose the write (a batch's per-run results).
    """
    private_dir(path.parent)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    if durable:
        _fsync_dir(path.parent)


def _fsync_dir(folder: Path) -> None:
    """Make a rename in ``folder`` durable (where the platform allows opening a folder)."""
    try:
        dir_fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dir_fd)
    except OSError:
        pass
    finally:
        os.close(dir_fd)
