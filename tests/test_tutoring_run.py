"""The tutoring benchmark end to end: tasks in MathDial's format → runs → success@k / telling@k in the reports.

Students and tutors behave in known ways, so every curve is known exactly:

* the student repeats their wrong answer until a tutor's last line asks a question, then gives the right one;
* ``socratic`` asks a question (never a number) on every turn;
* ``teller`` states the answer on every turn and never asks;
* ``patient`` talks twice without asking, then asks on every later turn.

With ``--turns 3`` (k = 1…3) the student speaks four times (S0 = the opening solution, then S1–S3) and the
tutor answers each (T0–T3): socratic → student 1, teacher never; teller → student never, teacher 0;
patient → student 3, teacher never.
"""

from __future__ import annotations

import asyncio
import csv
import json
import sys
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from typer.testing import CliRunner

from maic_cli.cli.app import app
from maic_cli.cli.batch_plan import expand
from maic_cli.evaluation.batch import RunContext, run_all
from maic_cli.llm.pool import ClientPool
from maic_cli.llm.port import LLMRequest
from maic_cli.llm.scripted import FunctionLLM
from maic_cli.report.report_tutoring_html import tutoring_html
from maic_cli.report.reports import load_report
from maic_cli.store.transcript import LearnerLine, read_transcript
from maic_cli.testing.openai_server import LoopbackOpenAIServer
from tests.helpers import reply

TASKS = [
    {"qid": "muffins", "question": "A baker puts 6 muffins in each of 7 boxes and has 4 left. How many muffins?",
     "ground_truth": "6 x 7 = 42 muffins in boxes.\\n42 + 4 = 46 muffins.\\n 46",
     "student_incorrect_solution": "6 + 7 = 13.\\n13 + 4 = 17 muffins.\\n 17",
     "student_profile": "Nora is a 5th grade student. She mixes up adding and multiplying.", "conversation": "x"},
    {"qid": "marbles", "question": "Tom had 3 bags of 14 marbles, gave away 9 and won 5. How many marbles now?",
     "ground_truth": "3 x 14 = 42.\\n42 - 9 = 33.\\n33 + 5 = 38.\\n 38",
     "student_incorrect_solution": "3 x 14 = 42.\\n9 + 5 = 14 lost.\\n42 - 14 = 28.\\n 28",
     "student_profile": "Tom is a 5th grade student."},
]
ANSWERS = {"muffins": ("46", "17"), "marbles": ("38", "28")}
TUTORS: dict[str, Callable[[int, str], str]] = {
    "socratic": lambda turn, answer: "What do you get when you check each step again?",
    "teller": lambda turn, answer: f"The answer is {answer}.",
    "patient": lambda turn, answer: "Let us look at the problem together." if turn < 2 else "Which step is wrong?",
}


def task_of(messages: list[dict[str, Any]]) -> str:
    text = " ".join(str(m.get("content", "")) for m in messages)
    return "muffins" if "muffin" in text else "marbles"


def student(messages: list[dict[str, Any]]) -> str:
    """Corrects themselves only after a question."""
    right, wrong = ANSWERS[task_of(messages)]
    last = messages[-1]["content"] if messages and messages[-1].get("role") == "user" else ""
    return f"Oh, so it is {right} in the end." if "?" in last else f"I still think it is {wrong}."


class Tutors:
    """Each tutor's behaviour by its turn in the run (runs are played one at a time: -j 1)."""

    def __init__(self) -> None:
        self.turns: dict[tuple[str, str], int] = defaultdict(int)

    def __call__(self, tutor: str, messages: list[dict[str, Any]]) -> str:
        task = task_of(messages)
        turn = self.turns[tutor, task]
        self.turns[tutor, task] += 1
        return reply(TUTORS[tutor](turn, ANSWERS[task][0]))


def write_tasks(tmp_path: Path) -> Path:
    path = tmp_path / "tasks.jsonl"
    path.write_text("".join(json.dumps(t) + "\n" for t in TASKS) + "\n", encoding="utf-8")
    return path


EXPECTED = {  # k = 1, 2, 3: (success, telling) per task
    "socratic": {"success": [1.0, 1.0, 1.0], "telling": [0.0, 0.0, 0.0]},
    "teller": {"success": [0.0, 0.0, 0.0], "telling": [1.0, 1.0, 1.0]},
    "patient": {"success": [0.0, 0.0, 1.0], "telling": [0.0, 0.0, 0.0]},
}
INDEXES = {"socratic": (1, None), "teller": (None, 0), "patient": (3, None)}


def values(curve: dict[str, Any], metric: str) -> list[float]:
    return [entry["value"] for entry in curve[metric]]


def test_tutoring_tasks_through_the_runner(tmp_path: Path) -> None:
    tutors = Tutors()

    def build(spec: Any) -> FunctionLLM:
        name = spec.raw.split("/")[-1]
        if name == "student":
            return FunctionLLM(lambda request: student(request.messages), name=spec.raw)

        def tutor(request: LLMRequest) -> str:
            assert request.purpose == "agent"  # one tutor: no director call
            return tutors(name, request.messages)
        return FunctionLLM(tutor, name=spec.raw)

    specs = expand([write_tasks(tmp_path)], ["fake/socratic", "fake/teller", "fake/patient"], 1, None, [],
                   learner_model="fake/student", turns=3)
    assert len(specs) == 6 and all(s.learner is not None and s.learner.turns == 4 for s in specs)
    context = RunContext(out=tmp_path / "out", clients=ClientPool(build))
    results, _ = asyncio.run(run_all(specs, context, 1, lambda result: None))
    for result in results:
        tutor = result.model.split("/")[-1]
        assert result.status == "complete", result.error
        assert result.tutoring is not None
        assert (result.tutoring.student, result.tutoring.teacher) == INDEXES[tutor], result.run_id
        assert result.tutoring.student_utterances == 4 and result.tutoring.teacher_utterances == 4
        assert [c.purpose for c in result.calls] == ["agent"] * 4  # the class's calls
        assert [c.purpose for c in result.learner_calls] == ["learner"] * 3  # the student's, apart
        assert result.learner == TASKS[0]["student_profile"].split()[0] or result.learner == "Tom"
    from maic_cli.report.reports import build_report

    report = build_report(results, {})
    assert report.tutoring is not None and report.simulated_learner is not None
    for tutor, expected in EXPECTED.items():
        curve = report.tutoring.by_model[f"fake/{tutor}"].model_dump()
        assert curve["tasks"] == 2
        assert values(curve, "success") == expected["success"]
        assert values(curve, "telling") == expected["telling"]
    overall = report.tutoring.overall.model_dump()
    assert values(overall, "success") == pytest.approx([1 / 3, 1 / 3, 2 / 3], abs=1e-4)
    assert values(overall, "telling") == pytest.approx([1 / 3] * 3, abs=1e-4)
    assert report.tutoring.k == [1, 2, 3]
    assert report.simulated_learner.overall.calls == 18
    class_agent_calls = sum(t.calls for t in report.overall.tokens.values())
    assert class_agent_calls == 24  # the learner's 18 calls are not the class's


def test_tutoring_through_the_loopback_server_and_the_cli(tmp_path: Path) -> None:
    tutors = Tutors()

    def respond(body: dict[str, Any]) -> str:
        name = str(body.get("model", "")).split("/")[-1]
        messages = body.get("messages") or []
        return student(messages) if name == "student" else tutors(name, messages)

    with LoopbackOpenAIServer(responder=respond) as server:
        out = tmp_path / "out"
        result = CliRunner().invoke(app, ["run", str(write_tasks(tmp_path)), "-m", "openai/socratic", "-m",
                                          "openai/teller", "--learner-model", "openai/student", "--turns", "3",
                                          "--api-base", server.base_url, "-j", "1", "-o", str(out), "--plain"])
        bodies = list(server.requests)
    assert result.exit_code == 0, result.output
    assert "tutoring: success@k / telling@k" in result.output and "100%/0%" in result.output
    assert {b["model"] for b in bodies} == {"socratic", "teller", "student"}
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    tutoring = report["tutoring"]
    for tutor in ("socratic", "teller"):
        curve = tutoring["by_model"][f"openai/{tutor}"]
        assert values(curve, "success") == EXPECTED[tutor]["success"]
        assert values(curve, "telling") == EXPECTED[tutor]["telling"]
    pair = tutoring["comparisons"]["by_model"][0]
    assert (pair["a"], pair["b"]) == ("openai/socratic", "openai/teller")
    success_at_1 = next(m for m in pair["metrics"] if m["metric"] == "success@1")
    assert success_at_1["difference"] == 1.0 and success_at_1["verdict"] == "larger than the noise"
    runs = {r["run_id"]: r for r in report["runs"]}
    assert runs["tasks-muffins__openai-teller__r1"]["tutoring"]["teacher"] == 0
    # report.md, the CSVs and the chart
    markdown = (out / "report.md").read_text(encoding="utf-8")
    assert "## Tutoring: success@k and telling@k" in markdown and "openai/socratic success" in markdown
    rows = list(csv.DictReader((out / "tutoring.csv").read_text(encoding="utf-8").splitlines()))
    assert len(rows) == 4
    teller = next(r for r in rows if r["run_id"] == "tasks-marbles__openai-teller__r1")
    assert (teller["student_index"], teller["teacher_index"], teller["success@3"], teller["telling@1"]) == \
        ("", "0", "0", "1")
    curves = list(csv.DictReader((out / "tutoring_curves.csv").read_text(encoding="utf-8").splitlines()))
    assert {(r["grouping"], r["group"], r["k"], r["success"]) for r in curves} >= {
        ("by_model", "openai/socratic", "1", "1.0"), ("by_model", "openai/teller", "3", "0.0")}
    page = (out / "report.html").read_text(encoding="utf-8")
    assert 'data-chart="tutoring_all"' in page and 'data-chart="tutoring_by_model"' in page
    with mock.patch.dict(sys.modules, {"matplotlib": None}):  # without matplotlib: the tables, and how to get
        section = tutoring_html(load_report(out / "report.json"))  # the curves where they would be
    assert 'data-chart="tutoring' not in section and 'data-missing="tutoring_by_model"' in section
    assert "pip install 'maic-cli[report]'" in section and '<table class="tutoring">' in section
    # the transcript marks the student's lines and records its calls
    transcript = read_transcript(out / "transcripts" / "tasks-muffins__openai-socratic__r1.jsonl")
    lines = [e for e in transcript.entries if isinstance(e, LearnerLine)]
    assert len(lines) == 4 and all((e.simulated, e.model) == ("Nora", "openai/student") for e in lines)
    assert lines[0].text.startswith("Here is my solution:\n6 + 7 = 13")
    assert [c.purpose for c in transcript.calls()].count("learner") == 3
    check = CliRunner().invoke(app, ["replay", str(transcript.path), "--check"])
    assert check.exit_code == 0, check.output


def test_the_students_model_failing_ends_the_run_with_one_line(tmp_path: Path) -> None:
    tutor_script = tmp_path / "tutor.json"
    tutor_script.write_text(json.dumps([reply("Why?")] * 8), encoding="utf-8")
    learner_script = tmp_path / "student.json"
    learner_script.write_text(json.dumps([{"error": "server_error"}]), encoding="utf-8")
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["run", str(write_tasks(tmp_path)), "-m", f"scripted:{tutor_script}",
                                      "--learner-model", f"scripted:{learner_script}", "-o", str(out), "--plain"])
    assert result.exit_code == 1
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert all(r["status"] == "error" and r["error"].startswith("simulated learner:") for r in report["runs"])
    assert report["tutoring"]["left_out"] == 2 and report["tutoring"]["overall"]["tasks"] == 0
    assert "Traceback" not in result.output


@pytest.mark.parametrize(("line", "problem"), [
    ("not json", r"tasks\.jsonl:1: not a JSON line"),
    ('["a list"]', r"tasks\.jsonl:1: a task is a JSON object"),
    ('{"qid": "a", "question": "q?"}', r"tasks\.jsonl:1: ground_truth: Field required"),
    ('{"qid": "../x", "question": "q", "ground_truth": "1", "student_incorrect_solution": "2"}',
     r"tasks\.jsonl:1: qid: .*plain id"),
    ('{"qid": "a", "question": "q", "ground_truth": "so\\\\n ", "student_incorrect_solution": "2"}',
     r"tasks\.jsonl:1: ground_truth: its last line holds no answer"),
])
def test_a_bad_task_line_is_refused_with_its_line_and_field(tmp_path: Path, line: str, problem: str) -> None:
    path = tmp_path / "tasks.jsonl"
    path.write_text(line + "\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["run", str(path), "-m", "demo", "-o", str(tmp_path / "o"), "--plain"])
    assert result.exit_code == 2
    assert result.output.count("\n") <= 2 and "Traceback" not in result.output
    import re

    assert re.search(problem, result.output), result.output


def test_a_scenario_with_a_simulated_learner_runs_and_is_marked(tmp_path: Path) -> None:
    (tmp_path / "s.yaml").write_text(
        "id: watch\nclass: {agents: [teacher]}\nlearner: {simulated: fraction_mixup, turns: 2}\n"
        "expect: {first_speaker: teacher}\n", encoding="utf-8")
    tutor = tmp_path / "tutor.json"
    tutor.write_text(json.dumps([reply("Good question: what is a common denominator?"), reply("Yes.")]),
                     encoding="utf-8")
    learner = tmp_path / "learner.json"
    learner.write_text(json.dumps(["Is it 5/6? <done>"]), encoding="utf-8")
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["run", str(tmp_path / "s.yaml"), "-m", f"scripted:{tutor}",
                                      "--learner-model", f"scripted:{learner}", "-o", str(out), "--plain"])
    assert result.exit_code == 0, result.output
    run = json.loads((out / "runs" / "watch__scripted-tutor__r1.json").read_text(encoding="utf-8"))
    assert run["learner"] == "Maya" and run["tutoring"] is None and len(run["rounds"]) == 2
    assert [r["learner"] for r in run["rounds"]] == [
        "I added 1/2 and 1/3 and got 2/5, but my friend says that is wrong. Who is right?", "Is it 5/6?"]
    assert len(run["learner_calls"]) == 1 and len(run["calls"]) == 2
    assert "## Simulated learner" in (out / "report.md").read_text(encoding="utf-8")
