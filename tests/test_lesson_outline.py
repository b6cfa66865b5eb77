"""``maic lesson new --outline-only`` / ``--from-outline``, key points, a lecture's place, quiz explanations,
and the checks made before the first paid step."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from typer.testing import CliRunner

from maic_cli.cli.app import app
from maic_cli.lessons.lesson import QuizScene
from maic_cli.store.lessons import load_lesson
from tests.lesson_steps import (
    DISCUSSION,
    ELEMENTS,
    OUTLINE,
    QUIZ,
    REQUIREMENTS,
    SCRIPT,
    generate,
    new,
    replies,
    script_file,
)


def test_outline_only_writes_an_outline_to_edit_and_from_outline_builds_it(tmp_path: Path) -> None:
    outline = tmp_path / "outline.yaml"
    model = script_file(tmp_path, [json.dumps(REQUIREMENTS), json.dumps(OUTLINE)])
    result = CliRunner().invoke(app, ["lesson", "new", "photosynthesis", "--scenes", "3", "--outline-only",
                                      "--model", f"scripted:{model}", "--out", str(outline)])
    assert result.exit_code == 0, result.stderr
    data = yaml.safe_load(outline.read_text(encoding="utf-8"))
    assert data["title"] == REQUIREMENTS["title"] and data["objectives"] == REQUIREMENTS["objectives"]
    assert [s["points"] for s in data["scenes"] if s["kind"] == "slide"] == [OUTLINE["scenes"][0]["points"]]
    data["scenes"][0]["title"] = "What every plant needs"  # the teacher edits it
    outline.write_text(yaml.safe_dump(data), encoding="utf-8")
    model = script_file(tmp_path, [json.dumps(r) for r in (ELEMENTS, SCRIPT, DISCUSSION, QUIZ)])
    out = tmp_path / "lesson.yaml"
    result = CliRunner().invoke(app, ["lesson", "new", "--from-outline", str(outline), "--model",
                                      f"scripted:{model}", "--out", str(out)])
    assert result.exit_code == 0, result.stderr
    lesson = load_lesson(out)
    assert lesson.title == REQUIREMENTS["title"] and lesson.scenes[0].title == "What every plant needs"
    assert "4 model calls" in result.stderr  # no requirements or outline step


def test_a_broken_outline_file_is_path_line_field(tmp_path: Path) -> None:
    outline = tmp_path / "outline.yaml"
    outline.write_text("title: T\nscenes:\n  - kind: lecture\n    title: A\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["lesson", "new", "--from-outline", str(outline), "--model", "scripted:x"])
    assert result.exit_code == 2 and f"{outline}:3:" in result.stderr and "kind" in result.stderr


def test_scenes_zero_is_a_one_line_error(tmp_path: Path) -> None:
    for count in ("0", "21", "-3"):
        result = CliRunner().invoke(app, ["lesson", "new", "x", "--scenes", count, "--out", str(tmp_path / "x.yaml")])
        assert result.exit_code == 2 and result.stderr == f"maic: error: --scenes: give 1 to 20 scenes (not {count})\n"


def test_a_broken_prompts_override_is_found_before_the_first_step(tmp_path: Path) -> None:
    folder = tmp_path / "prompts" / "generation"
    folder.mkdir(parents=True)
    (folder / "quiz.j2").write_text("Write {{ questionz }} questions.\n", encoding="utf-8")
    result, out = new(tmp_path, [], "--prompts", str(tmp_path / "prompts"))  # no replies: a call would fail
    assert result.exit_code == 2 and "quiz.j2" in result.stderr and "questionz" in result.stderr
    assert "generating" not in result.stderr and not out.exists()


def test_the_outline_gives_key_points_the_slide_and_quiz_steps_use() -> None:
    _, llm = generate(replies())
    slide_prompt, quiz_prompt = llm.calls[2].messages[-1]["content"], llm.calls[5].messages[-1]["content"]
    assert "- Light, water and carbon dioxide go in\n- Most mass comes from the air" in slide_prompt
    assert "It checks: The inputs; The outputs" in quiz_prompt
    assert "Never use \"all of the above\"" in quiz_prompt


def test_an_outline_without_key_points_is_asked_again() -> None:
    bare = {"scenes": [{k: v for k, v in s.items() if k != "points"} for s in OUTLINE["scenes"]]}
    result, llm = generate(replies((1, [json.dumps(bare), json.dumps(OUTLINE)])))
    assert result.retries == 1 and "scenes.0.points" in llm.calls[2].messages[-1]["content"]


def test_each_lecture_knows_its_place_and_how_the_last_one_ended() -> None:
    two_slides = {"scenes": [OUTLINE["scenes"][0], {**OUTLINE["scenes"][0], "title": "What a plant makes"},
                             OUTLINE["scenes"][2]]}
    _, llm = generate(replies((1, json.dumps(two_slides)), (4, [json.dumps(ELEMENTS), json.dumps(SCRIPT)])))
    scripts = [call.messages[-1]["content"] for call in llm.calls if "lecture of this slide" in
               call.messages[-1]["content"]]
    assert len(scripts) == 2
    assert "This is the first slide: open the lesson with a short greeting" in scripts[0]
    assert "ended with" not in scripts[0]
    assert "This is the last slide: carry on without a greeting, and end by summing up" in scripts[1]
    assert 'The lecture of the slide before ended with: "Mostly from the air."' in scripts[1]
    assert "1. What a plant needs; 2. What a plant makes; 3. Check" in scripts[1]


def test_every_quiz_question_has_an_explanation_and_no_all_of_the_above() -> None:
    result, _ = generate(replies())
    quiz = result.lesson.scenes[2]
    assert isinstance(quiz, QuizScene) and all(q.explanation for q in quiz.questions)
    lazy = {"questions": [{**QUIZ["questions"][0], "options": ["The soil", "The air", "All of the above"]}]}
    unexplained = {"questions": [{k: v for k, v in QUIZ["questions"][0].items() if k != "explanation"}]}
    result, llm = generate(replies((5, [json.dumps(lazy), json.dumps(unexplained), json.dumps(QUIZ)])))
    problems = [call.messages[-1]["content"] for call in llm.calls[-2:]]
    assert "no 'all of the above'" in problems[0] and "questions.0.explanation" in problems[1]
    assert result.retries == 2


def test_the_explanation_is_shown_after_grading_and_given_to_the_class() -> None:
    from maic_cli.lessons.context import quiz_lines
    from maic_cli.lessons.lesson import Lesson, LessonPlay
    from maic_cli.lessons.player import answer_event
    from maic_cli.lessons.quiz import grade_choice
    from maic_cli.ui.lesson_notes import verdict_lines

    lesson = Lesson.model_validate({"title": "T", "scenes": [{"type": "quiz", "id": "z", "questions": [
        {"id": "q", "type": "single", "question": "Which?", "options": ["a", "b"], "answer": "B",
         "explanation": "Because b is right."}]}]})
    quiz = lesson.scenes[0]
    assert isinstance(quiz, QuizScene)
    graded = grade_choice(quiz.questions[0], "A")
    assert verdict_lines(answer_event(quiz, quiz.questions[0], graded))[-1] == "Why: Because b is right."
    play = LessonPlay(lesson=lesson)
    play.progress.answers["z/q"] = graded
    assert quiz_lines(play)[0].endswith("Why: Because b is right.")
