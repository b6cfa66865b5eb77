"""The live layout: redrawn from the classroom state as events arrive.

Refreshes happen on the event loop's thread (``auto_refresh=False``), at most
``fps`` times a second, plus a ticker that draws what a burst left unshown and
keeps the clock moving — so the state is never read by another thread while
the engine writes it.  A refresh renders only what fits on the screen (see
``views``), so its cost does not grow with the reply, and an event costs O(1)
between refreshes.

Lesson events (a scene, a quiz answer, a score, a pointer moved by a lecture script)
are kept as notes in the conversation; between rounds they are printed at once.

``with view.round(): …`` guarantees the terminal is left sane (Live stopped,
cursor shown, output no longer redirected, ticker cancelled) whatever happens
inside; ``round_finished`` may be called any number of times.
"""

from __future__ import annotations

import asyncio
import contextlib
import time

from rich.console import Console, RenderableType
from rich.live import Live
from rich.panel import Panel
from rich.text import Text

from ..engine.events import Event
from ..engine.round import RoundResult
from ..untrusted import clean
from .lesson_notes import Note
from .view import View
from .views import ScreenState, render_note, render_screen
from .whiteboard_view import render_slide

STAGES = {"director": "the director is choosing", "agent_loading": "{name} is thinking"}
CLOCK_SECONDS = 0.5
REASON_CHARS = 200


def one_line(text: str, limit: int = REASON_CHARS) -> str:
    """The first line of an error, cleaned and cut: what fits on a status line."""
    first = clean(text[: limit * 4]).strip().splitlines()
    line = first[0] if first else "unknown error"
    return line[:limit] + ("…" if len(line) > limit else "")


class LiveView(View):
    def __init__(self, console: Console, state: ScreenState, fps: float = 12.0) -> None:
        self.console = console
        self.state = state
        self.interval = 1.0 / fps
        self._live: Live | None = None
        self._last = 0.0
        self._dirty = False
        self._ticker: asyncio.Task[None] | None = None
        self._error: str | None = None

    # Lines left below the layout for the prompt, its toolbar and a short completion menu.
    PROMPT_ROOM = 5

    def _render(self) -> RenderableType:
        return render_screen(self.state, max(10, self.console.size.height - self.PROMPT_ROOM))

    def round_started(self) -> None:
        self.round_finished()  # a round left open by an earlier failure is closed first
        self.state.status.stage = "listening"
        self._error = None
        if self.console.is_terminal:
            self.console.clear()  # each round's frame starts at the top, with room for the prompt below
        self._live = Live(self._render(), console=self.console, auto_refresh=False, transient=False,
                          vertical_overflow="crop")
        self._live.start()
        self._last = time.monotonic()
        with contextlib.suppress(RuntimeError):
            self._ticker = asyncio.get_running_loop().create_task(self._tick())

    async def _tick(self) -> None:
        while True:
            await asyncio.sleep(self.interval)
            if self._dirty or time.monotonic() - self._last >= CLOCK_SECONDS:
                self.refresh(force=True)

    def refresh(self, force: bool = False) -> None:
        now = time.monotonic()
        if self._live is not None and (force or now - self._last >= self.interval):
            self._last, self._dirty = now, False
            self._live.update(self._render(), refresh=True)
        else:
            self._dirty = True  # the ticker draws it once the interval has passed

    def on_event(self, event: Event) -> None:
        status = self.state.status
        note = self.state.notes.record(self.state.classroom, event)
        if note is not None and self._live is None:
            self._print_note(note)
        if event.type == "thinking":
            agent = self.state.agents.get(event.agent_id or "")
            status.stage = STAGES[event.stage].format(name=agent.name if agent else "an agent")
        elif event.type == "agent_start":
            status.stage = f"{event.agent_name} is speaking"
        elif event.type == "cue_user":
            status.stage = "your turn"
        elif event.type == "error":
            self._error = one_line(event.message)
            status.stage = f"error: {self._error}"
        elif event.type == "scene":
            status.stage = clean(self.state.notes.lines(event)[0])
        elif event.type == "done":
            usage = event.usage.agent if event.usage.agent.calls else event.usage.director
            if usage.calls:
                status.last_ttft = usage.ttft
                status.last_prompt_tokens = usage.prompt_tokens
        self.refresh()

    def round_finished(self, result: RoundResult | None = None) -> None:
        """Stop the display (safe to call twice, or without a result after a failure)."""
        ticker, self._ticker = self._ticker, None
        if ticker is not None:
            ticker.cancel()
        live, self._live = self._live, None
        if live is None:
            return
        reason = self._error or (one_line(result.error) if result is not None and result.error else None)
        try:
            if result is not None:
                self.state.status.stage = {"aborted": "interrupted", "error": "stopped by an error"}.get(
                    result.reason, "your turn")
                if result.reason == "error" and reason:
                    self.state.status.stage = f"stopped by an error: {reason}"
                live.update(self._render(), refresh=True)
        finally:
            live.stop()
        if result is not None and result.reason == "error" and reason:
            self.error(reason)

    def _print_note(self, note: Note) -> None:
        """A lesson note between rounds (a quiz answer, a score, a scene change) goes straight to
        the terminal; a slide scene prints its slide panel too (no layout is on screen)."""
        self.console.print(render_note(note, self.state.notes))
        if note.type == "scene" and note.slide is not None:
            panel = render_slide(self.state.classroom.store)
            if panel is not None:
                self.console.print(panel)

    def info(self, text: str) -> None:  # may quote persona or provider text: cleaned like model text
        self.console.print(clean(text), markup=False, highlight=False)

    def error(self, text: str) -> None:
        self.console.print(f"maic: error: {clean(text)}", style="red", markup=False, highlight=False)

    def block(self, title: str, lines: list[str]) -> None:
        body = Text("\n".join(clean(line) for line in lines))
        self.console.print(Panel(body, title=Text(clean(title), style="bold"), title_align="left",
                                 border_style="cyan", expand=False))
