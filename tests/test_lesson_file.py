"""Lesson files: the samples load, and a broken file names its file, line and field."""

from __future__ import annotations

from pathlib import Path

import pytest

from maic_cli.errors import InputError
from maic_cli.lessons.lesson import DiscussionScene, QuizScene, SlideScene
from maic_cli.store.lessons import load_lesson

LESSONS = Path(__file__).resolve().parent.parent / "lessons"
AGENTS = LESSONS.parent / "agents"


SAMPLES = sorted(LESSONS.glob("*.yaml"))


def test_there_are_two_sample_lessons_on_different_subjects() -> None:
    titles = [load_lesson(path).title for path in SAMPLES]
    assert len(titles) >= 2 and len(set(titles)) == len(titles)


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_the_sample_lessons_load(path: Path) -> None:
    lesson = load_lesson(path)
    kinds = {scene.type for scene in lesson.scenes}
    assert kinds == {"slide", "quiz", "discussion"}
    assert all(s.script for s in lesson.scenes if isinstance(s, SlideScene))  # every slide scripted
    assert all(s.script for s in lesson.scenes if isinstance(s, DiscussionScene))  # classmates open each discussion
    quiz = next(s for s in lesson.scenes if isinstance(s, QuizScene))
    assert {q.type for q in quiz.questions} == {"single", "multiple", "short"}
    elements = [e for _, slide in lesson.slide_scenes() for e in slide.elements]
    assert {"text", "bullets", "table", "image"} <= {e.type for e in elements}
    discussion = next(s for s in lesson.scenes if isinstance(s, DiscussionScene))
    assert discussion.initiator and (AGENTS / f"{discussion.initiator}.yaml").is_file()


def test_the_programming_lesson_shows_code_with_its_language() -> None:
    lesson = load_lesson(LESSONS / "python_loops.yaml")
    code = [e for _, slide in lesson.slide_scenes() for e in slide.elements if e.type == "code"]
    assert code and all(e.language for e in code)
    assert any("for fruit in fruits:" in e.content for e in code)


HOSTILE = [  # untrusted strings quoted by an error: never a control sequence, never a second line
    ('    elements:\n      - {id: "e\\e[2J\\nx", content: one}\n    script: [{spotlight: nowhere}]\n',
     "its elements: e x)"),
    ('    "\\e]0;pwn\\a[31m": 1\n', "scenes.0.[31m: unknown field"),
]


@pytest.mark.parametrize(("extra", "shown"), HOSTILE)
def test_an_error_quoting_the_file_is_one_clean_line(tmp_path: Path, extra: str, shown: str) -> None:
    path = tmp_path / "hostile.yaml"
    path.write_text("title: T\nscenes:\n  - type: slide\n    id: s1\n    title: S\n" + extra)
    with pytest.raises(InputError) as caught:
        load_lesson(path)
    message = str(caught.value)
    assert shown in message
    assert "\x1b" not in message and "\x07" not in message and "\n" not in message


BROKEN = [
    ("script: [{spotlight: nowhere}]", 9, "scenes.0.script: step 1 points at 'nowhere'"),
    ("script: [{say: hi, laser: e1}]", 9, "scenes.0.script.0: a script step is exactly one of"),
    ("colour: red", 9, "scenes.0.colour: unknown field"),
]


@pytest.mark.parametrize(("extra", "line", "message"), BROKEN)
def test_a_broken_lesson_names_file_line_and_field(tmp_path: Path, extra: str, line: int, message: str) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text("title: T\nscenes:\n  - type: slide\n    id: s1\n    title: S\n"
                    "    elements:\n      - {id: e1, content: one}\n" + "\n" * 1 + f"    {extra}\n")
    with pytest.raises(InputError) as caught:
        load_lesson(path)
    assert str(caught.value).startswith(f"{path}:{line}: {message}")


def test_element_ids_are_unique_on_a_slide(tmp_path: Path) -> None:
    path = tmp_path / "twice.yaml"
    path.write_text("title: T\nscenes:\n  - type: slide\n    id: s1\n    title: S\n"
                    "    elements:\n      - {id: e1}\n      - {id: e1}\n")
    with pytest.raises(InputError, match=r"twice.yaml:7: scenes.0.elements: element id 'e1' is used twice"):
        load_lesson(path)


def test_an_answer_key_must_name_an_option(tmp_path: Path) -> None:
    path = tmp_path / "quiz.yaml"
    path.write_text("title: T\nscenes:\n  - type: quiz\n    id: q\n    questions:\n"
                    "      - {id: q1, type: single, question: '?', options: [a, b], answer: D}\n")
    with pytest.raises(InputError, match=r"quiz.yaml:6: scenes.0.questions.0.answer: .*from A to B \(not D\)"):
        load_lesson(path)
