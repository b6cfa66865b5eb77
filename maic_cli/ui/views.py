"""The chat screen as pure functions of its state: header, conversation, panels, status.

``render_screen(state, height)`` returns the whole layout; tests render it into
a fixed-size ``Console(file=StringIO(), width=…)`` and read the text.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.layout import Layout
from rich.segment import Segment
from rich.text import Text

from ..engine.classroom import Classroom
from ..engine.models import AgentConfig, Message
from .text import clean, color_or_default
from .whiteboard_view import render_slide, render_whiteboard

LEARNER_AVATAR = "🧑"


def action_badge(name: str, params: dict[str, Any]) -> str:
    """A short, readable note for an action ("drew formula", "spotlight on eq_1")."""
    target = clean(str(params.get("elementId", "")))
    if name in ("spotlight", "laser"):
        return f"{name} on {target}"
    if name == "wb_draw_shape":
        return f"drew a {clean(str(params.get('shape', 'shape')))}"
    if name == "wb_draw_line":
        return "drew an arrow" if params.get("arrow") else "drew a line"
    if name in ("wb_edit_code", "wb_delete", "play_video"):
        verb = {"wb_edit_code": "edited code", "wb_delete": "erased", "play_video": "played video"}[name]
        return f"{verb} {target}".strip()
    return {
        "wb_open": "opened the whiteboard", "wb_close": "closed the whiteboard",
        "wb_draw_text": "wrote on the board", "wb_draw_chart": "drew a chart",
        "wb_draw_latex": "drew formula", "wb_draw_table": "drew a table", "wb_draw_code": "wrote code",
        "wb_clear": "cleared the whiteboard",
    }.get(name, name)


@dataclass
class Status:
    stage: str = "ready"
    started_at: float = field(default_factory=time.monotonic)
    last_ttft: float | None = None
    last_prompt_tokens: int | None = None


@dataclass
class ScreenState:
    classroom: Classroom
    agents: dict[str, AgentConfig]
    model: str
    mode: str = "Q&A"
    session_path: str | None = None
    learner: str = "You"
    max_turns: int = 6
    notice: str | None = None
    status: Status = field(default_factory=Status)


def render_message(message: Message, agents: dict[str, AgentConfig], learner: str) -> Text:
    if message.role == "user":
        head = Text.assemble((f"{LEARNER_AVATAR} {clean(learner)}", "bold"))
    else:
        agent = agents.get(message.agent_id or "")
        avatar = clean(agent.avatar) if agent else "🤖"
        color = color_or_default(agent.color) if agent else "white"
        head = Text.assemble((f"{avatar} {clean(message.agent_name or message.agent_id or '?')}",
                              f"bold {color}"))
    body = Text()
    after_badge = False
    for part in message.parts:
        if part.kind == "text":
            text = clean(part.text)
            if after_badge and text and not text[0].isspace():
                body.append(" ")
            body.append(text)
            after_badge = False
        elif part.action is not None:
            if body.plain and not body.plain[-1].isspace():
                body.append(" ")
            body.append(f"⟨{action_badge(part.action.name, part.action.params)}⟩", style="dim cyan")
            after_badge = True
    if message.interrupted:
        body.append(" ⏹ interrupted", style="dim italic")
    return Text.assemble(head, "\n", body) if body.plain else head


class BottomAligned:
    """Render renderables top to bottom, keeping only the last ``height`` lines."""

    def __init__(self, renderables: list[RenderableType], height: int) -> None:
        self.renderables = renderables
        self.height = height

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        height = options.height or self.height
        lines: list[list[Segment]] = []
        for renderable in reversed(self.renderables):
            rendered = console.render_lines(renderable, options.update(height=None), pad=False)
            lines[:0] = rendered + [[]]
            if len(lines) >= height:
                break
        lines = lines[-height:]
        for _ in range(height - len(lines)):  # the newest message sits just above the status line
            yield Segment.line()
        for line in lines:
            yield from line
            yield Segment.line()


def render_conversation(state: ScreenState, height: int) -> RenderableType:
    messages = state.classroom.messages
    if not messages:
        return Text("Ask the class anything to begin. Type /help for commands.", style="dim")
    return BottomAligned([render_message(m, state.agents, state.learner) for m in messages[-30:]],
                         height)


def render_header(state: ScreenState) -> RenderableType:
    names = ", ".join(clean(a.name) for a in state.agents.values())
    header = Text.assemble(("maic", "bold"), " · ", (names, ""), " · ", (clean(state.model), "cyan"),
                           " · ", (clean(state.mode), "magenta"), no_wrap=True, overflow="ellipsis")
    if state.session_path:
        header.append(f" · {clean(state.session_path)}", style="dim")
    if not state.notice:
        return header
    return Group(header, Text(clean(state.notice), style="yellow", no_wrap=True, overflow="ellipsis"))


def format_elapsed(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes:02d}:{secs:02d}"


def render_status(state: ScreenState) -> Text:
    usage = state.classroom.usage
    director = state.classroom.director_state
    turn = director.turn_count if director else 0
    parts = [f"turn {turn}/{state.max_turns}", f"{usage.total_tokens:,} tokens"]
    if usage.cost:
        parts.append(f"${usage.cost:.4f}")
    if state.status.last_prompt_tokens is not None:
        parts.append(f"prompt {state.status.last_prompt_tokens:,} tok")
    if state.status.last_ttft is not None:
        parts.append(f"ttft {state.status.last_ttft:.2f}s")
    parts.append(format_elapsed(time.monotonic() - state.status.started_at))
    return Text.assemble(("● ", "green"), (clean(state.status.stage), "bold"), "  ", " · ".join(parts),
                         style="")


class FixedHeight:
    """Render ``renderable`` exactly ``height`` lines tall (a Layout otherwise fills the terminal)."""

    def __init__(self, renderable: RenderableType, height: int) -> None:
        self.renderable = renderable
        self.height = height

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield from console.render(self.renderable, options.update(height=self.height))


def render_screen(state: ScreenState, height: int) -> FixedHeight:
    header = render_header(state)
    header_height = 1 + (1 if state.notice else 0)
    layout = Layout()
    body_height = max(3, height - header_height - 1)
    layout.split_column(
        Layout(header, name="header", size=header_height),
        Layout(name="body", size=body_height),
        Layout(render_status(state), name="status", size=1),
    )
    side: list[RenderableType] = []
    slide = render_slide(state.classroom.store)
    if slide is not None:
        side.append(slide)
    side.append(render_whiteboard(state.classroom.store))
    layout["body"].split_row(
        Layout(render_conversation(state, body_height), name="conversation", ratio=3),
        Layout(Group(*side), name="side", ratio=2),
    )
    return FixedHeight(layout, height)
