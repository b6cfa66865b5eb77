"""Where a chat is recorded as it happens: the :class:`Recorder` protocol (a transcript writer, or
a tee in front of one) and :class:`GuardedRecorder`, whose first write failure is reported and
ends the recording while the class goes on."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Protocol

from ..engine.events import Event
from ..engine.models import RoundOverrides
from ..engine.outcomes import StopReason
from ..llm.port import LLMClient
from ..llm.recording import CallRecord, RecordingLLM


class Recorder(Protocol):
    """Where the class is recorded as it happens (a transcript)."""

    def learner(self, text: str) -> None: ...
    def round_started(self, trigger: str | None, overrides: RoundOverrides | None = None) -> None: ...
    def lecture_started(self, trigger: str | None) -> None: ...
    def event(self, event: Event) -> None: ...
    def round_finished(self, reason: StopReason, error: str | None = None) -> None: ...
    def call(self, record: CallRecord) -> None: ...
    def close(self) -> None: ...


class GuardedRecorder:
    """A recorder whose first write failure (a full disk) is reported and ends the recording.

    After :meth:`close`, late lines (a reply stream finalized as the program leaves) are dropped.
    Each method has the :class:`Recorder` signature, so mypy checks every call the chat makes.
    """

    def __init__(self, inner: Recorder) -> None:
        self.inner = inner
        self.report: Callable[[str], None] = lambda text: None  # ChatApp points it at its view
        self.stopped = False
        self._learner: Callable[[str], None] = inner.learner

    def learner_to(self, write: Callable[[str], None]) -> None:
        """Learner lines go to ``write`` from now on (a watched learner's, marked with its name and model)."""
        self._learner = write

    def _guarded(self, write: Callable[[], None]) -> None:
        if self.stopped:
            return
        try:
            write()
        except OSError as exc:
            self.stopped = True
            self.report(f"cannot write the transcript ({exc.strerror or exc}); recording stopped, "
                        "the class goes on")

    def learner(self, text: str) -> None:
        self._guarded(lambda: self._learner(text))

    def round_started(self, trigger: str | None, overrides: RoundOverrides | None = None) -> None:
        self._guarded(lambda: self.inner.round_started(trigger, overrides))

    def lecture_started(self, trigger: str | None) -> None:
        self._guarded(lambda: self.inner.lecture_started(trigger))

    def event(self, event: Event) -> None:
        self._guarded(lambda: self.inner.event(event))

    def round_finished(self, reason: StopReason, error: str | None = None) -> None:
        self._guarded(lambda: self.inner.round_finished(reason, error))

    def call(self, record: CallRecord) -> None:
        self._guarded(lambda: self.inner.call(record))

    def wrap(self, llm: LLMClient) -> LLMClient:
        """``llm``, recording each of its calls."""
        return RecordingLLM(llm, self.call)

    def close(self) -> None:
        self.stopped = True
        with contextlib.suppress(OSError):  # a full disk was already reported when a line failed
            self.inner.close()
