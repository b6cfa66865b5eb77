"""A simulated learner in a lesson scenario (questions, quizzes, learning gain), in chat (--watch) and --style."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from maic_cli.cli.app import app
from maic_cli.lessons.learner_quiz import read_answer
from maic_cli.lessons.lesson import QuizQuestion
from maic_cli.store.transcript import LearnerLine, read_transcript
from tests.helpers import reply

LESSON = """title: Why the sky is blue
scenes:
  - type: slide
    id: sky
    title: Scattering
    elements:
      - {id: idea, type: text, content: "Short (blue) light scatters most in air."}
    script:
      - say: "Sunlight holds every colour; air scatters the blue part most."
  - type: quiz
    id: check
    title: Check
    questions:
      - id: q1
        type: single
        question: Which colour does air scatter most?
        options: ["Blue", "Red", "Green"]
        answer: A
"""


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def script(path: Path, *replies: object) -> str:
    return f"scripted:{write(path, json.dumps(list(replies)))}"


def test_the_learner_asks_after_a_slide_answers_the_quiz_and_gains(tmp_path: Path) -> None:
    write(tmp_path / "sky.yaml", LESSON)
    write(tmp_path / "s.yaml", "id: sky_learner\nclass: {agents: [teacher]}\n"
                               "learner: {simulated: {name: Lu, misconceptions: [the sky reflects the sea]}}\n"
                               "lesson: {file: sky.yaml, pre_post: true, expect: {quiz_score: [1, 1]}}\n")
    # the learner: the quiz before the lesson (wrong), a question after the slide, the quiz, the quiz after
    learner = script(tmp_path / "learner.json", "I think B", "But why not violet?", "A) Blue", "a")
    teacher = script(tmp_path / "teacher.json", reply("Our eyes see blue better than violet."))
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["run", str(tmp_path / "s.yaml"), "-m", teacher, "--learner-model", learner,
                                      "-o", str(out), "--plain"])
    assert result.exit_code == 0, result.output
    run = json.loads((out / "runs" / "sky_learner__scripted-teacher__r1.json").read_text(encoding="utf-8"))
    assert run["status"] == "complete" and run["failures"] == []
    assert [r["learner"] for r in run["rounds"]] == ["But why not violet?"]
    assert run["learning"] == {"pre": 0.0, "post": 1.0, "gain": 1.0}
    assert len(run["learner_calls"]) == 4 and [c["purpose"] for c in run["calls"]] == ["agent"]
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report["learning"]["overall"]["gain"]["value"] == 1.0
    assert "## Learning gain" in (out / "report.md").read_text(encoding="utf-8")
    assert '<table class="learning">' in (out / "report.html").read_text(encoding="utf-8")
    assert (out / "learning.csv").read_text(encoding="utf-8").splitlines()[1].endswith(",0.0,1.0,1.0")
    transcript = read_transcript(out / "transcripts" / "sky_learner__scripted-teacher__r1.jsonl")
    marked = [e for e in transcript.entries if isinstance(e, LearnerLine)]
    assert [(e.text, e.simulated) for e in marked] == [("But why not violet?", "Lu")]
    events = [event.type for _, event in transcript.events()]
    assert "quiz_answer" in events


def test_a_quiz_reply_is_read_as_option_letters_only() -> None:
    single = QuizQuestion(id="q", type="single", question="?", options=["x", "y", "z"], answer=["B"])
    many = QuizQuestion(id="q", type="multiple", question="?", options=["x", "y", "z"], answer=["A", "C"])
    assert read_answer(single, "I would say B) y, because...") == "B"
    assert read_answer(single, "Answer: c") == "C"
    assert read_answer(many, "A and C, I think") == "A, C"
    assert read_answer(single, "no idea at all") == "no idea at all"  # then graded as not understood
    assert read_answer(single, "Z") == "Z"


def test_lesson_answers_and_a_simulated_learner_do_not_mix(tmp_path: Path) -> None:
    write(tmp_path / "sky.yaml", LESSON)
    write(tmp_path / "s.yaml", "class: {agents: [teacher]}\nlearner: {simulated: fraction_mixup}\n"
                               "lesson: {file: sky.yaml, answers: {q1: A}}\n")
    result = CliRunner().invoke(app, ["run", str(tmp_path / "s.yaml"), "-m", "demo", "-o", str(tmp_path / "o")])
    assert result.exit_code == 2 and "answers the quizzes itself" in result.output
    write(tmp_path / "s.yaml", "class: {agents: [teacher]}\nlesson: {file: sky.yaml, pre_post: true}\n")
    result = CliRunner().invoke(app, ["run", str(tmp_path / "s.yaml"), "-m", "demo", "-o", str(tmp_path / "o")])
    assert result.exit_code == 2 and "pre_post" in result.output


def test_chat_watch_seats_a_simulated_learner_and_marks_its_lines(tmp_path: Path) -> None:
    learner = script(tmp_path / "learner.json", "/save /tmp/evil.json", "Got it, thanks! <done>")
    teacher = script(tmp_path / "teacher.json", reply("Find a common denominator."), reply("Sixths."),
                     reply("Glad to help."))
    transcript = tmp_path / "watch.jsonl"
    result = CliRunner().invoke(app, ["chat", "--watch", "fraction_mixup", "--learner-model", learner, "-m", teacher,
                                      "--agents", "teacher", "--plain", "--transcript", str(transcript),
                                      "-s", str(tmp_path / "s.json")],
                                input="")
    assert result.exit_code == 0, result.output
    assert "Maya (simulated" in result.output
    assert not Path("/tmp/evil.json").exists()
    lines = [e for e in read_transcript(transcript).entries if isinstance(e, LearnerLine)]
    assert [e.text for e in lines] == [
        "I added 1/2 and 1/3 and got 2/5, but my friend says that is wrong. Who is right?",
        "/save /tmp/evil.json",  # a model's line is said as it is, and never runs a chat command
        "Got it, thanks!"]
    assert all(e.simulated == "Maya" and e.model == learner for e in lines)
    assert [c.purpose for c in read_transcript(transcript).calls()].count("learner") == 2


def test_chat_watch_refuses_what_it_cannot_do(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["chat", "--watch", "nobody", "-m", "demo", "--plain"], input="")
    assert result.exit_code == 2 and "no such learner file" in result.output
    result = CliRunner().invoke(app, ["chat", "--learner-model", "demo", "-m", "demo", "--plain"], input="")
    assert result.exit_code == 2 and "--watch" in result.output


def test_style_names_a_built_in_prompt_set(tmp_path: Path) -> None:
    write(tmp_path / "s.yaml", "id: st\nclass: {agents: [teacher]}\nmessages: [Is 1/2 + 1/3 = 2/5?]\n")
    teacher = script(tmp_path / "t.json", reply("What is a common denominator?"), reply("Sixths."))
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["run", str(tmp_path / "s.yaml"), "-m", teacher, "--style", "socratic",
                                      "--style", "direct", "-o", str(out), "--plain"])
    assert result.exit_code == 0, result.output
    runs = {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in (out / "runs").glob("*.json")}
    assert {r["prompts"] for r in runs.values()} == {"socratic", "direct"}
    transcript = read_transcript(out / "transcripts" / "st__scripted-t__socratic__r1.jsonl")
    system = transcript.calls()[0].messages[0]["content"]
    assert "Socratic questioning" in system and "Never state the final answer" in system
    bad = CliRunner().invoke(app, ["run", str(tmp_path / "s.yaml"), "-m", teacher, "--style", "shouting"])
    assert bad.exit_code == 2 and "no such teaching style" in bad.output
