"""The slide panel, rendered at 80 and 120 columns and read as a learner sees it: every element by id
and drawn by type, the spotlight and laser moving as events arrive, long slides bounded around what is
pointed at, untrusted text shown literally."""

from __future__ import annotations

import io

import pytest
from rich.console import Console
from rich.layout import Layout

from maic_cli.engine.classroom import Classroom
from maic_cli.engine.events import SceneEvent
from maic_cli.engine.models import Slide, SlideElement, StoreState
from maic_cli.store.lessons import load_lesson
from maic_cli.ui.live import LiveView
from maic_cli.ui.plain import PlainView
from maic_cli.ui.slide_view import window
from maic_cli.ui.views import ScreenState, render_screen
from maic_cli.ui.whiteboard_view import render_slide
from tests.helpers import agent
from tests.lesson_transcript import LESSONS, lesson_events, photosynthesis, pointer, quiz_answers

WIDTHS = [80, 120]
AGENTS = {a.id: a for a in (agent("teacher", "teacher", "Ms. T"), agent("curious_student", "student", "Mia"))}


def screen(renderable: object, width: int, height: int | None = None, styles: bool = False) -> str:
    console = Console(width=width, height=height or 200, record=True, file=io.StringIO(), color_system="truecolor")
    console.print(renderable)
    return console.export_text(styles=styles)


def lesson_class(path: str = "photosynthesis.yaml") -> Classroom:
    classroom = Classroom()
    lesson = load_lesson(LESSONS / path)
    for event in lesson_events(lesson)[:1]:
        classroom.apply(event)
    return classroom


def line_with(text: str, out: str) -> str:
    return next(line for line in out.splitlines() if text in line)


@pytest.mark.parametrize("width", WIDTHS)
def test_every_element_is_shown_by_id_and_drawn_by_type(width: int) -> None:
    store = lesson_class().store
    out = screen(render_slide(store), width)
    assert "Slide 1/3: What a plant needs" in out
    for element_id in ("[question]", "[inputs]", "[leaf]"):
        assert element_id in out
    bullets = [line for line in out.splitlines() if "•" in line]  # one line per item
    assert [b.split("•")[1].split("│")[0].strip() for b in bullets] == [
        "Light from the sun", "Water from the roots", "Carbon dioxide from the air"]
    assert "[image] A green leaf" in out  # an image is its alt text, marked as an image
    store.current_slide = 1
    out = screen(render_slide(store), width)
    assert "Slide 2/3: The overall reaction" in out
    assert "carbon dioxide" in line_with("glucose (sugar)", out)  # a table row stays a row
    assert "┌" in out and "In" in line_with("Out", out)


@pytest.mark.parametrize("width", WIDTHS)
def test_code_is_shown_line_by_line_with_its_language(width: int) -> None:
    store = lesson_class("python_loops.yaml").store
    out = screen(render_slide(store), width)
    assert "code · python" in out
    assert "for fruit in fruits:" in out
    assert line_with('print("I like", fruit)', out).index("print") > line_with("for fruit", out).index("for")
    store.current_slide = 1
    out = screen(render_slide(store), width)
    assert "total before" in line_with("total after", out) and "10" in line_with("│ 4", out)


@pytest.mark.parametrize("width", WIDTHS)
def test_spotlight_and_laser_move_as_events_arrive(width: int) -> None:
    classroom = lesson_class()
    classroom.apply(pointer("spotlight", "question"))
    out = screen(render_slide(classroom.store), width)
    assert line_with("[question]", out).lstrip("│ ").startswith("▶")
    assert "▶" not in line_with("[inputs]", out)
    classroom.apply(pointer("spotlight", "inputs"))
    classroom.apply(pointer("laser", "leaf"))
    out = screen(render_slide(classroom.store), width)
    assert "▶" not in line_with("[question]", out)
    assert line_with("[inputs]", out).lstrip("│ ").startswith("▶")
    assert line_with("[leaf]", out).lstrip("│ ").startswith("✦")
    for item in ("Water from the roots", "Carbon dioxide from the air"):  # a bar down the whole element
        assert line_with(item, out).lstrip("│ ").startswith("┃")
    assert "┃" not in line_with("Where does a tree", out)
    styled = screen(render_slide(classroom.store), width, styles=True)
    assert "\x1b[1;7m" in line_with("Light from the sun", styled)  # the spotlighted element is reversed
    assert "\x1b[7m" not in line_with("Where does a tree", styled) and "\x1b[1;7m" not in line_with(
        "Where does a tree", styled)
    classroom.apply(SceneEvent(index=1, scene_id="equation", kind="slide", title="The overall reaction", slide=1))
    out = screen(render_slide(classroom.store), width)
    assert "Slide 2/3" in out and "▶" not in out and "✦" not in out  # a new scene clears the pointers


@pytest.mark.parametrize("width", WIDTHS)
def test_untrusted_content_is_shown_literally_and_without_control_codes(width: int) -> None:
    store = StoreState(slides=[Slide(id="s", title="[bold]T[/bold]\x1b]0;pwn\x07", elements=[
        SlideElement(id="[red]x[/red]", content="[bold red]not bold[/] \x1b[2J"),
        SlideElement(id="b", type="bullets", items=["[link=http://x]y[/link]"]),
        SlideElement(id="t", type="table", rows=[["[i]h[/i]"], ["\x1b[31mcell"]]),
        SlideElement(id="c", type="code", language="[x]", content="print('[b]hi[/b]')\x1b]8;;http://x\x07")])],
        spotlight="[red]x[/red]")
    out = screen(render_slide(store), width)
    for literal in ("[bold]T[/bold]", "[red]x[/red]", "[bold red]not bold[/]", "[link=http://x]y[/link]",
                    "[i]h[/i]", "print('[b]hi[/b]')"):
        assert literal in out, literal
    assert "\x1b" not in out and "pwn" not in out and "\x07" not in out


@pytest.mark.parametrize("width", WIDTHS)
def test_nothing_is_cut_wrongly(width: int) -> None:
    store = lesson_class().store
    store.current_slide = 1
    out = screen(render_slide(store), width)
    lines = out.rstrip("\n").splitlines()
    assert all(len(line) == width for line in lines)  # every line is the panel's full width
    assert all(line[0] in "╭│╰" and line[-1] in "╮│╯" for line in lines)  # both borders on every line
    text = " ".join(line.strip("│ ") for line in lines)
    assert "It happens in the chloroplasts" in " ".join(text.split())


@pytest.mark.parametrize(("width", "height"), [(80, 12), (120, 9)])
def test_a_long_slide_shows_the_window_around_what_is_pointed_at(width: int, height: int) -> None:
    elements = [SlideElement(id=f"e{n}", content=f"point number {n}") for n in range(30)]
    store = StoreState(slides=[Slide(id="s", title="Long", elements=elements)], spotlight="e20")
    out = screen(Layout(render_slide(store), size=height), width, height=height)
    lines = out.rstrip("\n").splitlines()
    assert len(lines) == height
    assert "▶ [e20]" in out and "point number 20" in out
    assert "lines above" in out and "lines below" in out
    assert "point number 0 " not in out
    store.spotlight = None
    out = screen(Layout(render_slide(store), size=height), width, height=height)
    assert "point number 0" in out and "lines above" not in out and "lines below" in out


def test_the_window_keeps_the_focus_and_room_for_its_notes() -> None:
    assert window(5, 10, 3) == (0, 5)
    assert window(30, 10, 0) == (0, 9)  # a note below
    assert window(30, 10, 29) == (21, 30)  # a note above
    assert window(30, 10, 15) == (15, 23)  # notes above and below
    for total, height, focus in [(30, 10, f) for f in range(30)] + [(12, 3, 11), (50, 7, 1)]:
        start, end = window(total, height, focus)
        assert start <= focus < end and (end - start) + (start > 0) + (end < total) <= height


@pytest.mark.parametrize(("width", "height"), [(80, 30), (120, 40)])
def test_the_chat_screen_shows_the_slide_and_the_lesson_in_the_conversation(width: int, height: int) -> None:
    lesson = photosynthesis()
    state = ScreenState(classroom=Classroom(), agents=AGENTS, model="scripted")
    view = LiveView(Console(file=io.StringIO(), width=width, height=height), state)
    view.round_started()
    try:
        for event in [*lesson_events(lesson)[:3], *quiz_answers()]:
            state.classroom.apply(event)
            view.on_event(event)
    finally:
        view.round_finished()
    out = screen(render_screen(state, height), width, height=height)
    assert len(out.rstrip("\n").splitlines()) == height
    assert "Slide 1/3" in out and "[question]" in out and "[inputs]" in out
    assert "Scene 1/5 · slide · What a plant needs" in out
    assert "Quiz score: 5/7 · lesson total 5/7" in out
    assert "Names energy, as the rubric asks." in out


def test_between_rounds_the_live_view_prints_the_scene_and_its_slide() -> None:
    state = ScreenState(classroom=Classroom(), agents=AGENTS, model="scripted")
    console = Console(file=io.StringIO(), width=80, record=True)
    view = LiveView(console, state)
    for event in lesson_events(photosynthesis())[:2] + quiz_answers()[:1]:
        state.classroom.apply(event)
        view.on_event(event)
    out = console.export_text()
    assert "Lesson: How plants make food" in out and "── Scene 1/5 · slide · What a plant needs ──" in out
    assert "Slide 1/3: What a plant needs" in out and "[inputs]" in out
    assert "Answer: C · right · 2/2 points" in out


def test_plain_output_shows_the_lesson_line_by_line() -> None:
    out = io.StringIO()
    view = PlainView(out, io.StringIO(), AGENTS)
    for event in [*lesson_events(photosynthesis())[:3], *quiz_answers()]:
        view.on_event(event)
    lines = out.getvalue().splitlines()
    assert lines[:3] == ["== Lesson: How plants make food: photosynthesis ==",
                         "-- Scene 1/5 · slide · What a plant needs --", "Slide 1/3: What a plant needs"]
    assert "[inputs] (bullets)" in lines and "    • Water from the roots" in lines
    assert "[spotlight on question]" in lines
    assert "  C) Carbon dioxide from the air" in lines
    assert "Answer: A · wrong (the answer: A C) · 0/2 points" in lines
    assert lines[-1] == "Quiz score: 5/7 · lesson total 5/7"
