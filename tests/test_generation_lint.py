"""Generation on the small offline model: the cleanliness check that measured it
(``tests/benchmarks/lesson_offline.py``), and the one-line refusal the measurement led to."""

from __future__ import annotations

from pathlib import Path

import pytest

from maic_cli.authoring.lint import lesson_problems
from maic_cli.lessons.lesson import Lesson
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
    (_lesson(content="Bees make a n."), "cut off"),
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
    assert lesson_problems(_lesson(content="Each time round, the total grows by n.")) == []


@pytest.mark.parametrize("command", [["new", "photosynthesis"], ["new", "photosynthesis", "--outline-only"],
                                     ["regen", "LESSON", "--scene", "talk"], ["import", "NOTES"]])
@pytest.mark.parametrize("model", ["local", "openai/smollm2"])
def test_the_small_offline_model_is_refused_in_one_line_before_any_call(tmp_path: Path, command: list[str],
                                                                        model: str) -> None:
    from typer.testing import CliRunner

    from maic_cli.cli.app import app

    notes = tmp_path / "notes.md"
    notes.write_text("# T\n\n## A slide\n\n- a point\n", encoding="utf-8")
    args = [str(ROOT / "lessons" / "photosynthesis.yaml") if a == "LESSON" else str(notes) if a == "NOTES" else a
            for a in command]
    out = tmp_path / "out.yaml"
    result = CliRunner().invoke(app, ["lesson", *args, "--model", model, "--api-base", "http://127.0.0.1:9",
                                      "--out", str(out)])
    assert result.exit_code == 2 and result.stderr.count("\n") == 1
    assert "too small to write lessons" in result.stderr and "--model openai/gpt-4o-mini" in result.stderr
    assert "maic lesson import" in result.stderr and not out.exists()


def test_without_a_model_or_key_lesson_new_says_so_at_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from maic_cli.cli.app import app

    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["lesson", "new", "photosynthesis"])
    # the default is the built-in model (the demo one where the offline extra is not installed): refused at once
    assert result.exit_code == 2 and result.stderr.count("\n") == 1
    assert "too small to write lessons" in result.stderr or "demo model" in result.stderr
    assert "maic lesson import" in result.stderr and not list(tmp_path.glob("*.yaml"))
