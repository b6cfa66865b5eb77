"""``Q: … / A: …`` in a teacher's notes: ``lesson import`` reads them as the scene's ``faq:`` (Markdown slides and
discussions, a deck's speaker notes), ``lesson export`` writes them back (md, pptx) with a discussion's ``close:``;
any text is read without a crash and what ``faq_notes`` writes reads back the same (hypothesis)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from maic_cli.authoring.notes_faq import faq_notes, split_faq
from maic_cli.lessons.lesson import DiscussionScene, ExpectedQuestion, SlideScene
from maic_cli.store.lesson_export import export_lesson
from maic_cli.store.lesson_import import import_lesson
from maic_cli.store.lessons import load_lesson

ROOT = Path(__file__).resolve().parent.parent
NOTES = """# Volcanoes

## Where lava comes from

- Magma is melted rock underground
- Lava is magma at the surface

Deep under the crust some rock melts.

Q: Is magma the same as lava?

Q: What is the difference between magma and lava?

A: It is the same melted rock, called magma underground and lava at the surface.

Q: Why does magma rise?
A (curious_student): Because it is lighter than the rock around it.

Q: A question with no answer stays what the teacher says.

## Discussion: Would you live near a volcano?

Think about the soil and the danger.

[script]

Leo: I would, the soil is great!

Q: Is it safe?
A: It can be, with warnings.

[close]

So a volcano brings both danger and good soil.
"""


def test_markdown_notes_give_the_slides_and_discussions_expected_questions(tmp_path: Path) -> None:
    path = tmp_path / "v.md"
    path.write_text(NOTES, encoding="utf-8")
    lesson = import_lesson(path).lesson
    slide, talk = lesson.scenes
    assert isinstance(slide, SlideScene) and isinstance(talk, DiscussionScene)
    assert [f.model_dump() for f in slide.faq] == [
        {"q": ["Is magma the same as lava?", "What is the difference between magma and lava?"],
         "a": "It is the same melted rock, called magma underground and lava at the surface.", "by": None},
        {"q": "Why does magma rise?", "a": "Because it is lighter than the rock around it.", "by": "curious_student"}]
    said = " ".join(step.say or "" for step in slide.script)
    assert "Deep under the crust" in said and "A question with no answer" in said and "It is the same" not in said
    assert [f.a for f in talk.faq] == ["It can be, with warnings."]
    assert [s.say for s in talk.close] == ["So a volcano brings both danger and good soil."]
    assert [s.say for s in talk.script] == ["I would, the soil is great!"]


@pytest.mark.parametrize("name", ["seasons", "fractions", "photosynthesis", "python_loops"])
def test_exported_notes_read_back_with_every_faq_and_close(tmp_path: Path, name: str) -> None:
    lesson = load_lesson(ROOT / "lessons" / f"{name}.yaml")
    path = tmp_path / "l.md"
    export_lesson(lesson, path)
    back = import_lesson(path).lesson
    assert [getattr(s, "faq", []) for s in back.scenes] == [getattr(s, "faq", []) for s in lesson.scenes]
    assert [getattr(s, "close", []) for s in back.scenes] == [getattr(s, "close", []) for s in lesson.scenes]
    assert any(getattr(s, "faq", []) for s in lesson.scenes)


def test_a_decks_speaker_notes_give_the_expected_questions_and_export_writes_them_back(tmp_path: Path) -> None:
    pptx = pytest.importorskip("pptx")

    deck = pptx.Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[1])
    slide.shapes.title.text = "Where lava comes from"
    slide.placeholders[1].text_frame.text = "Magma is melted rock"
    slide.notes_slide.notes_text_frame.text = ("Deep under the crust some rock melts.\n\nQ: Is magma lava?\n"
                                               "Q: Are magma and lava the same?\nA: The same rock, by another name.")
    deck.save(str(tmp_path / "d.pptx"))
    lesson = import_lesson(tmp_path / "d.pptx").lesson
    [scene] = lesson.scenes
    assert isinstance(scene, SlideScene)
    assert scene.faq == [ExpectedQuestion(q=["Is magma lava?", "Are magma and lava the same?"],
                                          a="The same rock, by another name.")]
    assert [s.say for s in scene.script if s.say] == ["Deep under the crust some rock melts."]
    seasons = load_lesson(ROOT / "lessons" / "seasons.yaml")
    out = tmp_path / "s.pptx"
    export_lesson(seasons, out)
    back = import_lesson(out).lesson
    assert sum(len(getattr(s, "faq", [])) for s in back.scenes) == sum(len(getattr(s, "faq", []))
                                                                       for s in seasons.scenes)
    assert [getattr(s, "close", []) for s in back.scenes if isinstance(s, DiscussionScene)] == [
        s.close for s in seasons.scenes if isinstance(s, DiscussionScene)]


LINE = st.text(max_size=80)


@given(st.lists(st.one_of(LINE, LINE.map(lambda t: "Q: " + t), LINE.map(lambda t: "A: " + t), st.just("")),
                max_size=30))
def test_any_notes_are_read_without_a_crash_into_valid_entries(lines: list[str]) -> None:
    rest, faq, dropped = split_faq("\n".join(lines))
    assert dropped >= 0 and all(isinstance(f, ExpectedQuestion) for f in faq)
    answers = [line for line in "\n".join(lines).splitlines() if line.lstrip().startswith("A:")]
    left = [line for line in rest.splitlines() if line.lstrip().startswith("A:")]
    assert len(left) <= len(answers) - len(faq) - dropped  # each entry took its answer out of the notes
    assert split_faq(faq_notes(faq))[1] == [ExpectedQuestion(q=f.q, a=" ".join(f.a.split()), by=f.by) for f in faq]
