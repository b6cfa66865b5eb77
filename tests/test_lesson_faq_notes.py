"""The questions a teacher expects (``faq:``) and a discussion's ``close:`` in notes: written by ``maic lesson
export`` (deck, Markdown), read back by ``maic lesson import``, and read from a teacher's own ``Q:``/``A:`` notes."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from maic_cli.authoring.notes_faq import faq_lines, read_notes
from maic_cli.authoring.notes_script import notes_script, script_notes, speaker_names
from maic_cli.engine.models import SlideElement
from maic_cli.lessons.lesson import DiscussionScene, ExpectedQuestion, Lesson, ScriptStep, SlideScene
from maic_cli.store.lesson_export import export_lesson
from maic_cli.store.lesson_import import import_lesson
from maic_cli.store.lessons import load_lesson

ROOT = Path(__file__).resolve().parent.parent
SPEAKERS = speaker_names([("teacher", "Ms. Rivera"), ("note_taker", "Priya"), ("class_clown", "Leo")])
LABELS = {"note_taker": "Priya", "class_clown": "Leo", "teacher": "Ms. Rivera"}


def test_a_teachers_own_q_and_a_paragraphs_become_expected_questions_and_leave_the_script() -> None:
    notes = ("Leaning toward the Sun changes two things.\n\n"
             "Q: Is it because summer days are longer?\nQ: Are longer days the reason?\n"
             "A: Partly. Longer days add hours of heating,\nbut the steeper light matters as much.\n\n"
             "Q: What are the two reasons?\nA (Priya): Steeper light, and more hours of it.\n\n"
             "So two reasons summer is warmer.")
    rest, faq, close = read_notes(notes, SPEAKERS)
    assert close == []
    assert [(f.phrasings, f.a, f.by) for f in faq] == [
        (["Is it because summer days are longer?", "Are longer days the reason?"],
         "Partly. Longer days add hours of heating, but the steeper light matters as much.", None),
        (["What are the two reasons?"], "Steeper light, and more hours of it.", "note_taker")]
    steps = notes_script(rest, [SlideElement(id="effects", type="text", content="steep light")], SPEAKERS)
    assert [s.say for s in steps if s.say] == ["Leaning toward the Sun changes two things.",
                                             "So two reasons summer is warmer."]


def test_a_question_with_no_answer_and_an_answer_with_no_question_stay_the_notes() -> None:
    notes = "Q: what is left?\nThe end.\nA: nothing asked this."
    assert read_notes(notes, SPEAKERS) == (notes, [], [])
    rest, faq, _ = read_notes("Q: asked in one paragraph?\n\nA: answered in the next.", SPEAKERS)
    assert rest == "" and [(f.q, f.a) for f in faq] == [("asked in one paragraph?", "answered in the next.")]


def test_a_script_line_that_reads_as_a_question_is_written_escaped_and_comes_back_said() -> None:
    script = [ScriptStep(say="Q: why is the sky blue? is what Leo asked."), ScriptStep(say="A: first point.")]
    notes = script_notes(script)
    rest, faq, _ = read_notes(notes, SPEAKERS)
    assert faq == []
    assert notes_script(rest, [], SPEAKERS) == script


def test_a_discussions_close_lines_follow_their_marker_and_keep_their_speakers() -> None:
    notes = "[script]\nLeo: one\n[faq]\nQ: a?\nA: b.\n[close]\nPriya: So: two.\nThe teacher's last word."
    rest, faq, close = read_notes(notes, SPEAKERS, closing=True)
    assert rest == "[script]\nLeo: one"
    assert [(f.q, f.a) for f in faq] == [("a?", "b.")]
    assert [(s.say, s.by) for s in close] == [("So: two.", "note_taker"), ("The teacher's last word.", None)]


def test_over_long_and_too_many_are_cut_to_what_a_lesson_holds() -> None:
    notes = "\n".join([*(f"Q: phrasing {i}" for i in range(12)), "A: " + "word " * 400]
                      + [f"Q: q{i}?\nA: a{i}." for i in range(60)])
    _, faq, _ = read_notes(notes, SPEAKERS)
    assert len(faq) == 40 and len(faq[0].phrasings) == 8
    assert len(faq[0].a) <= 1200 and faq[0].a.endswith("…")


_LINE = st.text(st.characters(blacklist_categories=("Cs", "Cc", "Cf", "Co", "Cn", "Zl", "Zp")), min_size=1, max_size=80) \
    .map(lambda s: " ".join(s.split())).filter(bool)
_ENTRY = st.builds(ExpectedQuestion, q=st.lists(_LINE, min_size=2, max_size=8), a=_LINE,
                   by=st.sampled_from([None, "note_taker", "class_clown", "teacher"]))


@settings(max_examples=100, deadline=None)
@given(faq=st.lists(_ENTRY, max_size=6), script=st.lists(_LINE.map(lambda s: ScriptStep(say=s)), max_size=4))
def test_any_expected_questions_written_as_notes_come_back_the_same(faq: list[ExpectedQuestion],
                                                                   script: list[ScriptStep]) -> None:
    notes = "\n".join([script_notes(script, LABELS, SPEAKERS), *faq_lines(faq, LABELS)])
    rest, back, _ = read_notes(notes, SPEAKERS)
    assert back == faq
    assert notes_script(rest, [], SPEAKERS) == script


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(faq=st.lists(_ENTRY, min_size=1, max_size=4), close=st.lists(_LINE.map(lambda s: ScriptStep(say=s)),
                                                                    max_size=3))
def test_a_lesson_with_expected_questions_exported_to_markdown_comes_back_the_same(
        faq: list[ExpectedQuestion], close: list[ScriptStep]) -> None:
    lesson = Lesson(title="T", scenes=[
        SlideScene(type="slide", id="s", title="S", script=[ScriptStep(say="Hello.")], faq=faq),
        DiscussionScene(type="discussion", id="d", topic="Why?", script=[ScriptStep(say="Hm.", by="class_clown")],
                        faq=faq, close=close)])
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "notes.md"
        export_lesson(lesson, out)
        back = import_lesson(out).lesson
    assert back.scenes == lesson.scenes


@pytest.mark.parametrize("suffix", [".md", ".pptx"])
@pytest.mark.parametrize("name", ["seasons", "python_loops"])
def test_a_built_in_lessons_faqs_and_closing_lines_survive_export_and_import(tmp_path: Path, name: str,
                                                                             suffix: str) -> None:
    if suffix == ".pptx":
        pytest.importorskip("pptx")
    lesson = load_lesson(ROOT / "lessons" / f"{name}.yaml")
    out = tmp_path / f"lesson{suffix}"
    export_lesson(lesson, out)
    back = import_lesson(out).lesson
    faqs = [(s.id, s.faq) for s in lesson.scenes if isinstance(s, (SlideScene, DiscussionScene))]
    assert faqs and all(len(faq) >= 6 for _, faq in faqs)
    assert [(s.id, s.faq) for s in back.scenes if isinstance(s, (SlideScene, DiscussionScene))] == faqs
    closes = [s.close for s in back.scenes if isinstance(s, DiscussionScene)]
    assert closes == [s.close for s in lesson.scenes if isinstance(s, DiscussionScene)] and all(closes)
