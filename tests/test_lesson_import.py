"""``maic lesson import``: decks, notes and PDFs made here become lessons; hostile files are one-line errors."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from maic_cli.cli.app import app
from maic_cli.errors import InputError
from maic_cli.formats.importer import import_lesson
from maic_cli.formats.pptx_read import check_zip
from maic_cli.formats.pptx_write import placeholder_png
from maic_cli.lessons.lesson import DiscussionScene, QuizScene, SlideScene
from maic_cli.store.lessons import load_lesson

pptx = pytest.importorskip("pptx")
from pptx.util import Inches, Pt  # noqa: E402

NOTES = ("Plants need three things to make food. The list shows light, water and carbon dioxide. "
         "Look at the table: what goes in and what comes out. The picture shows a leaf taking in air.")


def teacher_deck(path: Path) -> Path:
    """A deck as a teacher makes one: title slide, a bullet slide with levels and notes, a table, a picture."""
    deck = pptx.Presentation()
    first = deck.slides.add_slide(deck.slide_layouts[0])  # title + subtitle
    first.shapes.title.text = "Photosynthesis"
    first.placeholders[1].text = "How plants make their food"
    second = deck.slides.add_slide(deck.slide_layouts[1])  # title + content
    second.shapes.title.text = "What a plant needs"
    body = second.placeholders[1].text_frame
    body.text = "Light from the sun"
    for text, level in (("Water from the roots", 0), ("Carried up the stem", 1), ("Carbon dioxide from the air", 0)):
        paragraph = body.add_paragraph()
        paragraph.text, paragraph.level = text, level
    table = second.shapes.add_table(3, 2, Inches(1), Inches(4.5), Inches(6), Inches(1.2)).table
    for r, row in enumerate([["In", "Out"], ["carbon dioxide", "glucose"], ["water", "oxygen"]]):
        for c, cell in enumerate(row):
            table.cell(r, c).text = cell
    picture = second.shapes.add_picture(io.BytesIO(placeholder_png()), Inches(7.5), Inches(5.8), height=Inches(1))
    picture._element.nvPicPr.cNvPr.set("descr", "A green leaf with arrows for air and light")
    second.notes_slide.notes_text_frame.text = NOTES
    third = deck.slides.add_slide(deck.slide_layouts[5])  # title only, a code box, no notes
    third.shapes.title.text = "Counting leaves"
    box = third.shapes.add_textbox(Inches(1), Inches(2), Inches(8), Inches(2)).text_frame
    for number, code in enumerate(["for leaf in tree:", "    count += 1"]):
        run = (box.paragraphs[0] if number == 0 else box.add_paragraph()).add_run()
        run.text, run.font.name, run.font.size = code, "Consolas", Pt(14)
    deck.save(str(path))
    return path


def test_a_teachers_deck_becomes_slides_with_its_notes_as_the_script(tmp_path: Path) -> None:
    lesson = import_lesson(teacher_deck(tmp_path / "deck.pptx")).lesson
    assert lesson.title == "Photosynthesis"
    title, needs, code = lesson.scenes
    assert isinstance(title, SlideScene) and isinstance(needs, SlideScene) and isinstance(code, SlideScene)
    assert [e.content for e in title.elements] == ["How plants make their food"] and title.script == []
    assert needs.title == "What a plant needs"
    kinds = {e.type: e for e in needs.elements}
    assert kinds["bullets"].items == ["Light from the sun", "Water from the roots", "  Carried up the stem",
                                      "Carbon dioxide from the air"]
    assert kinds["table"].rows == [["In", "Out"], ["carbon dioxide", "glucose"], ["water", "oxygen"]]
    assert kinds["image"].content == "A green leaf with arrows for air and light"
    said = [s.say for s in needs.script if s.say]
    assert said == ["Plants need three things to make food.", "The list shows light, water and carbon dioxide.",
                    "Look at the table: what goes in and what comes out.",
                    "The picture shows a leaf taking in air."]
    # a spotlight before the sentence that talks about an element, matched by its words
    steps = [s.spotlight or s.say for s in needs.script]
    assert steps.index(kinds["bullets"].id) < steps.index(said[1])
    assert steps.index(kinds["table"].id) == steps.index(said[2]) - 1
    assert steps.index(kinds["image"].id) == steps.index(said[3]) - 1
    assert [(e.type, e.content) for e in code.elements] == [("code", "for leaf in tree:\n    count += 1")]


def test_the_import_command_writes_a_lesson_that_loads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    deck = teacher_deck(tmp_path / "My deck.pptx")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["lesson", "import", str(deck)])
    assert result.exit_code == 0, result.stderr
    out = tmp_path / "my-deck.yaml"
    assert result.stdout.strip() == "my-deck.yaml" and load_lesson(out).title == "Photosynthesis"
    assert out.read_text(encoding="utf-8").startswith("# Imported from My deck.pptx by maic lesson import")
    again = CliRunner().invoke(app, ["lesson", "import", str(deck)])
    assert again.exit_code == 2 and "already exists" in again.stderr and "--force" in again.stderr
    assert CliRunner().invoke(app, ["lesson", "import", str(deck), "--force"]).exit_code == 0


MARKDOWN = """\
# Light and plants

How a leaf turns light into food.

## What a plant needs

- Light from the sun
- Water
  - from the roots
- Carbon dioxide

| In | Out |
| --- | --- |
| water | oxygen |

A plant needs light, water and carbon dioxide.
The table shows that water goes in and oxygen comes out!

![A leaf in the sun](leaf.png)

## Counting in code

```python
for leaf in leaves:
    print(leaf)
```

$$6 CO2 + 6 H2O -> C6H12O6 + 6 O2$$

> Plants are the start of most food chains.

## Quiz: Check yourself

1. What does a plant take from the air?
   - [ ] Oxygen
   - [x] Carbon dioxide
   - [ ] Nitrogen
   Explanation: Leaves take in carbon dioxide through small pores.
2. Which of these does a plant make?
   - [x] Glucose
   - [x] Oxygen
   - [ ] Soil
3. Why are most leaves green?
   Rubric: chlorophyll reflects green light
   Points: 2

## Discussion: What happens to a plant kept in the dark?

Use what you know about light to predict it.
"""


def test_markdown_notes_become_slides_a_quiz_and_a_discussion(tmp_path: Path) -> None:
    notes = tmp_path / "notes.md"
    notes.write_text(MARKDOWN, encoding="utf-8")
    lesson = import_lesson(notes).lesson
    assert (lesson.title, lesson.description) == ("Light and plants", "How a leaf turns light into food.")
    needs, code, quiz, talk = lesson.scenes
    assert isinstance(needs, SlideScene) and isinstance(code, SlideScene)
    assert [(e.id, e.type) for e in needs.elements] == [("points", "bullets"), ("table", "table"),
                                                        ("picture", "image")]
    assert needs.elements[0].items == ["Light from the sun", "Water", "  from the roots", "Carbon dioxide"]
    assert needs.elements[1].rows == [["In", "Out"], ["water", "oxygen"]]
    assert needs.elements[2].content == "A leaf in the sun"
    assert [s.say for s in needs.script if s.say] == [
        "A plant needs light, water and carbon dioxide.",
        "The table shows that water goes in and oxygen comes out!"]
    assert needs.script[0].spotlight == "points" and "table" in [s.spotlight for s in needs.script]
    assert [(e.type, e.language) for e in code.elements] == [("code", "python"), ("formula", None), ("text", None)]
    assert code.elements[1].content == "6 CO2 + 6 H2O -> C6H12O6 + 6 O2" and code.script == []
    assert isinstance(quiz, QuizScene) and quiz.title == "Check yourself"
    single, multiple, short = quiz.questions
    assert (single.type, single.options, single.answer) == ("single", ["Oxygen", "Carbon dioxide", "Nitrogen"], ["B"])
    assert single.explanation == "Leaves take in carbon dioxide through small pores."
    assert (multiple.type, multiple.answer) == ("multiple", ["A", "B"])
    assert (short.type, short.rubric, short.points) == ("short", "chlorophyll reflects green light", 2)
    assert isinstance(talk, DiscussionScene)
    assert (talk.topic, talk.prompt) == ("What happens to a plant kept in the dark?",
                                         "Use what you know about light to predict it.")


@pytest.mark.parametrize(("quiz", "problem"), [
    ("1. Which?\n   - [ ] one\n   - [ ] two\n", ":4: question 1: mark the right option(s) with [x]"),
    ("1. Which?\n2. Why?\n   Rubric: because\n", ":4: question 1: give options"),
    ("1. Why?\n   Rubric: because\n   Points: lots\n", ":4: question 1: Points: a whole number"),
    ("Just some words.\n", ":3: the quiz has no numbered questions"),
])
def test_a_broken_quiz_section_is_one_line_naming_its_line(tmp_path: Path, quiz: str, problem: str) -> None:
    notes = tmp_path / "notes.md"
    notes.write_text("# T\n\n## Quiz\n" + quiz, encoding="utf-8")
    result = CliRunner().invoke(app, ["lesson", "import", str(notes), "--out", str(tmp_path / "x.yaml")])
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1 and f"{notes}{problem}" in result.stderr
    assert not (tmp_path / "x.yaml").exists()


def minimal_pdf(pages: list[list[str]]) -> bytes:
    """A PDF of text pages (Helvetica, one line per string), with a correct cross-reference table."""
    objects = ["<< /Type /Catalog /Pages 2 0 R >>", ""]
    kids = []
    for lines in pages:
        stream = "BT /F1 18 Tf 72 720 Td 22 TL " + " ".join(f"({line}) Tj T*" for line in lines) + " ET"
        objects.append(f"<< /Length {len(stream)} >>\nstream\n{stream}\nendstream")
        objects.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {len(objects)} 0 R "
                       "/Resources << /Font << /F1 FONT 0 R >> >> >>")
        kids.append(f"{len(objects)} 0 R")
    objects.append("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    objects = [o.replace("FONT", str(len(objects))) for o in objects]
    objects[1] = f"<< /Type /Pages /Kids [{' '.join(kids)}] /Count {len(kids)} >>"
    out, offsets = b"%PDF-1.4\n", []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n{body}\nendobj\n".encode("latin-1")
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{offset:010d} 00000 n \n".encode() for offset in offsets)
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return out


def test_a_pdf_becomes_one_slide_per_page_with_no_script(tmp_path: Path) -> None:
    pytest.importorskip("pypdf")
    pdf = tmp_path / "handout.pdf"
    pdf.write_bytes(minimal_pdf([["Why leaves are green", "Chlorophyll absorbs red and blue light.",
                                  "- it reflects green", "- it sits in chloroplasts"],
                                 ["Summary", "Light becomes food."]]))
    lesson = import_lesson(pdf).lesson
    first, second = lesson.scenes
    assert isinstance(first, SlideScene) and isinstance(second, SlideScene)
    assert (first.title, second.title) == ("Why leaves are green", "Summary")
    assert [(e.type, e.content or e.items) for e in first.elements] == [
        ("text", "Chlorophyll absorbs red and blue light."),
        ("bullets", ["it reflects green", "it sits in chloroplasts"])]
    assert first.script == [] and second.script == []


# -- hostile files ------------------------------------------------------------------------------

def _zip(members: dict[str, bytes], compression: int = zipfile.ZIP_DEFLATED) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return out.getvalue()


@pytest.mark.parametrize(("data", "problem"), [
    (b"not a zip at all", "not a PowerPoint deck (a .pptx file is a zip"),
    (_zip({"[Content_Types].xml": b"<x/>", "ppt/bomb.xml": b"\0" * (3 * 2**20)}), "(a zip bomb?)"),
    (_zip({f"ppt/{n}.xml": b"" for n in range(5_001)}), "a zip of 5,001 files"),
    (_zip({"word/document.xml": b"<x/>", "[Content_Types].xml": b"<x/>"}), "no ppt/ part"),
    (_zip({"[Content_Types].xml": b"<x/>", "ppt/presentation.xml": b"<broken"}), "not a readable PowerPoint deck"),
])
def test_a_hostile_or_broken_deck_is_one_line_exit_2(tmp_path: Path, data: bytes, problem: str) -> None:
    deck = tmp_path / "deck.pptx"
    deck.write_bytes(data)
    result = CliRunner().invoke(app, ["lesson", "import", str(deck), "--out", str(tmp_path / "x.yaml")])
    assert result.exit_code == 2 and problem in result.stderr and result.stderr.count("\n") == 1
    assert "Traceback" not in result.output


def test_the_zip_check_reads_declared_sizes_without_unpacking() -> None:
    with pytest.raises(InputError, match="unpacks to more than"):
        check_zip(Path("d.pptx"), _zip({f"ppt/{n}.bin": b"\0" * 2**20 for n in range(201)}, zipfile.ZIP_STORED))


@pytest.mark.parametrize("name", ["deck.ppt", "notes.txt", "deck"])
def test_an_unknown_kind_of_file_is_refused(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_text("x", encoding="utf-8")
    result = CliRunner().invoke(app, ["lesson", "import", str(path), "--out", str(tmp_path / "x.yaml")])
    assert result.exit_code == 2 and ".pptx" in result.stderr and ".md" in result.stderr


def test_invisible_and_direction_characters_in_a_deck_are_shown_not_obeyed(tmp_path: Path) -> None:
    deck = pptx.Presentation()  # (XML cannot hold an escape character: python-pptx writes it as _x001B_ text)
    slide = deck.slides.add_slide(deck.slide_layouts[5])
    slide.shapes.title.text = "Red \u202etitle"
    slide.notes_slide.notes_text_frame.text = "Say \u202eevil words."
    deck.save(str(tmp_path / "d.pptx"))
    lesson = import_lesson(tmp_path / "d.pptx").lesson
    scene = lesson.scenes[0]
    assert isinstance(scene, SlideScene)
    assert scene.title == "Red <U+202E>title" and scene.script[0].say == "Say <U+202E>evil words."


def test_with_a_model_what_the_material_lacks_is_written_in_its_voice(tmp_path: Path) -> None:
    import json

    from tests.lesson_steps import DISCUSSION, QUIZ, script_file

    notes = tmp_path / "notes.md"
    notes.write_text("# Leaves\n\n## Why green\n\n- chlorophyll\n- light\n\nWell now, friends, look at the list.\n\n"
                     "## What they make\n\n- sugar\n- oxygen\n", encoding="utf-8")
    script = {"steps": [{"spotlight": "points"}, {"say": "Leaves make sugar and give off oxygen."}]}
    model = script_file(tmp_path, [json.dumps(r) for r in (script, DISCUSSION, QUIZ)])
    out = tmp_path / "leaves.yaml"
    result = CliRunner().invoke(app, ["lesson", "import", str(notes), "--out", str(out), "--model",
                                      f"scripted:{model}"])
    assert result.exit_code == 0, result.stderr
    lesson = load_lesson(out)
    green, make, talk, quiz = lesson.scenes
    assert isinstance(green, SlideScene) and isinstance(make, SlideScene)
    assert [s.say for s in green.script if s.say] == ["Well now, friends, look at the list."]  # the teacher's own
    assert [s.say for s in make.script if s.say] == ["Leaves make sugar and give off oxygen."]
    assert isinstance(talk, DiscussionScene) and isinstance(quiz, QuizScene)
    assert all(q.explanation for q in quiz.questions)
    assert "3 model calls" in result.stderr


def test_without_a_model_nothing_is_invented(tmp_path: Path) -> None:
    notes = tmp_path / "notes.md"
    notes.write_text("# Leaves\n\n## Why green\n\n- chlorophyll\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["lesson", "import", str(notes), "--out", str(tmp_path / "l.yaml")])
    assert result.exit_code == 0, result.stderr
    [scene] = load_lesson(tmp_path / "l.yaml").scenes
    assert isinstance(scene, SlideScene) and scene.script == [] and "writing what" not in result.stderr


def test_question_slides_marked_in_the_notes_become_a_quiz(tmp_path: Path) -> None:
    deck = pptx.Presentation()
    for number, (notes, options) in enumerate([("Answer: B\nExplanation: Air.\n[quiz: check q1 single]",
                                               ["A. Soil", "B. Air"]),
                                              ("Answer: C\n[quiz: check q2 single]", ["A. One", "B. Two"])], 1):
        slide = deck.slides.add_slide(deck.slide_layouts[5])
        slide.shapes.title.text = f"Check: question {number}"
        slide.shapes.add_textbox(Inches(1), Inches(2), Inches(6), Inches(1)).text_frame.text = "Where from?"
        box = slide.shapes.add_textbox(Inches(1), Inches(3), Inches(6), Inches(2)).text_frame
        box.text = options[0]
        box.add_paragraph().text = options[1]
        slide.notes_slide.notes_text_frame.text = notes
    deck.save(str(tmp_path / "quiz.pptx"))
    imported = import_lesson(tmp_path / "quiz.pptx")
    quiz, broken = imported.lesson.scenes
    assert isinstance(quiz, QuizScene) and quiz.title == "Check" and quiz.id == "check"
    [question] = quiz.questions
    assert (question.options, question.answer, question.explanation) == (["Soil", "Air"], ["B"], "Air.")
    assert isinstance(broken, SlideScene)  # C is not an option: it stays a slide, and the user is told
    assert [s.say for s in broken.script] == ["Answer: C"]  # the marker is not spoken
    assert "stays a slide" in imported.notes[0]


def test_markdown_front_matter_gives_the_title_and_setext_headings_are_slides(tmp_path: Path) -> None:
    notes = tmp_path / "cells.md"
    notes.write_text("---\ntitle: \"Cells and tissues\"\ntags: [bio]\n---\n\nIntro.\n\nCells\n-----\n\n"
                     "* a membrane\n* a nucleus\n\nEach cell has a membrane around it.\n", encoding="utf-8")
    lesson = import_lesson(notes).lesson
    assert (lesson.title, lesson.description) == ("Cells and tissues", "Intro.")
    [cells] = lesson.scenes
    assert isinstance(cells, SlideScene) and cells.title == "Cells"
    assert cells.elements[0].items == ["a membrane", "a nucleus"]
    assert [s.spotlight or s.say for s in cells.script] == ["points", "Each cell has a membrane around it."]
