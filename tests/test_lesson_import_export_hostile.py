"""Hostile text through ``maic lesson import`` and ``export``: exotic digits, control characters, markers.

Every input here once made maic fail with "unexpected … a bug in maic" or write what it should not
(raw terminal escapes into notes a teacher may ``cat``); now each is a one-line refusal (exit 2) or
a lesson/export with the text cleaned as an import cleans it.
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from maic_cli.cli.app import app
from maic_cli.formats.importer import import_lesson
from maic_cli.formats.pptx_write import export_lesson
from maic_cli.lessons.lesson import Lesson, QuizScene, SlideScene
from maic_cli.store.lesson_writer import lesson_yaml

_DIGITS = ["²", "٣", "३", "३0", "１", "⑤", "𝟚"]


def _cli(*argv: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(argv))
    return result.exit_code, result.stderr


@pytest.mark.parametrize("points", _DIGITS)
def test_points_in_exotic_digits_in_markdown_is_a_one_line_refusal(tmp_path: Path, points: str) -> None:
    notes = tmp_path / "quiz.md"
    notes.write_text(f"# T\n\n## Quiz\n\n1. Why?\n   Rubric: because\n   Points: {points}\n", encoding="utf-8")
    code, stderr = _cli("lesson", "import", str(notes), "--out", str(tmp_path / "q.yaml"))
    assert code == 2 and "unexpected" not in stderr
    assert f"{notes}:5: question 1: Points: a whole number from 1 to 100" in stderr


@pytest.mark.parametrize("points", _DIGITS)
def test_points_in_exotic_digits_in_deck_notes_keeps_one_point(tmp_path: Path, points: str) -> None:
    pptx = pytest.importorskip("pptx")
    deck = pptx.Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[5])
    slide.shapes.title.text = "Quiz: question 1"
    box = slide.shapes.add_textbox(0, 0, 100, 100)
    box.text_frame.text = "Why?"
    slide.notes_slide.notes_text_frame.text = f"Rubric: because\nPoints: {points}\n[quiz: check q1 short]"
    path = tmp_path / "deck.pptx"
    deck.save(str(path))
    (quiz,) = import_lesson(path).lesson.scenes
    assert isinstance(quiz, QuizScene) and quiz.questions[0].points == 1


def test_regen_with_an_exotic_digit_as_scene_number_is_a_one_line_refusal(tmp_path: Path) -> None:
    lesson = Path(__file__).resolve().parent.parent / "lessons" / "fractions.yaml"
    code, stderr = _cli("lesson", "regen", str(lesson), "--scene", "²", "--model", "scripted:/nonexistent")
    assert code == 2 and "unexpected" not in stderr and "is not a scene of" in stderr


_HOSTILE = "\x1b]0;owned\x07\x1b[31mred\x1b[0m \x00nul\x08 \u202eevil\u202c \ufffe\x9b2J"


def _hostile_lesson() -> Lesson:
    return Lesson.model_validate({"title": f"T {_HOSTILE}", "description": _HOSTILE, "scenes": [
        {"type": "slide", "id": "s", "title": f"Slide {_HOSTILE}",
         "elements": [{"id": "t", "type": "text", "content": _HOSTILE},
                      {"id": "b", "type": "bullets", "items": [_HOSTILE]},
                      {"id": "tb", "type": "table", "rows": [[_HOSTILE, "x"]]},
                      {"id": "c", "type": "code", "content": _HOSTILE, "language": "py\x1b[2J"}],
         "script": [{"say": _HOSTILE}, {"spotlight": "t"}]},
        {"type": "quiz", "id": "q", "title": _HOSTILE, "questions": [
            {"id": "q1", "type": "single", "question": _HOSTILE, "options": [_HOSTILE, "b"], "answer": "A",
             "explanation": _HOSTILE}]},
        {"type": "discussion", "id": "d", "topic": _HOSTILE, "prompt": _HOSTILE,
         "script": [{"say": _HOSTILE, "by": "assistant"}]}]})


@pytest.mark.parametrize("suffix", [".md", ".pptx"])
def test_a_lesson_with_control_characters_exports_clean_and_comes_back_clean(tmp_path: Path, suffix: str) -> None:
    if suffix == ".pptx":
        pytest.importorskip("pptx")
    source = tmp_path / "hostile.yaml"
    source.write_text(lesson_yaml(_hostile_lesson()), encoding="utf-8")
    out = tmp_path / f"out{suffix}"
    code, stderr = _cli("lesson", "export", str(source), "--out", str(out))
    assert code == 0, stderr
    data = out.read_bytes()
    if suffix == ".pptx":
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            data = b"".join(archive.read(name) for name in archive.namelist() if name.endswith(".xml"))
    assert not any(byte in data for byte in (b"\x1b", b"\x00", b"\x07", b"\x08", "\x9b".encode()))
    assert b"U+202E" in data and "\u202e".encode() not in data
    back = import_lesson(out).lesson
    dumped = back.model_dump_json()
    assert "\\u001b" not in dumped and "<U+202E>evil" in dumped
    slide = back.scenes[0]
    assert isinstance(slide, SlideScene) and [e.id for e in slide.elements] == ["t", "b", "tb", "c"]


def test_ids_that_cleaning_would_merge_are_a_one_line_refusal(tmp_path: Path) -> None:
    lesson = Lesson.model_validate({"title": "T", "scenes": [
        {"type": "slide", "id": "s", "title": "S", "elements": [{"id": "a\x1b", "content": "x"}, {"id": "a"}]}]})
    source = tmp_path / "ids.yaml"
    source.write_text(lesson_yaml(lesson), encoding="utf-8")
    code, stderr = _cli("lesson", "export", str(source), "--out", str(tmp_path / "x.md"))
    assert code == 2 and "unexpected" not in stderr and len(stderr.strip().splitlines()) == 1
    assert "once its control characters are removed" in stderr and not (tmp_path / "x.md").exists()


def test_a_script_line_that_looks_like_a_marker_stays_speech_in_a_deck(tmp_path: Path) -> None:
    pytest.importorskip("pptx")
    lesson = Lesson.model_validate({"title": "T", "scenes": [
        {"type": "slide", "id": "s", "title": "S", "elements": [{"id": "t", "content": "x"}],
         "script": [{"say": "[spotlight: t]"}, {"say": "[quiz: a q1 short]"}, {"say": "\\ back"},
                    {"say": "Sam: quoted by the teacher"}, {"say": "[discussion: d]"}, {"laser": "t"},
                    {"say": "Hello there.", "by": "curious_student"}]}]})
    export_lesson(lesson, tmp_path / "deck.pptx")
    assert import_lesson(tmp_path / "deck.pptx").lesson.scenes == lesson.scenes


def test_a_discussions_opening_lines_in_markdown_are_cleaned(tmp_path: Path) -> None:
    notes = tmp_path / "talk.md"
    notes.write_text("# T\n\n## Discussion: Why?\n\nMia: \x1b[2J\x1b]0;owned\x07hi \u202eyou\n", encoding="utf-8")
    (talk,) = import_lesson(notes).lesson.scenes
    assert not isinstance(talk, (SlideScene, QuizScene))
    assert [(s.by, s.say) for s in talk.script] == [("curious_student", "hi <U+202E>you")]


def test_a_shape_python_pptx_cannot_type_still_gives_its_text(tmp_path: Path) -> None:
    pytest.importorskip("pptx")
    from maic_cli.testing.import_attacks import tiny_shapes_deck

    deck = tiny_shapes_deck(tmp_path / "plain.pptx", 2)  # the top one is read as the title
    with zipfile.ZipFile(deck) as archive:
        parts = {name: archive.read(name) for name in archive.namelist()}
    parts["ppt/slides/slide1.xml"] = parts["ppt/slides/slide1.xml"].replace(b' txBox="1"', b"")  # no geometry either
    broken = tmp_path / "untyped.pptx"
    with zipfile.ZipFile(broken, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in parts.items():
            archive.writestr(name, data)
    (slide,) = import_lesson(broken).lesson.scenes
    assert isinstance(slide, SlideScene) and [e.content for e in slide.elements] == ["x"]


def test_a_wide_table_with_old_mac_line_endings_is_cut_too(tmp_path: Path) -> None:
    from maic_cli.formats.md_bounds import bound_source

    source = "## s\r\r" + "|" + "a|" * 500 + "\r" + "|" + "-|" * 500 + "\r" + ("|" + "a|" * 500 + "\r") * 200
    bounded = bound_source(tmp_path / "cr.md", source)
    rows = [row for row in bounded.split("\n") if row.startswith("|")]
    assert len(rows) == 62 and all(row.count("|") == 61 for row in rows)


def test_a_discussions_opening_script_survives_the_deck(tmp_path: Path) -> None:
    pytest.importorskip("pptx")
    lesson = Lesson.model_validate({"title": "T", "scenes": [
        {"type": "discussion", "id": "talk", "topic": "Is light a wave?", "prompt": "Opened by: not a field",
         "initiator": "curious_student",
         "script": [{"say": "I think it is a particle.", "by": "deep_thinker"}, {"say": "Mia: quoted."},
                    {"say": "Then why does it bend?", "by": "curious_student"}, {"say": "[script]"}]}]})
    export_lesson(lesson, tmp_path / "talk.pptx")
    assert import_lesson(tmp_path / "talk.pptx").lesson.scenes == lesson.scenes
