"""The cleanliness check a lesson from the small offline model must pass before it is written (issue 19 §5)."""

from __future__ import annotations

from pathlib import Path

import pytest

from maic_cli.engine.generation_lint import lesson_problems
from maic_cli.engine.lesson import Lesson
from maic_cli.store.lessons import load_lesson

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("sample", sorted((ROOT / "lessons").glob("*.yaml")), ids=lambda p: p.stem)
def test_the_hand_written_lessons_read_clean(sample: Path) -> None:
    assert lesson_problems(load_lesson(sample)) == []


def _lesson(items: list[str] | None = None, say: list[str] | None = None, quiz: list[list[str]] | None = None,
            content: str = "Plants need light.") -> Lesson:
    scenes: list[dict[str, object]] = [{"type": "slide", "id": "s", "title": "Light", "elements": [
        {"id": "idea", "type": "text", "content": content},
        {"id": "points", "type": "bullets", "items": items or ["Light from the sun", "Water"]}],
        "script": [{"say": s} for s in (say or ["Plants use light to make food."])]}]
    if quiz:
        scenes.append({"type": "quiz", "id": "q", "questions": [
            {"id": f"q{n}", "type": "single", "question": "Which?", "options": options, "answer": "A"}
            for n, options in enumerate(quiz, 1)]})
    return Lesson.model_validate({"title": "Plants", "scenes": scenes})


@pytest.mark.parametrize(("lesson", "problem"), [
    (_lesson(items=["title", "Water"]), "a field name as content: 'title'"),
    (_lesson(items=["description: The idea is light", "Water"]), "a field name as content"),
    (_lesson(content="Plants get water from fl."), "cut off"),
    (_lesson(say=["Plants need (light and water."]), "cut off"),
    (_lesson(quiz=[["The answer to this question would be: light", "Sand"]]), "talks about answering"),
    (_lesson(quiz=[["Light", "Sand"], ["Water", "Sand"]]), "'sand' is in 2 questions"),
    (_lesson(say=["Plants need light.", "Plants need light."]), "says 'plants need light.' 2 times"),
])
def test_fragments_are_found(lesson: Lesson, problem: str) -> None:
    problems = lesson_problems(lesson)
    assert any(problem in p for p in problems), problems


def test_a_clean_generated_lesson_passes() -> None:
    assert lesson_problems(_lesson(quiz=[["Light", "Sand"], ["Water", "Stone"]])) == []


def test_the_offline_model_refuses_an_unclean_lesson_in_one_line() -> None:
    from maic_cli.cli.lesson_cmd import GenerationRefused, refuse_if_unclean

    refuse_if_unclean(_lesson())  # clean: nothing raised
    with pytest.raises(GenerationRefused) as refused:
        refuse_if_unclean(_lesson(content="Plants get water from fl."))
    message = str(refused.value)
    assert "\n" not in message and "--model openai/gpt-4o-mini" in message and "maic lesson import" in message
