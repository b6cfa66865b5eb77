"""Fuzzing what ``maic lesson import`` reads: Markdown notes, hostile zips posing as decks, notes as scripts.

Whatever the file holds, the importer returns a valid lesson or raises one :class:`InputError`; it
never crashes, never runs away, and keeps no terminal control sequence."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from maic_cli.authoring.notes_script import notes_script, script_notes
from maic_cli.engine.models import SlideElement
from maic_cli.errors import InputError
from maic_cli.formats.importer import import_lesson
from maic_cli.formats.md_read import read_markdown

pytest.importorskip("markdown_it")

_PIECES = st.sampled_from([
    "# Title", "## Slide", "## Quiz", "## Quiz: check", "## Discussion: why?", "## Discussion", "### sub",
    "- item", "  - nested", "1. Question?", "   - [x] right", "   - [ ] wrong", "   Rubric: a rubric",
    "   Explanation: why", "   Points: 2", "   Points: 0", "| a | b |", "| --- | --- |", "| 1 | 2 |", "```python",
    "```", "> quote", "$$x^2$$", "![alt](p.png)", "Some words. More words!", "", "\x1b[31mred\x1b[0m", "<b>html</b>",
    "[spotlight: points]", "[laser: nope]", "- [x] 1. odd", "\\# escaped",
])
_MARKDOWN = st.one_of(st.text(max_size=400), st.lists(st.one_of(_PIECES, st.text(max_size=30)), max_size=40)
                      .map("\n".join))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(source=_MARKDOWN)
def test_any_markdown_is_a_lesson_or_one_input_error(tmp_path: Path, source: str) -> None:
    path = tmp_path / "notes.md"
    path.write_text(source, encoding="utf-8", errors="surrogatepass")
    try:
        lesson = read_markdown(path).lesson()
    except InputError as exc:
        assert "\n" not in str(exc) and str(exc).startswith(str(path))
        return
    dumped = lesson.model_dump_json()
    assert "\\u001b" not in dumped and len(lesson.scenes) >= 1


_ZIP_NAMES = st.sampled_from(["[Content_Types].xml", "ppt/presentation.xml", "_rels/.rels", "ppt/slides/slide1.xml",
                              "ppt/_rels/presentation.xml.rels", "../evil", "/abs", "ppt/notesSlides/n.xml"])
_XMLISH = st.one_of(st.binary(max_size=200), st.sampled_from([
    b"<?xml version='1.0'?><Types xmlns='http://schemas.openxmlformats.org/package/2006/content-types'/>",
    b"<!DOCTYPE x [<!ENTITY a 'aaaa'><!ENTITY b '&a;&a;&a;&a;'>]><x>&b;</x>", b"<x>" * 300, b"",
    b"<Relationships xmlns='http://schemas.openxmlformats.org/package/2006/relationships'/>"]))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(members=st.dictionaries(_ZIP_NAMES, _XMLISH, max_size=6), raw=st.binary(max_size=64))
def test_a_hostile_zip_posing_as_a_deck_is_one_input_error(tmp_path: Path, members: dict[str, bytes],
                                                            raw: bytes) -> None:
    pytest.importorskip("pptx")
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    for number, data in enumerate((out.getvalue(), raw, out.getvalue()[:len(out.getvalue()) // 2])):
        deck = tmp_path / f"deck{number}.pptx"
        deck.write_bytes(data)
        try:
            import_lesson(deck)
        except InputError as exc:
            assert "\n" not in str(exc)


_ELEMENTS = [SlideElement(id="points", type="bullets", items=["light from the sun", "water from roots"]),
             SlideElement(id="table", type="table", rows=[["in", "out"], ["water", "oxygen"]]),
             SlideElement(id="leaf", type="image", content="a green leaf")]


@settings(max_examples=300, deadline=None)
@given(notes=st.text(max_size=600))
def test_any_notes_make_a_valid_script_that_says_every_word(notes: str) -> None:
    steps = notes_script(notes, _ELEMENTS)
    assert len(steps) <= 200
    assert all((s.target is None) or s.target in {"points", "table", "leaf"} for s in steps)
    said = " ".join(s.say for s in steps if s.say)
    if not any(line.strip().startswith("[") for line in notes.splitlines()):
        assert said.split() == [w for w in notes.split()][:len(said.split())]


@settings(max_examples=200, deadline=None)
@given(says=st.lists(st.text(st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp")), min_size=1, max_size=80)
                     .filter(lambda t: t.strip() and not t.strip().startswith("[")), max_size=8),
       targets=st.lists(st.sampled_from(["points", "table", "leaf"]), max_size=8))
def test_a_marked_script_reads_back_step_for_step(says: list[str], targets: list[str]) -> None:
    from maic_cli.lessons.lesson import ScriptStep

    steps = [ScriptStep(spotlight=targets[0])] if targets else []
    for number, said in enumerate(says):
        steps.append(ScriptStep(say=" ".join(said.split())))
        if number + 1 < len(targets):
            steps.append(ScriptStep(laser=targets[number + 1]))
    if not any(s.target for s in steps):
        return  # unmarked notes are read sentence by sentence instead
    assert notes_script(script_notes(steps), _ELEMENTS) == steps


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cut=st.integers(min_value=0, max_value=2000), junk=st.binary(max_size=40), where=st.integers(0, 2000))
def test_a_broken_pdf_is_a_lesson_or_one_input_error(tmp_path: Path, cut: int, junk: bytes, where: int) -> None:
    pytest.importorskip("pypdf")
    from tests.test_lesson_import import minimal_pdf

    good = minimal_pdf([["Title", "- a point", "Some text."], ["Second", "More."]])
    for number, data in enumerate((good[:cut], good[:where] + junk + good[where:])):
        path = tmp_path / f"f{number}.pdf"
        path.write_bytes(data)
        try:
            lesson = import_lesson(path).lesson
        except InputError as exc:
            assert "\n" not in str(exc)
        else:
            assert lesson.scenes
