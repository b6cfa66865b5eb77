"""The session file: everything needed to resume a class (ARCHITECTURE.md, "Files and formats").

Written atomically (temp file in the same folder, fsync, rename) at the class's
boundaries (a learner message, a round, a lecture, a scene: engine/runner.py), and only
when something changed (:class:`SessionFile`); never holds API keys.  A corrupt, non-UTF-8 or newer-version file is
reported and left untouched; only a regular file of at most 64 MB is read (a FIFO or a
link to ``/dev/zero`` is refused, not waited on or read without end).  One process at a time: :class:`SessionLock` holds
an OS lock on ``FILE.lock`` (filelock) and a second ``maic chat`` on the same
file is refused with a clear message.  Callers pass the resolved path (a
symlinked session file is locked and written through to the real file).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from filelock import FileLock, Timeout
from pydantic import BaseModel, Field, ValidationError

from ..engine.classroom import Classroom
from ..engine.models import AgentConfig, ClassSettings, UserProfile, new_id
from ..errors import InputError, SessionError
from ..files import read_bounded
from ..lessons.lesson import LessonPlay
from .paths import open_private, write_atomic

SESSION_VERSION = 1
MAX_SESSION_BYTES = 64 * 2**20  # a long class with its lesson; a link to /dev/zero is refused, not read


class Session(BaseModel):
    version: int = SESSION_VERSION
    id: str = Field(default_factory=lambda: new_id("session"))
    created_at: float = Field(default_factory=time.time)
    updated_at: float = Field(default_factory=time.time)
    model: str = ""
    api_base: str | None = None
    config: ClassSettings
    profile: UserProfile = Field(default_factory=UserProfile)
    agents: list[AgentConfig] = Field(default_factory=list)  # the class as it was when created
    classroom: Classroom = Field(default_factory=Classroom)
    transcript: str | None = None
    lesson: LessonPlay | None = None  # the lesson being played (a copy) and the learner's progress


def sessions_dir(home: Path) -> Path:
    return home / "sessions"


def load_session(path: Path) -> Session:
    try:
        raw = read_bounded(path, MAX_SESSION_BYTES, "session").decode("utf-8")
    except InputError as exc:  # missing, not a regular file (a FIFO, a device), or too big
        raise SessionError(str(exc)) from None
    except UnicodeDecodeError:
        raise SessionError(f"{path}: not a valid session file (not UTF-8 text); it was left untouched") from None
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise SessionError(f"{path}:{exc.lineno}: not a valid session file ({exc.msg}); "
                           "it was left untouched") from None
    except ValueError as exc:  # an integer of thousands of digits: out of range
        raise SessionError(f"{path}: not a valid session file ({str(exc)[:120]}); it was left untouched") from None
    except RecursionError:
        raise SessionError(f"{path}: not a valid session file (nested too deeply); it was left untouched") from None
    if not isinstance(data, dict) or "version" not in data:
        raise SessionError(f"{path}: not a maic session file; it was left untouched")
    version = data["version"]
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise SessionError(f"{path}: not a valid session file (version {json.dumps(version)[:40]} is not a "
                           "version number); it was left untouched")
    if version > SESSION_VERSION:
        raise SessionError(f"{path}: session version {version} is newer than this maic "
                           f"understands ({SESSION_VERSION}); upgrade maic. The file was left untouched")
    try:
        session = Session.model_validate(data)
    except RecursionError:
        raise SessionError(f"{path}: damaged session file (nested too deeply); it was left untouched") from None
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"])
        raise SessionError(f"{path}: damaged session file: {field}: {first['msg']}; "
                           "it was left untouched") from None
    return session


def save_session(session: Session, path: Path) -> None:
    """Write atomically: a crash leaves either the old file or the new one, never half."""
    session.updated_at = time.time()
    write_atomic(path, session.model_dump_json(indent=1))


class SessionFile:
    """Which state of a session its file holds: a save with nothing new is skipped.

    A round's end after nothing new, a quit right after a round: no write (each write is an
    fsync of the whole class).  The caller writes (``save_session``) between :meth:`unsaved`
    and :meth:`saved`; ``writes`` counts the writes made.
    """

    def __init__(self) -> None:
        self.writes = 0
        self._last: str | None = None  # the session as last written, without its time stamp

    def unsaved(self, session: Session) -> str | None:
        """The session's content if the file does not hold it yet, else ``None``."""
        content = session.model_dump_json(exclude={"updated_at"})
        return None if content == self._last else content

    def saved(self, content: str) -> None:
        self._last = content
        self.writes += 1

    def save(self, session: Session, path: Path) -> bool:
        """Write ``session`` to ``path`` if it changed; ``True`` if it was written (``OSError`` propagates)."""
        content = self.unsaved(session)
        if content is None:
            return False
        save_session(session, path)
        self.saved(content)
        return True


class SessionLock:
    """Exclusive use of a session file by one process."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = FileLock(str(path) + ".lock", timeout=0, mode=0o600)

    def __enter__(self) -> SessionLock:
        lock_file = Path(self._lock.lock_file)
        try:  # create it first, so that a lock that cannot exist is not taken for one held elsewhere
            open_private(lock_file).close()  # its folder too: created 0700
            self._lock.acquire()
        except Timeout:
            raise SessionError(f"{self.path}: this session is open in another maic process; "
                               "close it there, or use another --session file") from None
        except OSError as exc:
            raise SessionError(f"{lock_file}: cannot create the session's lock file: "
                               f"{exc.strerror or exc}") from None
        return self

    def __exit__(self, *exc: object) -> None:
        self._lock.release()


def latest_session(home: Path) -> Path | None:
    folder = sessions_dir(home)
    if not folder.is_dir():
        return None
    files = [p for p in folder.glob("*.json") if p.is_file()]
    return max(files, key=lambda p: p.stat().st_mtime, default=None)
