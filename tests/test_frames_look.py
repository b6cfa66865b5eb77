"""A video frame looks like a slide: read back what the renderer drew (its texts, its typeset formulas) and the
picture's pixels — no element id or kind anywhere, the formula typeset, the speaker's band in the agent's colour."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from maic_cli.engine.models import Slide, SlideElement, StoreState
from maic_cli.media import typeset
from maic_cli.media.frames import BAND, HEIGHT, LASER, SPOT_FILL, WIDTH, Speaking, draw, rgb
from maic_cli.media.script import board_of

pytest.importorskip("PIL")
ROOT = Path(__file__).resolve().parent.parent
IDS = ("zqidea", "zqformula", "zqbullets", "zqpizza", "zqtable", "zqcode")
SLIDE = Slide(id="zqslide", title="What a fraction says", elements=[
    SlideElement(id="zqidea", content="A fraction names some of the equal parts of one whole."),
    SlideElement(id="zqformula", type="formula", content="3/4"),
    SlideElement(id="zqbullets", type="bullets", items=["The bottom number says how many parts", "The top one"]),
    SlideElement(id="zqpizza", type="image", content="A pizza cut into 4 equal slices, 3 of them shaded"),
    SlideElement(id="zqtable", type="table", rows=[["Fraction", "Cut into"], ["1/2", "2 equal parts"]]),
    SlideElement(id="zqcode", type="code", language="python", content="for n in range(3):\n    print(n)"),
])
RIVERA = Speaking(name="Ms. Rivera", text="We write that as three quarters.", color="#4f9dde", speaker="teacher")


def board(spotlight: str | None = None, laser: str | None = None):  # type: ignore[no-untyped-def]
    return board_of(StoreState(slides=[SLIDE, SLIDE], spotlight=spotlight, laser=laser), "Fractions")


def colour_count(image, colour: tuple[int, int, int], box: tuple[int, int, int, int] | None = None) -> int:  # type: ignore[no-untyped-def]
    region = image.crop(box) if box else image
    return sum(count for count, found in region.getcolors(WIDTH * HEIGHT) if found[:3] == colour)


def test_a_frame_shows_no_element_id_or_kind_and_sets_each_element_as_a_slide_does() -> None:
    drawn = draw(board(spotlight="zqformula", laser="zqpizza"), heading="Fractions", speaking=RIVERA)
    text = "\n".join(drawn.texts)
    for element_id in IDS:
        assert element_id not in text
    assert not re.search(r"\[(text|formula|bullets|image|table|code)\]|image:|\(formula\)", text), text
    assert "What a fraction says" in drawn.texts  # the title, set as a title
    assert "1 / 2" in drawn.texts  # the slide's place
    assert any(line.startswith("A pizza cut into 4") for line in drawn.texts)  # the picture's caption
    assert "Cut into" in drawn.texts and "2 equal parts" in drawn.texts  # a table, cell by cell
    assert "for n in range(3):" in drawn.texts and "python" in drawn.texts  # code, its language named
    assert "The bottom number says how many parts" in drawn.texts  # a bullet, without a typed marker
    assert not any(line.lstrip().startswith(("•", "-", "*")) for line in drawn.texts)


def test_the_formula_is_typeset_as_a_picture_not_written_as_its_source() -> None:
    pytest.importorskip("matplotlib")
    drawn = draw(board(), heading="Fractions")
    assert drawn.formulas == ["3/4"]
    assert "3/4" not in drawn.texts
    image = typeset.formula_image("3/4")
    assert image is not None and image.height > image.width  # stacked: 3 over 4, taller than wide
    chemistry = typeset.formula_image("6 CO2 + 6 H2O -> C6H12O6 + 6 O2")
    assert chemistry is not None and chemistry.width > 4 * chemistry.height


def test_without_matplotlib_the_formula_is_readable_text(monkeypatch: pytest.MonkeyPatch) -> None:
    typeset.cache_clear()
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # importing it raises ImportError
    try:
        drawn = draw(board(), heading="Fractions")
    finally:
        typeset.cache_clear()
    assert drawn.formulas == [] and "3/4" in drawn.texts


def test_the_band_names_the_speaker_in_the_agents_colour_and_says_the_line() -> None:
    drawn = draw(board(), heading="Fractions", speaking=RIVERA)
    assert "Ms. Rivera" in drawn.texts and "We write that as three quarters." in drawn.texts
    image = drawn.image
    band = (0, HEIGHT - BAND, WIDTH, HEIGHT)
    colour = rgb("#4f9dde")
    assert colour_count(image, colour, band) > 2000  # the stripe and the disc
    assert colour_count(image, colour, (0, 0, WIDTH, HEIGHT - BAND)) == 0  # nowhere on the slide
    other = draw(board(), heading="Fractions", speaking=Speaking("Leo", "Unfair.", "#f0883e", "class_clown")).image
    assert colour_count(other, colour, band) == 0 and colour_count(other, rgb("#f0883e"), band) > 2000
    # a named colour, an unreadable one, the learner: each a colour of its own, never an error
    assert rgb("cyan") == (0, 255, 255) and rgb("bright_magenta") == (255, 0, 255)
    assert rgb("no such colour", "sam") == rgb("", "sam")
    quiet = draw(board(), heading="Fractions").image
    assert colour_count(quiet, colour, band) == 0 and "Fractions" in draw(board(), heading="Fractions").texts


def test_the_spotlight_and_the_laser_are_drawn_as_on_the_terminal() -> None:
    plain = draw(board()).image
    spot = draw(board(spotlight="zqbullets")).image
    laser = draw(board(laser="zqidea")).image
    assert colour_count(plain, rgb(SPOT_FILL)) == 0 and colour_count(plain, rgb(LASER)) == 0
    assert colour_count(spot, rgb(SPOT_FILL)) > 5000 and colour_count(spot, rgb(LASER)) == 0
    assert colour_count(laser, rgb(LASER)) > 50 and colour_count(laser, rgb(SPOT_FILL)) == 0


def test_hostile_text_is_drawn_as_text_and_ids_stay_hidden() -> None:
    hostile = Slide(id="s", title="\x1b[31mred\x1b[0m <script>alert(1)</script>", elements=[
        SlideElement(id="javascript:alert(1)", content="<img src=x onerror=alert(1)>"),
        SlideElement(id="f", type="formula", content=r"\frac{" * 50),
    ])
    drawn = draw(board_of(StoreState(slides=[hostile], spotlight="f"), "t"),
                 speaking=Speaking("00:00:00,000 --> 99:00:00,000", "\x07hi", "javascript:x", "x"))
    text = "\n".join(drawn.texts)
    assert "\x1b" not in text and "\x07" not in text and "javascript:alert(1)" not in text
    assert "<img src=x onerror=alert(1)>" in text  # shown as the words it is, never run: a picture has no markup


def said_words(value: object) -> list[str]:
    """Every text of a lesson a frame may show (not its ids, pointers or speakers)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        skip = {"id", "spotlight", "laser", "by", "initiator", "agents", "type"}
        return [text for key, item in value.items() if key not in skip for text in said_words(item)]
    if isinstance(value, list):
        return [text for item in value for text in said_words(item)]
    return []


@pytest.mark.parametrize("name", ["fractions", "python_loops"])
def test_every_frame_of_a_built_in_lesson_is_a_slide_with_its_speaker(name: str) -> None:
    from maic_cli.media.encode import frames_of
    from maic_cli.media.script import Said, from_lesson
    from maic_cli.media.timeline import lay_out
    from maic_cli.store.lessons import load_lesson
    from maic_cli.store.personas import DEFAULT_CLASS, load_registry

    lesson = load_lesson(ROOT / "lessons" / f"{name}.yaml")
    registry = load_registry([])
    agents = registry.require(lesson.agents or [i for i in DEFAULT_CLASS if i in registry.agents])
    colours = {agent.id: rgb(agent.color) for agent in agents}
    items = from_lesson(lesson, agents)
    shots = frames_of(lay_out(items, [1.0] * sum(isinstance(item, Said) for item in items)))
    ids = {e.id for scene in lesson.scenes for e in getattr(scene, "elements", [])}
    words = " ".join(said_words(lesson.model_dump())).lower()
    hidden = {i for i in ids if not re.search(rf"\b{re.escape(i.lower())}\b", words)}  # ids the lesson never says
    assert len(hidden) >= 3  # enough ids the lesson never says (its faq answers say more words than its slides)
    spoken = 0
    for _, _, shown_board, speaking in shots[::3]:
        drawn = draw(shown_board, heading=lesson.title, speaking=speaking)
        text = "\n".join(drawn.texts)
        assert not any(re.search(rf"\b{re.escape(i)}\b", text) for i in hidden), text
        if speaking is not None:
            spoken += 1
            assert speaking.name in drawn.texts and speaking.text.split()[0] in text
            colour = colours.get(speaking.speaker)
            if colour is not None:
                assert colour_count(drawn.image, colour, (0, HEIGHT - BAND, WIDTH, HEIGHT - BAND + 6)) > WIDTH
    assert spoken > 10
