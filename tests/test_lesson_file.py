"""Lesson files: the samples load, and a broken file names its file, line and field."""

from __future__ import annotations

from pathlib import Path

import pytest

from maic_cli.engine.lesson import QuizScene, SlideScene
from maic_cli.errors import InputError
from maic_cli.store.lessons import load_lesson

LESSONS = Path(__file__).resolve().parent.parent / "lessons"


@pytest.mark.parametrize("path", sorted(LESSONS.glob("*.yaml")), ids=lambda p: p.name)
def test_the_sample_lessons_load(path: Path) -> None:
    lesson = load_lesson(path)
    kinds = {scene.type for scene in lesson.scenes}
    assert kinds == {"slide", "quiz", "discussion"}
    assert any(isinstance(s, SlideScene) and s.script for s in lesson.scenes)  # a scripted slide
    assert any(isinstance(s, SlideScene) and not s.script for s in lesson.scenes)  # one lectured live
    quiz = next(s for s in lesson.scenes if isinstance(s, QuizScene))
    assert {q.type for q in quiz.questions} == {"single", "multiple", "short"}


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
