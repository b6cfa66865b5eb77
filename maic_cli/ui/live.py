"""The live layout: redrawn from the classroom state as events arrive.

Refreshes happen on the event loop's thread (``auto_refresh=False``), at most
``fps`` times a second, plus a slow tick for the clock — so the state is never
read by another thread while the engine writes it.
"""

from __future__ import annotations

import asyncio
import contextlib
import time

from rich.console import Console
from rich.live import Live

from ..engine.events import Event
from ..engine.round import RoundResult
from .text import clean
from .views import ScreenState, render_screen

STAGES = {"director": "the director is choosing", "agent_loading": "{name} is thinking"}


class LiveView:
    def __init__(self, console: Console, state: ScreenState, fps: float = 12.0) -> None:
        self.console = console
        self.state = state
        self.interval = 1.0 / fps
        self._live: Live | None = None
        self._last = 0.0
        self._ticker: asyncio.Task[None] | None = None

    # Lines left below the layout for the prompt, its toolbar and a short completion menu.
    PROMPT_ROOM = 5

    def _render(self):  # type: ignore[no-untyped-def]
        return render_screen(self.state, max(10, self.console.size.height - self.PROMPT_ROOM))

    def round_started(self) -> None:
        self.state.status.stage = "listening"
        if self.console.is_terminal:
            self.console.clear()  # each round's frame starts at the top, with room for the prompt below
        self._live = Live(self._render(), console=self.console, auto_refresh=False, transient=False,
                          vertical_overflow="crop")
        self._live.start()
        with contextlib.suppress(RuntimeError):
            self._ticker = asyncio.get_running_loop().create_task(self._tick())

    async def _tick(self) -> None:
        while True:
            await asyncio.sleep(0.5)
            self.refresh(force=True)

    def refresh(self, force: bool = False) -> None:
        now = time.monotonic()
        if self._live is not None and (force or now - self._last >= self.interval):
            self._last = now
            self._live.update(self._render(), refresh=True)

    def on_event(self, event: Event) -> None:
        status = self.state.status
        if event.type == "thinking":
            agent = self.state.agents.get(event.agent_id or "")
            status.stage = STAGES[event.stage].format(name=agent.name if agent else "an agent")
        elif event.type == "agent_start":
            status.stage = f"{event.agent_name} is speaking"
        elif event.type == "cue_user":
            status.stage = "your turn"
        elif event.type == "done":
            usage = event.usage.agent if event.usage.agent.calls else event.usage.director
            if usage.calls:
                status.last_ttft = usage.ttft
                status.last_prompt_tokens = usage.prompt_tokens
        self.refresh(force=event.type in ("agent_start", "agent_end", "action", "done"))

    def round_finished(self, result: RoundResult) -> None:
        if self._ticker is not None:
            self._ticker.cancel()
            self._ticker = None
        self.state.status.stage = {"aborted": "interrupted", "error": "stopped by an error"}.get(
            result.reason, "your turn")
        if self._live is not None:
            self._live.update(self._render(), refresh=True)
            self._live.stop()
            self._live = None

    def info(self, text: str) -> None:  # may quote persona or provider text: cleaned like model text
        self.console.print(clean(text), markup=False, highlight=False)

    def error(self, text: str) -> None:
        self.console.print(f"maic: error: {clean(text)}", style="red", markup=False, highlight=False)
