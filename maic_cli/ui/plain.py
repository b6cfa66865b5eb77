"""Plain, line-oriented output for pipes and scripts: ``Name: speech [action]``.

``with view.round(): …`` ends an open line whatever happens inside;
``round_finished`` may be called any number of times.
"""

from __future__ import annotations

from typing import TextIO

from ..engine.events import Event
from ..engine.models import AgentConfig
from ..engine.round import RoundResult
from .text import StreamCleaner, clean
from .view import View
from .views import action_badge


class PlainView(View):
    def __init__(self, out: TextIO, err: TextIO, agents: dict[str, AgentConfig]) -> None:
        self.out = out
        self.err = err
        self.agents = agents
        self._open = False
        self._last = "\n"
        self._space_pending = False
        self._cleaner = StreamCleaner()

    def _write(self, text: str) -> None:
        if text:
            if self._space_pending and not text[0].isspace():
                self.out.write(" ")
            self._space_pending = False
            self.out.write(text)
            self._last = text[-1]

    def round_started(self) -> None:
        return None

    def on_event(self, event: Event) -> None:
        if event.type == "agent_start":
            self._write(f"{clean(event.agent_name)}: ")
            self._open = True
        elif event.type == "text_delta":
            self._write(self._cleaner.feed(event.content))
        elif event.type == "action":
            space = "" if self._last.isspace() else " "
            self._write(f"{space}[{action_badge(event.action_name, event.params)}]")
            self._space_pending = True
        elif event.type == "agent_end":
            self._write(self._cleaner.flush())
            self._space_pending = False
            self._write("\n")
            self._open = False
        elif event.type == "error":
            self.error(event.message)
        self.out.flush()

    def round_finished(self, result: RoundResult | None = None) -> None:
        if self._open:
            self._write(self._cleaner.flush())
            self._write(" [interrupted]\n" if result is not None and result.reason == "aborted" else "\n")
            self._open = False
        self.out.flush()

    def info(self, text: str) -> None:
        self.out.write(clean(text) + "\n")
        self.out.flush()

    def error(self, text: str) -> None:
        self.err.write(f"maic: error: {clean(text)}\n")
        self.err.flush()

    def block(self, title: str, lines: list[str]) -> None:
        self.out.write("".join(f"{clean(line)}\n" for line in [f"== {title} ==", *lines]))
        self.out.flush()
