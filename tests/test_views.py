"""The chat screen's views, rendered into a fixed-size console and read as text."""

from __future__ import annotations

import io

from rich.console import Console, RenderableType

from maic_cli.engine.classroom import Classroom
from maic_cli.engine.models import ActionRecord, Message, MessagePart, Slide, SlideElement
from maic_cli.engine.whiteboard import apply_action
from maic_cli.ui.latex import latex_to_unicode
from maic_cli.ui.views import ScreenState, render_message, render_screen
from maic_cli.ui.whiteboard_view import render_slide, render_whiteboard
from maic_cli.untrusted import clean
from tests.helpers import agent

AGENTS = {a.id: a for a in (agent("teacher", "teacher", "Ms. T", avatar="👩‍🏫", color="blue"),
                            agent("mia", "student", "Mia"))}


def render(renderable: RenderableType, width: int = 100, height: int = 40) -> str:
    console = Console(file=io.StringIO(), width=width, height=height, color_system=None, legacy_windows=False)
    console.print(renderable)
    return console.file.getvalue()  # type: ignore[attr-defined]


def agent_message(agent_id: str, name: str, *parts: MessagePart, interrupted: bool = False) -> Message:
    return Message(role="agent", agent_id=agent_id, agent_name=name, parts=list(parts), interrupted=interrupted)


def text_part(text: str) -> MessagePart:
    return MessagePart(kind="text", text=text)


def test_message_shows_avatar_name_text_and_action_badges() -> None:
    classroom = Classroom()
    apply_action(classroom.store, "wb_open", {})
    message = agent_message("teacher", "Ms. T", text_part("Look: "))
    message.parts.append(MessagePart(kind="action", action=ActionRecord(action_id="a", name="wb_draw_latex",
                                                                        params={"latex": "x"})))
    message.parts.append(MessagePart(kind="action", action=ActionRecord(action_id="b", name="spotlight",
                                                                        params={"elementId": "eq_1"})))
    out = render(render_message(message, AGENTS, "Ana"))
    assert "👩‍🏫 Ms. T" in out
    assert "Look:" in out and "⟨drew formula⟩" in out and "⟨spotlight on eq_1⟩" in out


def test_untrusted_text_is_shown_literally_without_escape_sequences() -> None:
    nasty = "[bold red]shout[/bold red] \x1b[31mred\x1b[0m \x1b]0;pwned\x07title \x07bell"
    message = agent_message("mia", "Mia[/]", text_part(nasty))
    out = render(render_message(message, AGENTS, "Ana"))
    assert "[bold red]shout[/bold red]" in out
    assert "\x1b" not in out and "\x07" not in out and "pwned" not in out
    assert "red title bell" in out
    assert clean("a\r\nb\x00c\x9b2Jd") == "a\nbcd"


def test_whiteboard_panel_draws_every_kind() -> None:
    classroom = Classroom()
    store = classroom.store
    apply_action(store, "wb_draw_text", {"content": "Photosynthesis"})
    apply_action(store, "wb_draw_latex", {"latex": "\\frac{a}{b} \\times \\pi r^2 \\leq \\infty"})
    apply_action(store, "wb_draw_table", {"data": [["Planet", "Moons"], ["Mars", "2"]]})
    apply_action(store, "wb_draw_chart", {"chartType": "bar", "title": "Moons", "labels": ["Mars", "Jupiter"],
                                          "series": [{"name": "moons", "values": [2, 95]}]})
    apply_action(store, "wb_draw_line", {"startX": 0, "startY": 0, "endX": 5, "endY": 5, "arrow": True,
                                         "label": "light"})
    apply_action(store, "wb_draw_shape", {"shape": "circle", "label": "sun"})
    apply_action(store, "wb_draw_code", {"language": "python", "code": "x = 1\nprint(x)"})
    apply_action(store, "wb_edit_code", {"elementId": "wb_7", "operation": "insert_after", "lineId": "L1",
                                         "content": "y = 2"})
    out = render(render_whiteboard(store, limit=20), width=90, height=80)
    assert "Photosynthesis" in out
    assert "(a)/(b) × π r² ≤ ∞" in out
    assert "Planet" in out and "Moons" in out and "Mars" in out
    assert "Jupiter" in out and "█" * 18 + " 95" in out and "█ 2" in out
    assert "(0,0) ──▶ (5,5)  light" in out
    assert "◯ circle: sun" in out
    for line_id, code in (("L1", "x = 1"), ("L3", "y = 2"), ("L2", "print(x)")):
        assert any(line_id in row and code in row for row in out.splitlines()), (line_id, out)
    apply_action(store, "wb_delete", {"elementId": "wb_1"})
    assert "Photosynthesis" not in render(render_whiteboard(store, limit=20), width=90, height=80)
    apply_action(store, "wb_clear", {})
    assert "empty" in render(render_whiteboard(store))


def test_slide_panel_marks_spotlight_and_laser() -> None:
    classroom = Classroom()
    store = classroom.store
    store.slides = [Slide(id="s1", title="Waves", elements=[
        SlideElement(id="title", content="Waves"), SlideElement(id="eq", type="formula", content="v = f\\lambda")])]
    apply_action(store, "spotlight", {"elementId": "eq"})
    apply_action(store, "laser", {"elementId": "title"})
    panel = render_slide(store)
    assert panel is not None
    out = render(panel)
    assert "Slide 1/1: Waves" in out
    assert "▶ [eq]    v = fλ" in out  # ids padded to one width, so the bodies line up
    assert "✦ [title] Waves" in out


def test_full_screen_has_header_conversation_board_and_status() -> None:
    classroom = Classroom()
    classroom.add_learner_message("Why is the sky blue?")
    classroom.messages.append(agent_message("teacher", "Ms. T", text_part("Because of scattering.")))
    apply_action(classroom.store, "wb_draw_text", {"content": "Rayleigh"})
    classroom.usage.agent.prompt_tokens = 1200
    classroom.usage.agent.completion_tokens = 34
    state = ScreenState(classroom=classroom, agents=AGENTS, model="openai/gpt-4o-mini", mode="Q&A",
                        session_path="/tmp/s.json", learner="Ana", notice="running on the demo model")
    state.status.stage = "Mia is thinking"
    state.status.last_ttft = 0.42
    out = render(render_screen(state, 24), width=120, height=24)
    lines = out.splitlines()
    assert "maic" in lines[0] and "Ms. T, Mia" in lines[0] and "openai/gpt-4o-mini" in lines[0]
    assert "Q&A" in lines[0] and "/tmp/s.json" in lines[0]
    assert "running on the demo model" in lines[1]
    assert "🧑 Ana" in out and "Why is the sky blue?" in out and "Because of scattering." in out
    assert "Whiteboard" in out and "Rayleigh" in out
    assert "Mia is thinking" in lines[-1] and "1,234 tokens" in lines[-1] and "ttft 0.42s" in lines[-1]
    assert len(lines) == 24


def test_long_conversations_keep_the_latest_messages_visible() -> None:
    classroom = Classroom()
    for i in range(40):
        classroom.add_learner_message(f"question number {i}")
    state = ScreenState(classroom=classroom, agents=AGENTS, model="m")
    out = render(render_screen(state, 20), width=100, height=20)
    assert "question number 39" in out and "question number 0\n" not in out


def test_latex_symbols_become_unicode_and_unknown_commands_stay_as_written() -> None:
    assert latex_to_unicode("\\alpha + \\beta_2 = x^{10}") == "α + β₂ = x¹⁰"
    assert latex_to_unicode("\\unknown{x}") == "\\unknown{x}"


def test_an_unknown_persona_colour_falls_back_instead_of_crashing() -> None:
    agents = {"odd": agent("odd", "student", "Odd", color="not-a-colour[/]")}
    out = render(render_message(agent_message("odd", "Odd", text_part("hi")), agents, "Ana"))
    assert "Odd" in out and "hi" in out


def test_live_view_messages_are_cleaned_of_escape_sequences() -> None:
    from maic_cli.ui.live import LiveView

    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=100, color_system=None)
    view = LiveView(console, ScreenState(classroom=Classroom(), agents={}, model="demo", mode="Q&A",
                                         session_path="s.json", learner="Ana", max_turns=6))
    view.error("provider said \x1b]0;pwned\x07[red]no[/red]\x1b[2J")
    view.info("Leo\x1b[31m (student)")
    printed = out.getvalue()
    assert "pwned" not in printed and "\x1b]" not in printed and "\x1b[2J" not in printed
    assert "[red]no[/red]" in printed and "Leo (student)" in printed
