"""Slides in the HTML pages look like slides: the built-in lessons' slides opened in Chromium show no element id
or kind in their text, their formulas as MathML the browser lays out, the spotlight and laser where the script
points; a hostile lesson's text stays text (no script runs, no handler, no link).  And the one LaTeX→MathML
conversion (maic_cli/mathml.py) never lets markup through, whatever the source."""

from __future__ import annotations

import html
import json
import re
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from maic_cli.engine.models import Slide, SlideElement
from maic_cli.lessons.lesson import SlideScene
from maic_cli.store.lessons import load_lesson
from maic_cli.testing.browser import open_page
from maic_cli.ui.mathml import ATTRIBUTES, ELEMENTS, latex_to_mathml, tidy_formula
from maic_cli.ui.slide_html import SLIDE_CSS, pointer_text, render_band_html, render_slide_html
from tests.test_html_render import chromium  # noqa: F401 - the fixture: skip where no Chromium runs

ROOT = Path(__file__).resolve().parent.parent
LESSONS = sorted((ROOT / "lessons").glob("*.yaml"))
INSPECT = """JSON.stringify({
  text: document.body.innerText,
  maths: [...document.querySelectorAll('.mformula math')].map(m => m.getBoundingClientRect().width),
  spot: [...document.querySelectorAll('.mel.spot')].map(e => getComputedStyle(e).backgroundColor),
  laser: [...document.querySelectorAll('.mel.laser')].map(e => getComputedStyle(e, '::before').backgroundColor),
  scripts: document.scripts.length,
  handlers: [...document.querySelectorAll('*')].filter(e => [...e.attributes].some(a => /^on/i.test(a.name))).length,
  links: document.querySelectorAll('[href],[src],[xlink\\\\:href]').length,
  pwned: window.pwned === undefined ? null : window.pwned,
})"""


def page(body: str) -> str:
    return (f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>slides</title>"
            f"<style>{SLIDE_CSS}</style></head><body style='max-width:60rem;margin:auto'>{body}</body></html>")


def lesson_slides() -> list[tuple[Slide, str, str]]:
    """Every slide of the built-in lessons, its first element spotlit and its last under the laser."""
    out = []
    for path in LESSONS:
        for scene in load_lesson(path).scenes:
            if isinstance(scene, SlideScene):
                slide = Slide(id=scene.id, title=scene.title, elements=scene.elements)
                out.append((slide, scene.elements[0].id, scene.elements[-1].id))
    return out


@pytest.mark.usefixtures("chromium")
def test_the_built_in_lessons_slides_show_no_id_or_kind_and_typeset_their_formulas(tmp_path: Path) -> None:
    slides = lesson_slides()
    body = "".join(render_slide_html(slide, number=n, total=len(slides), spotlight=spot, laser=laser)
                   for n, (slide, spot, laser) in enumerate(slides, 1))
    body += render_band_html("Ms. Rivera", "We write that as three quarters.", "#4f9dde")
    path = tmp_path / "slides.html"
    path.write_text(page(body), encoding="utf-8")
    visit = open_page(path, INSPECT)
    assert visit.errors == [] and visit.requests == [path.resolve().as_uri()]
    seen = json.loads(visit.value)
    text = seen["text"]
    words = " ".join(e.plain_text() + " " + s.title for s, _, _ in slides for e in s.elements).lower()
    for slide, _, _ in slides:
        assert slide.title in text
        for element in slide.elements:
            assert f"[{element.id}]" not in text and f"({element.type})" not in text
            if not re.search(rf"\b{re.escape(element.id.lower())}\b", words):  # an id no slide says as a word
                assert not re.search(rf"\b{re.escape(element.id)}\b", text), element.id
    assert not re.search(r"\bimage:|\[(text|formula|bullets|image|table|code)\]", text)
    assert "A pizza cut into 4 equal slices, 3 of them shaded" in text  # the picture's caption
    assert "Ms. Rivera" in text and "We write that as three quarters." in text
    formulas = sum(e.type == "formula" for slide, _, _ in slides for e in slide.elements)
    assert len(seen["maths"]) == formulas >= 4 and all(width > 20 for width in seen["maths"])  # laid out as maths
    assert "1/2 = 2/4 = 4/8" not in text and "C6H12O6" not in text  # no formula's source is shown as text
    assert seen["spot"] and set(seen["spot"]) == {"rgb(255, 248, 197)"}
    assert seen["laser"] and set(seen["laser"]) == {"rgb(207, 34, 46)"}
    pixels = visit.screenshot
    assert len(pixels) > 10_000


HOSTILE = "<script>window.pwned=1</script><img src=x onerror=\"window.pwned=2\"> javascript:window.pwned=3"


@pytest.mark.usefixtures("chromium")
def test_a_hostile_lessons_text_is_shown_as_text_and_nothing_runs(tmp_path: Path) -> None:
    elements = [SlideElement(id=f"x\" onmouseover=\"window.pwned=4\" data-{kind}", type=kind,
                             content=HOSTILE, items=[HOSTILE, "<a href='javascript:window.pwned=5'>go</a>"],
                             rows=[[HOSTILE, "<b onclick=window.pwned=6>b</b>"], ["x", "y"]],
                             language="py\"><script>window.pwned=7</script>")
                for kind in ("text", "bullets", "formula", "table", "code", "image", "video", "chart", "shape")]
    elements.append(SlideElement(id="tex", type="formula", content=r"\text{<script>window.pwned=8</script>}"
                                 r" \href{javascript:window.pwned=9}{x} \style{background:url(x)}{y}"))
    slide = Slide(id="s\"><script>window.pwned=10</script>", title=HOSTILE, elements=elements)
    body = render_slide_html(slide, number=1, total=1, spotlight=elements[0].id, laser=elements[1].id)
    body += render_band_html(HOSTILE, HOSTILE, "red;background:url(javascript:window.pwned=11)")
    body += f"<p>{html.escape(pointer_text('spotlight', elements[0].id, [slide]))}</p>"  # text, escaped by a page
    path = tmp_path / "hostile.html"
    path.write_text(page(body), encoding="utf-8")
    visit = open_page(path, INSPECT)
    seen = json.loads(visit.value)
    assert seen["pwned"] is None and seen["scripts"] == 0 and seen["handlers"] == 0 and seen["links"] == 0
    assert visit.requests == [path.resolve().as_uri()]
    assert "<script>window.pwned=1</script>" in seen["text"]  # shown as the words it is
    assert "window.pwned=8" in seen["text"]  # LaTeX text with markup in it: text too


def test_the_slide_functions_are_pure_and_mark_by_id_without_showing_it() -> None:
    slide = Slide(id="s", title="Forces", elements=[SlideElement(id="law", type="formula", content="F = m a"),
                                                    SlideElement(id="cart", type="image", content="A cart")])
    once = render_slide_html(slide, number=2, total=3, spotlight="law", laser="cart")
    assert once == render_slide_html(slide, number=2, total=3, spotlight="law", laser="cart")
    assert "class='mel mformula spot' data-el=\"law\"" in once and "class='mel mimage laser' data-el=\"cart\"" in once
    assert ">law<" not in once and ">cart<" not in once
    assert pointer_text("laser", "cart", [slide]) == "→ laser on the picture “A cart”"
    assert pointer_text("spotlight", "gone", [slide]) == "→ spotlight on the slide"


def test_plain_formulas_are_tidied_into_the_latex_they_mean() -> None:
    assert tidy_formula("3/4") == r"\frac{3}{4}"
    assert tidy_formula("6 CO2 -> C6H12O6") == (r"6 \mathrm{C}\mathrm{O}_{2} \rightarrow "
                                                r"\mathrm{C}_{6}\mathrm{H}_{12}\mathrm{O}_{6}")
    assert tidy_formula(r"\frac{a}{b} = x^2") == r"\frac{a}{b} = x^2"  # LaTeX stays as written
    chemistry = latex_to_mathml(tidy_formula("6 H2O + light"))
    assert "<mtext>H</mtext>" in chemistry and "<mtext>light</mtext>" in chemistry  # upright, not variables


def _check_mathml(out: str) -> None:
    root = ElementTree.fromstring(out)
    for node in root.iter():
        tag = node.tag.split("}", 1)[-1]
        assert tag in ELEMENTS, tag
        assert set(node.attrib) <= ATTRIBUTES | {"xmlns"}, node.attrib


@settings(max_examples=300, deadline=2000)
@given(st.lists(st.sampled_from([
    *"\\{}^_<>&\"' $abcxyz019+-=/", r"\frac", r"\text", r"\href", r"\style", r"\color", r"\sqrt", r"\mathrm",
    r"\begin{matrix}", r"\end{matrix}", "<script>", "</mtext>", "javascript:", " onerror=", r"\\", "&amp;", "<!--",
    "]]>"]), max_size=40).map("".join) | st.text(max_size=80))
def test_any_latex_becomes_well_formed_mathml_of_known_elements_only(source: str) -> None:
    out = latex_to_mathml(source)
    assert out.startswith("<math xmlns=\"http://www.w3.org/1998/Math/MathML\"")
    _check_mathml(out)
    assert "<script" not in out  # markup in the source is text (escaped); attributes are checked above
    assert not re.search(r"<[^>]*\son\w+=", out)


def test_a_huge_or_deep_formula_is_its_text_in_bounded_time() -> None:
    import time

    for source in ("{" * 5000 + "x" + "}" * 5000, r"\frac{1}{2}" * 3000, "x^" * 20000):
        started = time.monotonic()
        out = latex_to_mathml(source)
        assert time.monotonic() - started < 3.0
        _check_mathml(out)
