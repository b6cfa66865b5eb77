"""Lessons under hostile or odd input: grades that are not numbers, answers in non-ASCII digits, crafted
sessions and transcripts, duplicate YAML keys, /lesson twice, an interrupted discussion, skipped slides,
scenario steps that are not there."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from maic_cli.cli.app import app
from maic_cli.engine.events import QuizAnswerEvent
from maic_cli.errors import InputError
from maic_cli.evaluation.scenarios import load_scenario, scenario_lesson
from maic_cli.lessons.lesson import Lesson, LessonPlay, LessonProgress, QuizAnswer, QuizQuestion
from maic_cli.lessons.quiz import AnswerNotUnderstood, grade, parse_choice
from maic_cli.llm.scripted import ScriptedLLM, ScriptedReply
from maic_cli.store.lessons import load_lesson
from maic_cli.store.session import load_session
from tests.helpers import reply
from tests.test_lesson_player import LESSON, make

runner = CliRunner()
ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "lessons" / "photosynthesis.yaml"
SHORT = QuizQuestion(id="q", type="short", question="Why?", rubric="Energy.", points=3)
CHOICE = QuizQuestion(id="c", type="single", question="Which?", options=["a", "b"], answer=["B"])


@pytest.mark.parametrize("points", ["NaN", "Infinity", "-Infinity"])
def test_a_grade_that_is_not_a_number_leaves_the_answer_ungraded(points: str) -> None:
    llm = ScriptedLLM([f'{{"points": {points}, "comment": "c"}}'])
    graded = asyncio.run(grade(SHORT, "Light gives energy.", llm))
    assert graded.graded_by == "none" and graded.points == 0 and not graded.correct


@pytest.mark.parametrize("typed", ["²", "١", "Ⅱ"])
def test_a_digit_that_is_not_ascii_is_asked_again_not_a_crash(typed: str) -> None:
    with pytest.raises(AnswerNotUnderstood):
        parse_choice(CHOICE, typed)


def test_slide_with_a_digit_that_is_not_ascii_is_a_usage_line(tmp_path: Path, maic_home: Path) -> None:
    result = runner.invoke(app, ["chat", "--model", "demo", "--lesson", str(SAMPLE),
                                 "--session", str(tmp_path / "s.json")], input="/slide ²\n")
    assert result.exit_code == 0, result.output
    assert "usage: /slide N" in result.output


def test_a_crafted_session_cannot_inflate_the_score() -> None:
    lesson = load_lesson(SAMPLE)
    progress = LessonProgress(answers={
        "check/q1": QuizAnswer(question_id="q1", answer="C", points=50, max_points=99, correct=True),
        "nowhere/q9": QuizAnswer(question_id="q9", answer="x", points=1e9, max_points=1),
    })
    play = LessonPlay.model_validate({"lesson": lesson.model_dump(), "progress": progress.model_dump()})
    assert play.progress.score() == (2, 2)  # q1 is worth 2; the unknown question is dropped


def test_a_quiz_event_with_impossible_numbers_is_refused() -> None:
    for bad in ({"points": float("nan")}, {"points": -1}, {"max_points": 0}):
        with pytest.raises(ValidationError):
            QuizAnswerEvent(scene_id="s", question_id="q", question="?", answer="a", **bad)


def test_a_key_given_twice_is_an_error_not_a_silent_overwrite(tmp_path: Path) -> None:
    path = tmp_path / "twice.yaml"
    path.write_text("title: a\nlevel: beginner\ntitle: b\nscenes: []\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"twice.yaml:3: title: this key is given twice"):
        load_lesson(path)


def test_lesson_again_keeps_its_progress_and_another_replaces_it(tmp_path: Path, maic_home: Path) -> None:
    session = tmp_path / "s.json"
    stdin = "/slide 3\n\n\n\nC\nA C\nenergy\n" + f"/lesson {SAMPLE}\n"
    result = runner.invoke(app, ["chat", "--model", "demo", "--lesson", str(SAMPLE), "--session", str(session)],
                           input=stdin)
    assert result.exit_code == 0, result.output
    assert "This lesson is already open: it goes on where it stopped." in result.output
    play = load_session(session).lesson
    assert play is not None and set(play.progress.answers) == {"check/q1", "check/q2", "check/q3"}


def test_an_interrupted_discussion_is_not_marked_discussed() -> None:
    # chunk_delay: the stream awaits between chunks, so the cancel lands inside the reply
    llm = ScriptedLLM([ScriptedReply(reply=reply("What would a plant in the dark do? It would grow pale."),
                                     chunk_size=3, chunk_delay=0.001)])
    player, log = make(llm)

    async def main() -> None:
        player.start()
        player.goto_slide(2)
        player.next()  # the discussion scene
        task = asyncio.ensure_future(player.discuss())
        log.on_event.append(lambda event: task.cancel() if event.type == "text_delta" else None)
        result = await task
        assert result.reason == "aborted"
        assert player.progress.discussed == [] and not player.scene_done(player.progress.scene)

    asyncio.run(main())


def test_a_skipped_slide_is_not_done_in_the_outline() -> None:
    player, _ = make(ScriptedLLM([]))
    player.start()
    player.goto_slide(2)
    done = [entry.done for entry in player.outline()]
    assert done[0] is False  # slide 1 was skipped, not lectured
    assert Lesson.model_validate(LESSON).scenes[0].id == "s1"


def _scenario(tmp_path: Path, body: str) -> Path:
    (tmp_path / "photo.yaml").write_text(SAMPLE.read_text(encoding="utf-8"), encoding="utf-8")
    path = tmp_path / "plan.yaml"
    path.write_text("class:\n  agents: [teacher, curious_student]\n" + body, encoding="utf-8")
    return path


@pytest.mark.parametrize(("body", "message"), [
    ("lesson: {file: photo.yaml, questions: [{scene: needs, after_step: 9, text: why?}]}\n",
     "after_step 9 of scene 'needs', which has 7 steps"),
    ("lesson: {file: photo.yaml, questions: [{scene: check, after_step: 1, text: why?}]}\n",
     "after_step 1 of scene 'check', which has 0 steps"),
    ("lesson: {file: photo.yaml, answers: {q1: Z, q2: A, q3: x}}\n", "lesson.answers: q1: 'Z' is not one of"),
])
def test_a_scenario_cannot_ask_after_a_step_that_is_not_there_or_answer_no_option(
        tmp_path: Path, body: str, message: str) -> None:
    path = _scenario(tmp_path, body)
    with pytest.raises(InputError, match=message):
        scenario_lesson(load_scenario(path), path)


def test_a_lesson_scenario_has_no_messages_of_its_own(tmp_path: Path) -> None:
    path = _scenario(tmp_path, "messages: [hello]\nlesson: {file: photo.yaml}\n")
    with pytest.raises(InputError, match=r"asks its questions in lesson\.questions"):
        load_scenario(path)


def test_export_after_continue_keeps_the_answers_given_before(tmp_path: Path, maic_home: Path) -> None:
    session = tmp_path / "s.json"
    first = runner.invoke(app, ["chat", "--model", "demo", "--lesson", str(SAMPLE), "--session", str(session)],
                          input="/slide 3\n\n\n\nC\nA C\nenergy\n")
    assert first.exit_code == 0, first.output
    target = tmp_path / "after.md"
    second = runner.invoke(app, ["chat", "--model", "demo", "--session", str(session)], input=f"/export {target}\n")
    assert second.exit_code == 0, second.output
    exported = target.read_text(encoding="utf-8")
    assert "Where does most of a tree's mass come from?" in exported and "In one or two sentences" in exported
    assert json.loads(session.read_text())["lesson"]["progress"]["state"] in ("quiz", "finished", "lecture")
