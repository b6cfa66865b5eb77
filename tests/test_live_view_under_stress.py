"""The live view under stress: big replies cost the screen, errors are shown, the terminal stays sane."""

from __future__ import annotations

import asyncio
import io
import math
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from prompt_toolkit.history import InMemoryHistory
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from rich.console import Console
from rich.live import Live

from maic_cli import untrusted
from maic_cli.engine.classroom import Classroom
from maic_cli.engine.events import ActionEvent, AgentStartEvent, ErrorEvent, TextDeltaEvent
from maic_cli.engine.models import ActionRecord, CodeLine, Message, MessagePart, WhiteboardElement
from maic_cli.engine.round import RoundResult
from maic_cli.engine.whiteboard import apply_action
from maic_cli.ui import live, views, whiteboard_view
from maic_cli.ui.input import make_prompt_session, open_history
from maic_cli.ui.live import LiveView
from maic_cli.ui.plain import PlainView
from maic_cli.ui.views import ScreenState, action_badge, render_message, render_screen
from maic_cli.ui.whiteboard_view import render_element, render_whiteboard
from tests.helpers import agent

AGENTS = {"teacher": agent("teacher", "teacher", "Ms. T")}


def render(renderable, width: int = 100, height: int = 30) -> str:  # type: ignore[no-untyped-def]
    console = Console(file=io.StringIO(), width=width, height=height, color_system=None, legacy_windows=False)
    console.print(renderable)
    return console.file.getvalue()  # type: ignore[attr-defined]


def state_with(classroom: Classroom) -> ScreenState:
    return ScreenState(classroom=classroom, agents=AGENTS, model="m")


def long_message(text: str = "", actions: int = 0) -> Message:
    parts = [MessagePart(kind="text", text=text)] if text else []
    for i in range(actions):
        parts.append(MessagePart(kind="action", action=ActionRecord(action_id=f"a{i}", name="wb_delete",
                                                                    params={"elementId": f"el_{i}"})))
    return Message(role="agent", agent_id="teacher", agent_name="Ms. T", parts=parts)


# -- a refresh costs the screen, not the reply ------------------------------------
def test_a_megabyte_reply_is_cut_to_its_visible_tail(monkeypatch: pytest.MonkeyPatch) -> None:
    cleaned: list[int] = []
    real_clean = untrusted.clean
    monkeypatch.setattr(views, "clean", lambda text: cleaned.append(len(text)) or real_clean(text))
    classroom = Classroom()
    classroom.add_learner_message("an old question that is off screen")
    classroom.messages.append(long_message("word " * 200_000 + "THE_END"))
    out = render(render_screen(state_with(classroom), 30), width=100, height=30)
    assert "THE_END" in out
    assert "an old question" not in out
    assert sum(cleaned) <= 30 * 100  # the characters the conversation column can hold, not a megabyte


def test_a_cut_message_says_so_and_keeps_its_tail() -> None:
    message = long_message("a" * 1_000 + " the tail", actions=3)
    text = render_message(message, AGENTS, "Ana", budget=60)
    assert "Ms. T\n… a" in text.plain and text.plain.endswith("⟨erased el_2⟩")
    assert " the tail ⟨erased el_0⟩ ⟨erased el_1⟩" in text.plain and len(text.plain) < 90
    assert render_message(message, AGENTS, "Ana").plain.count("a") >= 1_000  # no budget: all of it


def test_thousands_of_badges_build_only_what_fits(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real_badge = views.action_badge
    monkeypatch.setattr(views, "action_badge", lambda name, params: calls.append(name) or real_badge(name, params))
    classroom = Classroom()
    classroom.messages.extend(long_message(f"message {i}") for i in range(5_000))
    classroom.messages.append(long_message("intro", actions=20_000))
    out = render(render_screen(state_with(classroom), 30), width=100, height=30)
    assert "erased el_19999" in out and "message 4999" not in out
    assert len(calls) <= 30 * 100 // len("⟨erased el_1⟩")


def test_board_renders_only_visible_elements_once_until_they_change(monkeypatch: pytest.MonkeyPatch) -> None:
    rendered: list[str] = []
    real = whiteboard_view.render_element
    monkeypatch.setattr(whiteboard_view, "render_element", lambda e, rows: rendered.append(e.id) or real(e, rows))
    classroom = Classroom()
    store = classroom.store
    for i in range(3_000):
        apply_action(store, "wb_draw_text", {"content": f"note {i}"})
    apply_action(store, "wb_draw_code", {"elementId": "code", "code": "x = 1"})
    state = state_with(classroom)
    first = render(render_screen(state, 30), width=120, height=30)
    assert "note 2999" in first and "x = 1" in first and "earlier elements" in first
    assert 0 < len(rendered) <= 8
    rendered.clear()
    render(render_screen(state, 30), width=120, height=30)
    assert rendered == []  # nothing changed: every element came from the cache
    apply_action(store, "wb_edit_code", {"elementId": "code", "lineId": "L1", "content": "x = 2"})
    assert "x = 2" in render(render_screen(state, 30), width=120, height=30)
    assert rendered == ["code"]


def test_a_huge_element_is_cut_to_what_a_panel_shows() -> None:
    rows = [["n", "sq"]] + [[i, i * i] for i in range(100_000)]
    table = WhiteboardElement(id="t", kind="table", params={"data": rows})
    lines = [CodeLine(id=f"L{i}", text="y" * 10_000) for i in range(9_000)]
    code = WhiteboardElement(id="c", kind="code", params={"code": "y"}, lines=lines)
    for element in (table, code):
        out = render(render_element(element, 20), width=80, height=200)
        assert len(out.splitlines()) <= 26


def test_a_burst_of_events_renders_at_most_once_per_frame(monkeypatch: pytest.MonkeyPatch) -> None:
    frames: list[int] = []
    real = views.render_screen
    monkeypatch.setattr(live, "render_screen", lambda state, height: frames.append(1) or real(state, height))
    classroom = Classroom()
    view = LiveView(Console(file=io.StringIO(), width=100, height=30, color_system=None), state_with(classroom),
                    fps=0.001)  # the whole burst falls within one frame
    view.round_started()
    frames.clear()
    for i in range(1_000):
        event = ActionEvent(action_id=f"a{i}", action_name="wb_draw_text", params={"content": "x"}, agent_id="t",
                            message_id="m")
        classroom.apply(event)
        view.on_event(event)
    assert frames == []
    view.round_finished(RoundResult(reason="end"))
    assert frames == [1]  # the last frame is always drawn


# -- the live view says what went wrong ---------------------------------------------
def test_the_live_view_shows_the_reason_a_round_failed() -> None:
    out = io.StringIO()
    view = LiveView(Console(file=out, width=100, height=30, color_system=None), state_with(Classroom()))
    message = "scripted: rate limited (HTTP 429) \x1b]0;pwned\x07retry later\nTraceback line two"
    view.round_started()
    view.on_event(ErrorEvent(message=message))
    view.round_finished(RoundResult(reason="error", error=message))
    printed = out.getvalue()
    assert "stopped by an error: scripted: rate limited (HTTP 429) retry later" in printed
    assert "maic: error: scripted: rate limited (HTTP 429) retry later" in printed
    assert "pwned" not in printed and "\x1b]" not in printed and "line two" not in printed


# -- the terminal stays sane whatever happens in a round --------------------------------
def test_an_exception_inside_a_round_leaves_the_terminal_sane() -> None:
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=100, height=30, color_system=None)
    view = LiveView(console, state_with(Classroom()))
    stdout = sys.stdout

    async def main() -> set[asyncio.Task[object]]:
        with pytest.raises(OSError, match="disk full"), view.round():
            assert sys.stdout is not stdout  # Live redirects output while it runs
            raise OSError("disk full")
        await asyncio.sleep(0)
        return {t for t in asyncio.all_tasks() if t is not asyncio.current_task() and not t.done()}

    assert asyncio.run(main()) == set()  # the ticker was cancelled
    assert sys.stdout is stdout
    assert out.getvalue().endswith("\x1b[?25h")  # the cursor is shown again
    with Live(console=console):  # no live display is left active on the console
        pass
    view.round_finished()
    view.round_finished(RoundResult(reason="end"))  # idempotent: nothing left to stop


def test_a_plain_round_ends_its_open_line_on_an_exception() -> None:
    out = io.StringIO()
    view = PlainView(out, io.StringIO(), AGENTS)
    with pytest.raises(RuntimeError), view.round():
        view.on_event(AgentStartEvent(message_id="m", agent_id="teacher", agent_name="Ms. T", avatar="", color=""))
        view.on_event(TextDeltaEvent(message_id="m", content="half a sentence"))
        raise RuntimeError("boom")
    assert out.getvalue() == "Ms. T: half a sentence\n"


# -- an unusable history file --------------------------------------------------------
def test_a_history_path_that_is_a_directory_falls_back_to_memory(tmp_path: Path) -> None:
    notes: list[str] = []
    folder = tmp_path / "history"
    folder.mkdir()
    assert isinstance(open_history(folder, notes.append), InMemoryHistory)
    assert len(notes) == 1 and str(folder) in notes[0] and "\n" not in notes[0]

    async def ask() -> str:
        with create_pipe_input() as pipe:
            session = make_prompt_session(folder, ["teacher"], commands={"/help": "show the commands"},
                                          input=pipe, output=DummyOutput(), note=notes.append)
            pipe.send_text("hello\r")
            return await session.prompt_async("you › ")

    assert asyncio.run(ask()) == "hello"
    assert folder.is_dir()


# -- views never trust an element ----------------------------------------------------------------
JUNK = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(10**400), max_value=10**400)
    | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=20)
    | st.sampled_from(["\ud800", "\x1b]52;c;aGk=\x07", "\u202e", "a\x00b", "[bold]x[/]", "é😀"]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=20)
KEYS = ["content", "latex", "labels", "series", "values", "data", "title", "chartType", "language", "fileName",
        "shape", "label", "startX", "startY", "endX", "endY", "arrow", "style", "elementId", "name"]
PARAMS = st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=4), JUNK | st.lists(JUNK, max_size=3), max_size=8)
KINDS = st.sampled_from(["text", "shape", "chart", "latex", "table", "line", "code"])
ACTIONS = st.sampled_from(["spotlight", "wb_draw_line", "wb_delete", "wb_draw_shape", "wb_open"]) | st.text(max_size=8)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kind=KINDS, params=PARAMS, name=ACTIONS, element_id=st.text(max_size=10))
def test_any_element_and_any_params_render_without_raising(kind: str, params: dict, name: str,
                                                            element_id: str) -> None:
    element = WhiteboardElement.model_construct(id=element_id, kind=kind, params=params, agent_id=None,
                                                lines=[CodeLine(id="L1", text="x")], next_line=2)
    classroom = Classroom()
    classroom.store.whiteboard.append(element)
    record = ActionRecord.model_construct(action_id="a", name=name, params=params)
    classroom.messages.append(Message(role="agent", agent_id="teacher", agent_name="Ms. T",
                                      parts=[MessagePart.model_construct(kind="action", text="", action=record)]))
    out = render(render_screen(state_with(classroom), 24), width=90, height=24)
    assert "Whiteboard" in out
    render(render_whiteboard(classroom.store, limit=1000), width=60, height=200)
    badge = action_badge(name, params)
    assert "\x1b" not in badge and len(badge) < 200
    plain = io.StringIO()
    PlainView(plain, io.StringIO(), AGENTS).on_event(ActionEvent.model_construct(
        type="action", action_id="a", action_name=name, params=params, agent_id="t", message_id="m"))
    assert plain.getvalue().startswith(" [") or plain.getvalue().startswith("[")


def test_deeply_nested_huge_and_non_finite_params_render() -> None:
    deep: object = "bottom"
    for _ in range(50_000):
        deep = [deep]
    params = {"content": deep, "labels": deep, "series": [{"name": deep, "values": [math.nan, math.inf, 10**5000,
                                                                                    "7", deep]}],
              "data": [[deep, 10**5000], [math.nan, -math.inf]], "startX": 10**5000, "label": {"x": deep},
              "elementId": deep, "shape": deep}
    for kind in ("text", "chart", "table", "line", "shape", "latex"):
        element = WhiteboardElement.model_construct(id="x", kind=kind, params=params, agent_id=None, lines=[],
                                                    next_line=1)
        render(render_element(element), width=80, height=100)
    for junk in ([1, 2], None, "text"):  # not even a mapping
        for kind in ("code", "chart"):
            element = WhiteboardElement.model_construct(id="y", kind=kind, params=junk, agent_id=None, lines=[],
                                                        next_line=1)
            assert "y" in render(render_element(element), width=80, height=100)
        assert action_badge("wb_delete", junk) == "erased"
    assert action_badge("wb_delete", params) == "erased …"
    message = render_message(long_message(actions=0), AGENTS, "Ana")
    assert "Ms. T" in render(message)
