"""``maic lesson export``: a lesson as a deck or as notes, and back through ``maic lesson import`` unchanged."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from maic_cli.cli.app import app
from maic_cli.formats.importer import import_lesson
from maic_cli.formats.pptx_write import notes_markdown
from maic_cli.lessons.lesson import DiscussionScene, Lesson, QuizScene, SlideScene
from maic_cli.store.lessons import load_lesson

pptx = pytest.importorskip("pptx")
ROOT = Path(__file__).resolve().parent.parent
SAMPLES = sorted((ROOT / "lessons").glob("*.yaml"))


def _slides(lesson: Lesson) -> list[SlideScene]:
    return [scene for _, scene in lesson.slide_scenes()]


def _export(tmp_path: Path, source: Path, name: str) -> Path:
    out = tmp_path / name
    result = CliRunner().invoke(app, ["lesson", "export", str(source), "--out", str(out)])
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == str(out)
    return out


@pytest.mark.parametrize("sample", SAMPLES, ids=[p.stem for p in SAMPLES])
def test_a_deck_exported_then_imported_keeps_titles_elements_and_script(tmp_path: Path, sample: Path) -> None:
    lesson = load_lesson(sample)
    deck = _export(tmp_path, sample, "deck.pptx")
    back = import_lesson(deck).lesson
    assert (back.title, back.description) == (lesson.title, lesson.description)
    kept = {scene.title: scene for scene in _slides(back)}
    for scene in _slides(lesson):
        again = kept[scene.title]
        assert [e.model_dump() for e in again.elements] == [e.model_dump() for e in scene.elements]
        assert again.script == scene.script
    assert back.scenes == lesson.scenes  # quizzes and discussions too, ids and all


def test_the_deck_holds_the_quiz_with_answers_in_the_notes_and_code_in_a_monospace_box(tmp_path: Path) -> None:
    sample = ROOT / "lessons" / "python_loops.yaml"
    lesson = load_lesson(sample)
    deck = pptx.Presentation(str(_export(tmp_path, sample, "deck.pptx")))
    slides = list(deck.slides)
    quizzes = [s for s in lesson.scenes if isinstance(s, QuizScene)]
    questions = [q for quiz in quizzes for q in quiz.questions]
    assert len(slides) == len(_slides(lesson)) + len(questions) + sum(isinstance(s, DiscussionScene)
                                                                      for s in lesson.scenes)
    quiz_slides = [s for s in slides if ": question " in s.shapes.title.text]
    for slide, question in zip(quiz_slides, questions, strict=True):
        notes = slide.notes_slide.notes_text_frame.text
        assert (f"Answer: {', '.join(question.answer)}" if question.answer else "Rubric:") in notes
        assert question.question in [shape.text_frame.text for shape in slide.shapes if shape.has_text_frame]
    fonts = {run.font.name for slide in slides for shape in slide.shapes if shape.has_text_frame and shape.name ==
             "example" for p in shape.text_frame.paragraphs for run in p.runs}
    assert fonts == {"Courier New"}


@pytest.mark.parametrize("sample", SAMPLES, ids=[p.stem for p in SAMPLES])
def test_notes_exported_then_imported_keep_slides_quiz_and_script_text(tmp_path: Path, sample: Path) -> None:
    lesson = load_lesson(sample)
    back = import_lesson(_export(tmp_path, sample, "notes.md")).lesson
    assert back.title == lesson.title and back.description == lesson.description
    assert [s.type for s in back.scenes] == [s.type for s in lesson.scenes]
    for old, new in zip(lesson.scenes, back.scenes, strict=True):
        if isinstance(old, SlideScene):
            assert isinstance(new, SlideScene) and new.title == old.title
            assert [e.type for e in new.elements] == [e.type for e in old.elements]
            assert [e.plain_text() for e in new.elements] == [e.plain_text() for e in old.elements]
            assert " ".join(s.say for s in new.script if s.say) == " ".join(s.say for s in old.script if s.say)
        elif isinstance(old, QuizScene):
            assert isinstance(new, QuizScene)
            assert [(q.type, " ".join(q.question.split()), q.options, q.answer, q.rubric, q.points, q.explanation)
                    for q in new.questions] == [(q.type, " ".join(q.question.split()), q.options, q.answer, q.rubric,
                                                 q.points, q.explanation) for q in old.questions]


def test_markdown_marks_at_the_start_of_a_line_are_escaped() -> None:
    lesson = Lesson.model_validate({"title": "# not a heading", "scenes": [
        {"type": "slide", "id": "s", "title": "- not a list", "script": [{"say": "1. not a list either"}]}]})
    text = notes_markdown(lesson)
    assert "# \\# not a heading" in text and "## \\- not a list" in text and "1\\. not a list either" in text


@pytest.mark.parametrize("name", ["deck.key", "notes.txt"])
def test_an_unknown_export_format_is_refused(tmp_path: Path, name: str) -> None:
    result = CliRunner().invoke(app, ["lesson", "export", str(SAMPLES[0]), "--out", str(tmp_path / name)])
    assert result.exit_code == 2 and ".pptx" in result.stderr and not (tmp_path / name).exists()


def test_an_existing_export_is_kept_without_force(tmp_path: Path) -> None:
    out = tmp_path / "deck.pptx"
    out.write_bytes(b"mine")
    result = CliRunner().invoke(app, ["lesson", "export", str(SAMPLES[0]), "--out", str(out)])
    assert result.exit_code == 2 and out.read_bytes() == b"mine"
    assert CliRunner().invoke(app, ["lesson", "export", str(SAMPLES[0]), "--out", str(out), "--force"]).exit_code == 0
    assert out.read_bytes()[:2] == b"PK"


def test_every_kind_of_element_survives_the_deck(tmp_path: Path) -> None:
    from maic_cli.formats.pptx_write import export_lesson

    kinds = [{"id": "t", "type": "text", "content": "Line one\n\nline three"}, {"id": "e", "type": "text"},
             {"id": "f", "type": "formula", "content": "E = m c^2"}, {"id": "c", "type": "chart", "content": "Sales"},
             {"id": "v", "type": "video", "content": "A clip"}, {"id": "s", "type": "shape", "content": "Arrow"},
             {"id": "b", "type": "bullets", "items": ["one", "  two", "    three"]}, {"id": "nb", "type": "bullets"},
             {"id": "tb", "type": "table", "rows": [["a", "b"], ["1", "2"]]}, {"id": "et", "type": "table"},
             {"id": "code", "type": "code", "content": "x = 1\n\nprint(x)\n"},
             {"id": "img", "type": "image", "content": "A cat"}]
    lesson = Lesson.model_validate({"title": "Kinds", "scenes": [
        {"type": "slide", "id": "all", "title": "All kinds", "elements": kinds,
         "script": [{"laser": "f"}, {"say": "Look. Then look again."}, {"spotlight": "img"}]}]})
    export_lesson(lesson, tmp_path / "kinds.pptx")
    assert import_lesson(tmp_path / "kinds.pptx").lesson.scenes == lesson.scenes
