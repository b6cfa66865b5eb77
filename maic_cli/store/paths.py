"""Where things live: ``$MAIC_HOME`` moves all user data; built-in data ships with the package.

What maic writes (sessions, transcripts, reports, exports, history) may hold a
learner's words and a provider's replies, so every file it creates is private to
the user (0600) and every folder it creates is too (0700): :func:`private_dir`,
:func:`open_private` and :func:`write_atomic`.  Files and folders that already
exist keep the permissions their owner gave them.

What maic writes never goes through a link it did not make, nor into a FIFO or a device
(a received folder may hold ``session.json.lock -> ~/.bashrc``): :func:`open_private`
opens with ``O_NOFOLLOW`` and ``O_NONBLOCK`` (a FIFO without a reader does not block) and
refuses anything but a regular file; :func:`write_atomic` refuses to replace anything but
a regular file (a link, a FIFO, a device, a folder).
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from pathlib import Path
from typing import IO

PACKAGE_DIR = Path(__file__).resolve().parent.parent
PRIVATE_FILE = 0o600
PRIVATE_DIR = 0o700
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_LINK_REFUSED = "a symbolic link (maic writes only to a file it can see, never through a link)"
_NOT_REGULAR = "not a regular file (maic writes only plain files, never a FIFO, a device or a folder)"


def maic_home() -> Path:
    """User data: ``$MAIC_HOME``, else the platform's data dir (e.g. ``~/.local/share/maic``)."""
    env = os.environ.get("MAIC_HOME")
    if env:
        return Path(env).expanduser()
    from platformdirs import user_data_dir

    return Path(user_data_dir("maic", appauthor=False))


def speech_cache_dir() -> Path:
    """Where synthesised sentences are kept (``speech/cache.py``; bounded, evicted least recently used)."""
    return maic_home() / "cache" / "speech"


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


def open_private(path: Path, mode: str = "a", *, make_folder: bool = True) -> IO[str]:
    """Open a text file to append (``"a"``) or overwrite (``"w"``); a new file is created 0600 (and its
    folder 0700, unless ``make_folder`` is false)."""
    if mode not in ("a", "w"):
        raise ValueError(f"open_private writes only: mode 'a' or 'w', not {mode!r}")
    if make_folder:
        private_dir(path.parent)
    if path.is_symlink():  # refused before the open: O_NOFOLLOW's error is not the same on every system
        raise OSError(errno.ELOOP, _LINK_REFUSED, str(path))
    flags = os.O_WRONLY | os.O_CREAT | _NOFOLLOW | _NONBLOCK | (os.O_APPEND if mode == "a" else 0)
    try:
        fd = os.open(path, flags, PRIVATE_FILE)
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # a link appeared since the check
            raise OSError(errno.ELOOP, _LINK_REFUSED, str(path)) from None
        if exc.errno == errno.ENXIO:  # a FIFO nobody reads
            raise OSError(errno.ENXIO, _NOT_REGULAR, str(path)) from None
        raise
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, _NOT_REGULAR, str(path))
        if mode == "w":
            os.ftruncate(fd, 0)  # only now: a FIFO or a device is never truncated
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, mode, encoding="utf-8")


def check_replaceable(path: Path) -> None:
    """Refuse to replace ``path`` unless it is missing or a regular file (never a link, FIFO, device)."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    except OSError:
        return  # the write itself reports it
    if stat.S_ISLNK(mode):
        raise OSError(errno.ELOOP, _LINK_REFUSED, str(path))
    if not stat.S_ISREG(mode):
        raise OSError(errno.EINVAL, _NOT_REGULAR, str(path))


def write_atomic(path: Path, text: str | bytes, *, durable: bool = True) -> None:
    """Write ``text`` to ``path`` so that a crash leaves the old file or the new one, never half.

    A temp file in the same folder (created 0600), renamed over the target, which must be missing or
    a regular file (:func:`check_replaceable`); ``bytes`` are written as they are.  ``durable`` also fsyncs the
    data and the rename (a session file).  Without it a crashed process still never leaves
    a half file, but a crashed machine may lose the write (a batch's per-run results).
    """
    private_dir(path.parent)
    check_replaceable(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with (os.fdopen(fd, "wb") if isinstance(text, bytes) else os.fdopen(fd, "w", encoding="utf-8")) as handle:
            handle.write(text)  # type: ignore[arg-type]
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
