"""``maic chat --watch LEARNER``: watch a simulated learner attend the class, live, in the same layout.

The chat's loop reads lines from a source (prompt-toolkit, stdin); here the source
is a simulated learner (engine/learner.py) who reads the class so far and says its
next line, until it is satisfied (``<done>``), reaches its turn limit or its model
fails (one line; the session is kept).  What it says is shown as its line and
marked in the transcript with its name and model; its calls are recorded there
too, apart from the class's.  Its text is a model's (or a learner file's, which a user
may have been sent): it reaches the chat as :class:`~.loop.Said`, learner text that the
chat hands to the class as the batch runner does (chat/loop.py ``ChatApp.say``), never to
the slash commands or a lesson's steps, whatever it starts with — so it can never save,
export, open a lesson or switch models.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING

from ..engine.learner import SimulatedLearner
from ..llm.port import LLMError
from ..store.transcript import TranscriptWriter
from ..untrusted import one_line
from .loop import Said

if TYPE_CHECKING:
    from ..engine.models import Message
    from .loop import ChatApp
    from .recording import GuardedRecorder


class Watcher:
    def __init__(self, learner: SimulatedLearner, model: str) -> None:
        self.learner = learner
        self.model = model
        self.lines: list[str] = []

    @property
    def name(self) -> str:
        return self.learner.profile.name

    def mark(self, recorder: GuardedRecorder) -> None:
        """The transcript's learner lines say who wrote them (the learner, on which model)."""
        writer = recorder.inner
        while not isinstance(writer, TranscriptWriter) and hasattr(writer, "inner"):  # through any tee
            writer = writer.inner
        if isinstance(writer, TranscriptWriter):
            recorder.learner_to(functools.partial(writer.learner, simulated=self.name, model=self.model))

    def reader(self, app: ChatApp) -> Callable[[], Awaitable[Said | None]]:
        """The chat loop's ``read_line``: the learner's next line, shown in the app's view."""
        return functools.partial(self.next_line, lambda: app.session.classroom.messages, app.view.info,
                                 app.view.error)

    async def next_line(self, messages: Callable[[], Sequence[Message]], info: Callable[[str], None],
                        error: Callable[[str], None]) -> Said | None:
        if not self.learner.may_speak:
            info(f"{self.name} (simulated) has finished" + ("" if self.learner.done else
                                                             f" ({self.learner.turns} turns)") + ".")
            return None
        try:
            move = await self.learner.next_move(messages())
        except LLMError as exc:
            error(f"the simulated learner's model failed: {exc}")
            return None
        text = move.text.strip()
        if not text:
            info(f"{self.name} (simulated) has nothing more to say.")
            return None
        info(f"{self.name} (simulated, {one_line(self.model)[:60]}) › {one_line(text)}")
        self.lines.append(text)
        return Said(text)
