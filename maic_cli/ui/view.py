"""The view seam: what the live layout and the plain output both do with a class.

A view is told when a round starts and ends and sees every engine event in
between; ``info`` and ``error`` print one cleaned line, ``block`` a titled
block of cleaned lines.  ``round()`` is the
exception-safe way to run a round: whatever happens inside, the view gives the
terminal back (Live stopped, cursor shown, output no longer redirected).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Protocol

from ..engine.events import Event
from ..engine.round import RoundResult


class View(Protocol):
    @contextlib.contextmanager
    def round(self) -> Iterator[None]:
        """One round on screen; the view is closed cleanly even if the body raises (views that
        declare this protocol inherit it)."""
        self.round_started()
        try:
            yield
        finally:
            self.round_finished()

    def round_started(self) -> None: ...
    def on_event(self, event: Event) -> None: ...
    def round_finished(self, result: RoundResult | None = None) -> None: ...
    def info(self, text: str) -> None: ...
    def error(self, text: str) -> None: ...
    def block(self, title: str, lines: list[str]) -> None:
        """A titled block of lines between rounds (a lesson's outline, a quiz question, a score);
        every line is cleaned like model text."""
