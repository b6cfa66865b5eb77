"""The chat's side of the learner's memory: load it before the class, update it when the class ends.

:class:`ChatMemory` loads the named learner's profile (a broken one stops the chat before it
starts: ``path:line: field: problem``, with the way out), gives the class its summary (the
profile's quoted lines in ``UserProfile.memory``, which the prompt templates frame as data),
collects what happens as the transcript records it (:class:`MemoryTee` sits in front of the
transcript writer) and, when the chat ends — ``/quit``, Ctrl-D, Ctrl-C at the prompt, the end of
piped input — writes the updated profile.  A profile that cannot be written is one line; the
session is saved all the same.
"""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING

from filelock import Timeout

from ..engine.events import Event
from ..engine.models import RoundOverrides
from ..engine.outcomes import StopReason
from ..engine.session_record import Happening, collect
from ..errors import InputError
from ..llm.recording import CallRecord
from ..store.learner_profile import (
    LearnerProfile,
    find_profile,
    memory_lines,
    profile_lock,
    profile_path,
    remember,
    save_profile,
)
from ..store.paths import private_dir
from ..untrusted import clean, one_line

if TYPE_CHECKING:
    from ..store.session import Session
    from .recording import Recorder

DEFAULT_NICKNAME = "Learner"  # the name of a learner who gave none: no memory is kept for it
MAX_HAPPENINGS = 200_000  # a chat longer than this adds only its beginning to the memory


def learner_name(session: Session, named: str | None) -> str | None:
    """Whose memory a chat uses: the learner the class knows (a new class takes ``--name`` or config's
    name; a resumed one keeps its own), else ``named``; ``None`` for a learner without a name."""
    nickname = " ".join(session.profile.nickname.split())[:60]
    if nickname and nickname != DEFAULT_NICKNAME:
        return nickname
    return " ".join((named or "").split())[:60] or None


class ChatMemory:
    def __init__(self, session: Session, name: str) -> None:
        self.session = session
        self.name = name
        try:
            self.profile = find_profile(name) or LearnerProfile(name=name)
        except InputError as exc:
            raise InputError(f"{exc} (fix it with `maic learner edit {clean(name)[:60]}`, or chat with "
                             "--no-memory)") from None
        self.happenings: list[Happening] = []
        session.profile.memory = memory_lines(self.profile)

    def tee(self, inner: Recorder) -> MemoryTee:
        return MemoryTee(inner, self)

    def finish(self) -> None:
        """Write what this chat adds to the profile (nothing when nothing was said or played).  The
        profile is read again first, under a lock: another chat of the same learner, or an edit,
        may have changed it meanwhile; a profile broken meanwhile is left as it is."""
        if not self.happenings:
            return
        roles = {agent.id: agent.role for agent in self.session.agents}
        level = self.session.lesson.lesson.level if self.session.lesson is not None else None
        path = profile_path(self.name)
        try:
            private_dir(path.parent)
            with profile_lock(path):
                current = find_profile(self.name) or LearnerProfile(name=self.name)
                updated = remember(current, collect(self.happenings, roles), level=level)
                save_profile(updated)
        except InputError as exc:
            sys.stderr.write(f"maic: {one_line(str(exc))}; the learner's memory was not updated\n")
            return
        except (OSError, Timeout) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else "it is locked"
            sys.stderr.write(f"maic: {path}: cannot save the learner's memory ({reason}); the session is saved\n")
            return
        self.profile = updated


class MemoryTee:
    """A recorder that hands the learner's lines and the events to the memory, then to ``inner``."""

    def __init__(self, inner: Recorder, memory: ChatMemory) -> None:
        self.inner = inner
        self.memory = memory

    def learner(self, text: str) -> None:
        self._keep(Happening(at=time.time(), learner=text))
        self.inner.learner(text)

    def _keep(self, happening: Happening) -> None:
        if len(self.memory.happenings) < MAX_HAPPENINGS:
            self.memory.happenings.append(happening)

    def round_started(self, trigger: str | None, overrides: RoundOverrides | None = None) -> None:
        self.inner.round_started(trigger, overrides)

    def lecture_started(self, trigger: str | None) -> None:
        self.inner.lecture_started(trigger)

    def event(self, event: Event) -> None:
        if event.type not in ("thinking", "done"):  # not needed, and a done event holds the director state
            self._keep(Happening(at=time.time(), event=event))
        self.inner.event(event)

    def round_finished(self, reason: StopReason, error: str | None = None) -> None:
        self.inner.round_finished(reason, error)

    def call(self, record: CallRecord) -> None:
        self.inner.call(record)

    def close(self) -> None:
        self.inner.close()
