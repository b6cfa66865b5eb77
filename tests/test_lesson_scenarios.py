"""Scenarios that play a lesson: the file, the learner's part, and what the lesson must do."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from maic_cli.cli.app import app
from maic_cli.engine.events import AgentStartEvent, QuizScoreEvent, SceneEvent
from maic_cli.errors import InputError
from maic_cli.evaluation.judge_rounds import rounds_to_judge
from maic_cli.evaluation.lesson_expect import LessonExpectations, LessonLog, check_lesson
from maic_cli.evaluation.scenarios import load_scenario, scenario_lesson
from maic_cli.store.lessons import load_lesson
from maic_cli.store.transcript import LearnerLine, RoundLine, read_transcript
from tests.helpers import decision, reply

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "lessons" / "photosynthesis.yaml"


def _scenario(tmp_path: Path, lesson_block: str) -> Path:
    (tmp_path / "scenarios" / "lessons").mkdir(parents=True, exist_ok=True)
    (tmp_path / "scenarios" / "lessons" / "photo.yaml").write_text(SAMPLE.read_text(encoding="utf-8"),
                                                                   encoding="utf-8")
    path = tmp_path / "scenarios" / "lesson.yaml"
    path.write_text("class:\n  agents: [teacher, curious_student]\nlesson:\n" + lesson_block, encoding="utf-8")
    return path


def test_a_scenario_may_play_a_lesson_without_messages(tmp_path: Path) -> None:
    path = _scenario(tmp_path, "  file: lessons/photo.yaml\n  answers: {q1: C, q2: [A, C], check/q3: energy}\n"
                               "  expect: {reaches_scene: check, quiz_score: [3, 7]}\n")
    scenario = load_scenario(path)
    lesson = scenario_lesson(scenario, path)
    assert lesson is not None and lesson.title.startswith("How plants make food")
    assert scenario.lesson is not None and scenario.lesson.answers == {"q1": "C", "q2": "A, C", "check/q3": "energy"}


@pytest.mark.parametrize(("block", "message"), [
    ("  file: lessons/nope.yaml\n", "lesson.file: lessons/nope.yaml: no such lesson file"),
    ("  file: lessons/photo.yaml\n  expect: {reaches_scene: quizz}\n", "reaches_scene: no scene 'quizz'"),
    ("  file: lessons/photo.yaml\n  expect: {reaches_scene: 9}\n", "the lesson has scenes 1 to 5, not 9"),
    ("  file: lessons/photo.yaml\n  answers: {q9: A}\n", "lesson.answers: no question 'q9'"),
    ("  file: lessons/photo.yaml\n  questions: [{scene: nowhere, text: why?}]\n", "no scene 'nowhere'"),
    ("  file: lessons/photo.yaml\n  expect: {discussion_speakers: {needs: [teacher]}}\n",
     "'needs' is not a discussion scene"),
    ("  file: lessons/photo.yaml\n  expect: {quiz_score: [8, 9]}\n", "give at most 7 points"),
])
def test_what_a_scenario_says_of_its_lesson_is_checked(tmp_path: Path, block: str, message: str) -> None:
    path = _scenario(tmp_path, block)
    with pytest.raises(InputError, match=message):
        scenario_lesson(load_scenario(path), path)


def test_a_scenario_names_a_built_in_lesson_instead_of_carrying_a_copy(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MAIC_HOME", str(tmp_path / "home"))
    path = _scenario(tmp_path, "  name: fractions\n")
    lesson = scenario_lesson(load_scenario(path), path)
    assert lesson is not None and "fraction" in lesson.title.lower()
    path = _scenario(tmp_path, "  name: no-such-lesson\n")
    with pytest.raises(InputError, match=r"lesson.name: no lesson named 'no-such-lesson' \(lessons: .*photosynthesis"):
        scenario_lesson(load_scenario(path), path)


@pytest.mark.parametrize("block", ["  name: ../etc/passwd\n", "  name: fractions\n  file: lessons/photo.yaml\n",
                                   "  answers: {q1: C}\n"])
def test_a_scenario_lesson_is_one_name_or_one_file(tmp_path: Path, block: str) -> None:
    with pytest.raises(InputError, match=r"lesson.yaml:\d+: lesson"):
        load_scenario(_scenario(tmp_path, block))


def test_a_lesson_path_is_relative_and_a_range_is_ordered(tmp_path: Path) -> None:
    path = _scenario(tmp_path, "  file: /etc/passwd\n")
    with pytest.raises(InputError, match=r"lesson.yaml:4: lesson.file: a lesson file relative to the scenario file, "
                                         r"inside its folder"):
        load_scenario(path)
    path = _scenario(tmp_path, "  file: lessons/photo.yaml\n  expect: {quiz_score: [5, 2]}\n")
    with pytest.raises(InputError, match="low <= high"):
        load_scenario(path)


def _played(*events: object) -> LessonLog:
    log = LessonLog()
    for event in events:
        log.observe(event)  # type: ignore[arg-type]
    return log


def test_the_lesson_check_reads_the_events() -> None:
    lesson = load_lesson(SAMPLE)
    log = _played(SceneEvent(index=0, scene_id="needs", kind="slide", slide=0),
                  SceneEvent(index=3, scene_id="talk", kind="discussion"),
                  AgentStartEvent(message_id="m1", agent_id="curious_student", agent_name="C", avatar="", color=""),
                  SceneEvent(index=4, scene_id="check", kind="quiz"),
                  AgentStartEvent(message_id="m2", agent_id="teacher", agent_name="T", avatar="", color=""),
                  QuizScoreEvent(scene_id="check", points=5, max_points=7, lesson_points=5, lesson_max_points=7))
    assert log.speakers == {"talk": ["curious_student"]}  # the teacher spoke in the quiz, not the discussion
    ok = LessonExpectations(reaches_scene="check", quiz_score=(4, 7), discussion_speakers={"talk": ["curious_student"]})
    assert check_lesson(ok, log, lesson) == []
    strict = LessonExpectations.model_validate({"reaches_scene": 5, "quiz_score": 6,
                                                "discussion_speakers": {"talk": ["teacher"]}})
    assert check_lesson(strict, log, lesson) == ["quiz score 5/7, expected 6–6",
                                                 "teacher did not speak in discussion talk"]


def test_a_lesson_that_stopped_early_fails_its_expectations() -> None:
    lesson = load_lesson(SAMPLE)
    log = _played(SceneEvent(index=0, scene_id="needs", kind="slide", slide=0),
                  SceneEvent(index=1, scene_id="equation", kind="slide", slide=1))
    failures = check_lesson(LessonExpectations(reaches_scene="check", quiz_score=(0, 7)), log, lesson)
    assert failures == ["the lesson reached scene 2 (equation), expected scene 5 (check)",
                        "no quiz was finished, expected a score of 0–7"]


# -- maic run plays the lesson ---------------------------------------------------------------------
PLANTS = """title: Plants
scenes:
  - type: slide
    id: s1
    title: What plants need
    elements: [{id: e1, content: Light}]
    script: [{say: "Plants need light."}, {spotlight: e1}, {say: "And water."}]
  - type: slide
    id: s2
    title: The leaf
    elements: [{id: leaf, type: image, content: a green leaf}]
  - type: discussion
    id: d1
    topic: Plants in the dark
    initiator: curious_student
  - type: quiz
    id: q
    questions:
      - {id: q1, type: single, question: "Energy?", options: [Soil, Light], answer: B, points: 2}
      - {id: q2, type: short, question: "Why light?", rubric: "Energy.", points: 3}
"""

PLAN = """id: plants
class:
  agents: [teacher, curious_student]
expect: {first_speaker: teacher}
lesson:
  file: plants.yaml
  questions:
    - {scene: s1, after_step: 1, text: "Why light?"}
  answers: {q1: B, q2: "It gives energy."}
  expect: {reaches_scene: q, quiz_score: %s, discussion_speakers: {d1: [curious_student]}}
"""

# In order: the learner's question (director, teacher, director), the live lecture of s2 (the teacher,
# one turn), the discussion (its initiator, director, teacher, director), the short answer's grade.
PLAYED = [decision("teacher"), reply("Light is energy."), decision("USER"),
          reply("Leaves catch the light."),
          reply("I think it dies."), decision("teacher"), reply("Yes, it starves."), decision("END"),
          '{"points": 2, "comment": "Mentions energy."}']


def _run_lesson(tmp_path: Path, score: str) -> tuple[int, str, Path]:
    (tmp_path / "plants.yaml").write_text(PLANTS, encoding="utf-8")
    scenario = tmp_path / "plan.yaml"
    scenario.write_text(PLAN % score, encoding="utf-8")
    script = tmp_path / "script.json"
    script.write_text(json.dumps(PLAYED), encoding="utf-8")
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["run", str(scenario), "--model", f"scripted:{script}", "--out", str(out),
                                      "--plain"])
    return result.exit_code, result.output, out


def test_maic_run_plays_a_lesson_with_its_learner_part(tmp_path: Path) -> None:
    code, output, out = _run_lesson(tmp_path, "[4, 5]")
    assert code == 0, output
    report = json.loads((out / "report.json").read_text())
    run = report["runs"][0]
    assert run["failures"] == [] and run["status"] == "complete"
    # Three rounds of the report: the question, the live lecture, the discussion (not the scripted lecture).
    assert run["speaker_sequence"] == [["teacher"], ["teacher"], ["curious_student", "teacher"]]
    transcript = read_transcript(Path(run["transcript"]))
    events = [event for _, event in transcript.events()]
    scenes = [e.scene_id for e in events if e.type == "scene"]
    assert scenes == ["s1", "s2", "d1", "q"]
    said = "".join(e.content for e in events if e.type == "text_delta")
    # The lecture stopped after its first step, the question was answered, the lecture went on.
    assert said.index("Plants need light.") < said.index("Light is energy.") < said.index("And water.")
    learner = [e.text for e in transcript.entries if isinstance(e, LearnerLine)]
    assert learner == ["Why light?"]
    answers = [(e.question_id, e.points, e.correct) for e in events if e.type == "quiz_answer"]
    assert answers == [("q1", 2.0, True), ("q2", 2.0, False)]
    score = next(e for e in events if e.type == "quiz_score")
    assert (score.points, score.max_points) == (4.0, 5)


def test_a_question_after_the_slides_last_step_is_asked_when_the_lecture_ends(tmp_path: Path) -> None:
    """after_step = the script's length: nothing is left to stop, the lecture ends by itself (it was
    cancelled with no step left to land on, and the run ended as if by Ctrl-C)."""
    (tmp_path / "plants.yaml").write_text(PLANTS, encoding="utf-8")
    scenario = tmp_path / "plan.yaml"
    scenario.write_text((PLAN % "[4, 5]").replace("after_step: 1", "after_step: 3"), encoding="utf-8")
    script = tmp_path / "script.json"
    script.write_text(json.dumps(PLAYED), encoding="utf-8")
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["run", str(scenario), "--model", f"scripted:{script}", "--out", str(out),
                                      "--plain"])
    assert result.exit_code == 0, result.output
    run = json.loads((out / "report.json").read_text())["runs"][0]
    assert run["status"] == "complete" and run["failures"] == []
    events = [event for _, event in read_transcript(Path(run["transcript"])).events()]
    said = "".join(e.content for e in events if e.type == "text_delta")
    assert said.index("And water.") < said.index("Light is energy.")  # the whole lecture, then the question


def test_a_lesson_that_misses_its_expectations_fails_the_run(tmp_path: Path) -> None:
    code, output, out = _run_lesson(tmp_path, "5")
    assert code == 1, output
    run = json.loads((out / "report.json").read_text())["runs"][0]
    assert run["failures"] == ["lesson: quiz score 4/5, expected 5–5"]


def test_replay_check_reruns_a_lesson_and_finds_a_changed_reply(tmp_path: Path) -> None:
    code, output, out = _run_lesson(tmp_path, "[4, 5]")
    assert code == 0, output
    transcript = next((out / "transcripts").glob("*.jsonl"))
    rounds = [e for e in read_transcript(transcript).entries if isinstance(e, RoundLine)]
    recorded = [r.overrides for r in rounds]  # lecture, question, lecture, s2, d1
    assert [o.settings() if o else {} for o in recorded] == [
        {}, {}, {}, {"max_turns": 1}, {"discussion_topic": "Plants in the dark", "initiator_id": "curious_student"}]
    assert [o.lesson.task for o in recorded if o and o.lesson] == ["question", "lecture", "discuss"]
    result = CliRunner().invoke(app, ["replay", str(transcript), "--check"])
    assert result.exit_code == 0, result.output  # the lesson's steps as recorded, its rounds played again
    lines = transcript.read_text(encoding="utf-8").splitlines()
    changed = [line.replace("Yes, it starves.", "No, it thrives.") if '"llm_call"' in line else line for line in lines]
    transcript.write_text("\n".join(changed) + "\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["replay", str(transcript), "--check"])
    assert result.exit_code == 1 and "No, it thrives." in result.output


def test_a_scripted_lecture_is_no_round_of_the_reports_or_the_judge(tmp_path: Path) -> None:
    code, output, out = _run_lesson(tmp_path, "[4, 5]")
    assert code == 0, output
    run = json.loads((out / "report.json").read_text())["runs"][0]
    transcript = read_transcript(Path(run["transcript"]))
    lectures = [e.lecture for e in transcript.entries if isinstance(e, RoundLine)]
    assert lectures == [True, False, True, False, False]  # s1 lectured, asked, resumed; s2 live; d1
    judged = rounds_to_judge(transcript)
    assert [[t.speaker for t in r.turns] for r in judged] == run["speaker_sequence"]
    assert [r.learner for r in judged] == ["Why light?", None, None]
    with (out / "turns.csv").open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert [(row["round"], row["speaker"]) for row in rows] == [
        ("1", "teacher"), ("2", "teacher"), ("3", "curious_student"), ("3", "teacher")]
