"""The chat screen as pure functions of its state: header, conversation, panels, status.

``render_screen(state, height)`` returns the whole layout; tests render it into
a fixed-size ``Console(file=StringIO(), width=…)`` and read the text.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.layout import Layout
from rich.segment import Segment
from rich.text import Text

from ..engine.classroom import Classroom
from ..engine.models import AgentConfig, Message
from ..untrusted import clean
from .lesson_notes import LessonNotes, Note
from .text import color_or_default
from .whiteboard_view import as_text, render_slide, render_whiteboard

LEARNER_AVATAR = "🧑"


def action_badge(name: str, params: Any) -> str:
    """A short, readable note for an action ("drew formula", "spotlight on eq_1").

    ``params`` may come from a stored, edited file: any shape is shown, none raises."""
    params = params if isinstance(params, dict) else {}
    name = as_text(name, 40)
    target = as_text(params.get("elementId", ""), 40)
    if name in ("spotlight", "laser"):
        return f"{name} on {target}"
    if name == "wb_draw_shape":
        return f"drew a {as_text(params.get('shape', 'shape'), 20)}"
    if name == "wb_draw_line":
        return "drew an arrow" if params.get("arrow") is True else "drew a line"
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
    notes: LessonNotes = field(default_factory=LessonNotes)  # the lesson's scenes, answers, pointers


def _visible_parts(message: Message, budget: int | None) -> tuple[list[tuple[str, str]], bool]:
    """The message's last parts, about ``budget`` characters of them, as (kind, cleaned text),
    and whether anything before them was left out: a long reply costs what the screen shows."""
    picked: list[tuple[str, str]] = []
    left = math.inf if budget is None else budget
    for part in reversed(message.parts):
        if left <= 0:
            return picked[::-1], True
        if part.kind == "text":
            if len(part.text) > left:
                picked.append(("text", clean(part.text[-int(left):])))
                return picked[::-1], True
            picked.append(("text", clean(part.text)))
            left -= len(part.text)
        elif part.action is not None:
            badge = f"⟨{action_badge(part.action.name, part.action.params)}⟩"
            picked.append(("badge", badge))
            left -= len(badge)
    return picked[::-1], False


def render_message(message: Message, agents: dict[str, AgentConfig], learner: str,
                   budget: int | None = None) -> Text:
    """A message as Text; with ``budget`` (characters), only its tail that fits, after a "…"."""
    if message.role == "user":
        head = Text.assemble((f"{LEARNER_AVATAR} {as_text(learner)}", "bold"))
    else:
        agent = agents.get(message.agent_id or "")
        avatar = as_text(agent.avatar, 16) if agent else "🤖"
        color = color_or_default(agent.color) if agent else "white"
        head = Text.assemble((f"{avatar} {as_text(message.agent_name or message.agent_id or '?')}",
                              f"bold {color}"))
    parts, cut = _visible_parts(message, budget)
    body = Text()
    if cut:
        body.append("… ", style="dim")
    last, after_badge = "", False
    for kind, text in parts:
        if kind == "text":
            if after_badge and text and not text[0].isspace():
                body.append(" ")
            body.append(text)
            after_badge = False
        else:
            if last and not last.isspace():
                body.append(" ")
            body.append(text, style="dim cyan")
            after_badge = True
        last = text[-1] if text else last
    if message.interrupted:
        body.append(" ⏹ interrupted", style="dim italic")
    return Text.assemble(head, "\n", body) if body else head


NOTE_STYLES = {"lesson": "bold magenta", "scene": "bold magenta", "quiz_answer": "yellow",
               "quiz_score": "bold yellow", "action": "dim cyan"}


def render_note(note: Note, notes: LessonNotes) -> Text:
    """A lesson note in the conversation: a scene as a rule-like line, answers and scores in yellow."""
    lines = notes.lines(note)
    if note.type == "scene":
        lines = [f"── {lines[0]} ──"]
    return Text("\n".join(lines), style=NOTE_STYLES.get(note.type, ""))


class Conversation:
    """The newest messages (and lesson notes) that fit in ``height`` lines, bottom-aligned above
    the status line.

    Messages are rendered newest first until the height is filled; older ones
    are never built, and each is cut to the characters its lines can hold."""

    def __init__(self, state: ScreenState, height: int) -> None:
        self.state = state
        self.height = height

    def _newest_first(self) -> Iterator[Message | Note]:
        messages = self.state.classroom.messages
        by_place = self.state.notes.by_place()
        for place in range(len(messages), -1, -1):
            yield from reversed(by_place.get(place, []))
            if place:
                yield messages[place - 1]

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        height = options.height or self.height
        lines: list[list[Segment]] = []
        for item in self._newest_first():
            if isinstance(item, Message):
                budget = (height - len(lines)) * max(1, options.max_width)
                text = render_message(item, self.state.agents, self.state.learner, budget=budget)
            else:
                text = render_note(item, self.state.notes)
            lines[:0] = [*console.render_lines(text, options.update(height=None), pad=False), []]
            if len(lines) >= height:
                break
        lines = lines[-height:]
        for _ in range(height - len(lines)):  # the newest message sits just above the status line
            yield Segment.line()
        for line in lines:
            yield from line
            yield Segment.line()


def render_conversation(state: ScreenState, height: int) -> RenderableType:
    if not state.classroom.messages and not state.notes.notes:
        return Text("Ask the class anything to begin. Type /help for commands.", style="dim")
    return Conversation(state, height)


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


class SidePanels:
    """The slide panel above the whiteboard: the slide takes the lines it needs, up to all but
    the board's share (three lines when the board is empty, else a third of the height)."""

    def __init__(self, slide: RenderableType, board: RenderableType, board_empty: bool) -> None:
        self.slide = slide
        self.board = board
        self.board_empty = board_empty

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        height = options.height or 24
        board_share = 3 if self.board_empty else max(3, height // 3)
        room = max(3, height - board_share)
        natural = len(console.render_lines(self.slide, options.update(height=None), pad=False))
        slide_height = min(natural, room)
        yield from console.render(self.slide, options.update(height=slide_height))
        if height - slide_height > 0:
            yield from console.render(self.board, options.update(height=height - slide_height))


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
    store = state.classroom.store
    board = render_whiteboard(store)
    slide = render_slide(store)
    side = Layout(board if slide is None else SidePanels(slide, board, not store.whiteboard), name="side", ratio=2)
    layout["body"].split_row(Layout(render_conversation(state, body_height), name="conversation", ratio=3), side)
    return FixedHeight(layout, height)
