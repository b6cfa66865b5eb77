"""``faq:`` and ``close:`` in a lesson: validated on load with a clear error, kept through a session's copy,
and a ``by:`` outside the class is the teacher's with a ``lesson check`` warning."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import ValidationError
from typer.testing import CliRunner

from maic_cli.cli.app import app
from maic_cli.lessons.lesson import DiscussionScene, ExpectedQuestion, Lesson, LessonPlay, SlideScene

ROOT = Path(__file__).resolve().parent.parent
runner = CliRunner()


def _with_faq() -> dict[str, Any]:
    data = yaml.safe_load((ROOT / "lessons" / "seasons.yaml").read_text(encoding="utf-8"))
    for scene in data["scenes"]:
        if scene["type"] == "slide":
            scene["faq"] = [{"q": "Is it distance?", "a": "No: the tilt."},
                            {"q": ["Why summer?", "What makes summer?"], "a": "Steep light.", "by": "ghost"}]
        elif scene["type"] == "discussion":
            scene["faq"] = [{"q": "No tilt?", "a": "Then no seasons to speak of."}]
            scene["close"] = [{"say": "So the tilt is the reason."}, {"say": "Right!", "by": "curious_student"}]
    return data


def test_faq_and_close_load_and_round_trip_through_a_session_copy() -> None:
    lesson = Lesson.model_validate(_with_faq())
    slide = next(s for s in lesson.scenes if isinstance(s, SlideScene))
    talk = next(s for s in lesson.scenes if isinstance(s, DiscussionScene))
    assert slide.faq[1].phrasings == ["Why summer?", "What makes summer?"] and slide.faq[0].phrasings == [
        "Is it distance?"]
    assert [step.say for step in talk.close] == ["So the tilt is the reason.", "Right!"]
    play = LessonPlay(lesson=lesson)
    assert LessonPlay.model_validate_json(play.model_dump_json()) == play


@pytest.mark.parametrize("bad", [
    {"q": "", "a": "x"}, {"q": [], "a": "x"}, {"q": ["a", " "], "a": "x"}, {"q": ["a"] * 9, "a": "x"},
    {"q": "x" * 301, "a": "y"}, {"q": "a", "a": " "}, {"q": "a", "a": "y" * 1201}, {"q": "a"},
    {"q": "a", "a": "b", "by": "Not An Id"}, {"q": "a", "a": "b", "extra": 1},
])
def test_a_bad_expected_question_is_refused(bad: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        ExpectedQuestion.model_validate(bad)


def test_too_many_faq_and_a_close_that_points_are_refused() -> None:
    data = _with_faq()
    slide = next(s for s in data["scenes"] if s["type"] == "slide")
    slide["faq"] = [{"q": f"q{n}?", "a": "a."} for n in range(41)]
    with pytest.raises(ValidationError):
        Lesson.model_validate(data)
    data = _with_faq()
    talk = next(s for s in data["scenes"] if s["type"] == "discussion")
    talk["close"] = [{"spotlight": "x"}]
    with pytest.raises(ValidationError, match="only says things"):
        Lesson.model_validate(data)


def test_lesson_check_warns_of_a_faq_by_outside_the_class(tmp_path: Path) -> None:
    path = tmp_path / "l.yaml"
    path.write_text(yaml.safe_dump(_with_faq(), sort_keys=False), encoding="utf-8")
    result = runner.invoke(app, ["lesson", "check", str(path)])
    assert result.exit_code == 0, result.stderr
    assert ".faq.1.by (scene " in result.stderr and "'ghost' is not in the lesson's class" in result.stderr
    assert "the teacher says this answer" in result.stderr
