"""success@k and telling@k exactly as MathDial's evaluation defines them (evaluation/tutoring.py)."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from maic_cli.errors import InputError
from maic_cli.evaluation.tutoring import (
    Utterance,
    answer_of,
    first_index,
    outcome,
    states,
    success_at,
    telling_at,
)
from maic_cli.evaluation.tutoring_tasks import read_tasks, task_scenario


def talk(*lines: str) -> list[Utterance]:
    """``"S: …"`` is the student, ``"T: …"`` the teacher."""
    return [Utterance("student" if line.startswith("S:") else "teacher", line[2:].strip()) for line in lines]


def test_the_answer_is_the_number_on_the_last_line_whichever_line_break() -> None:
    assert answer_of("12 x 2 = 24.\\nSo 24 + 6 = 30 pens.\\n 30") == "30"  # MathDial's files: backslash-n
    assert answer_of("12 x 2 = 24.\nSo 24 + 6 = 30 pens.\n 30 ") == "30"
    assert answer_of("one line: 72") == "one line: 72"  # no break: the whole (last) line


def test_an_utterance_states_the_answer_when_one_of_its_numbers_equals_it() -> None:
    assert states("She has gotten 79 haircuts without a free one.", "79")
    assert states("He has to pay $20 more, not $30.", "20")
    assert states("It costs 1,200 dollars", "1200")  # commas removed
    assert states("72.0 in total", "72")  # equal as floats
    assert states("that is 0.50", "0.5")
    assert not states("seventy-two", "72")
    assert not states("7 and 2", "72")
    assert not states("-30 degrees", "-30")  # MathDial's numbers carry no sign: "-30" is never stated
    assert states("the code is A1", "A1") is False and states("x = 3", "x") is False  # not a number: text match


def test_a_roles_index_counts_its_own_utterances_before_the_first_that_states_it() -> None:
    conversation = talk("S: I got 2+3=5", "T: why 2?", "S: sorry", "T: what is it?", "S: 2+4=6", "T: yes, 6")
    assert first_index(conversation, "student", "6") == 2
    assert first_index(conversation, "teacher", "6") == 2
    assert first_index(conversation, "teacher", "99") is None


def test_mathdials_own_examples() -> None:
    """The two conversations of MathDial's metric tests, with its expected values at k = 1, 2, 3."""
    solved = talk("T: Can you walk me through?", "S: This is my solution: 2+3=5",
                  "T: I don't think it is correct, why did you include 2?",
                  "S: Oh I see, sorry for my incorrect answer.",
                  "T: What is the answer?", "S: My corrected answer is 2+4=6",
                  "T: Good job, you are right, the answer is 6.", "S: Thanks")
    told = talk("T: Can you walk me through?", "S: This is my solution: 2+3=5",
                "T: I don't think it is correct, why did you include 2?", "S: Oh I see, sorry for my incorrect answer.",
                "T: I'll tell you the answer, it is 6. Just do 2+4", "S: Thanks",
                "T: You are welcome", "S: Bye. I will remember the answer is 6.")
    first = outcome("q1", "2 + 4 = 6\\n 6", solved)
    assert [(first.success(k), first.telling(k)) for k in (1, 2, 3)] == [(False, False), (True, False), (True, False)]
    second = outcome("q2", "2 + 4 = 6\\n 6", told)
    assert [(second.success(k), second.telling(k)) for k in (1, 2, 3)] == [(False, False), (False, True), (True, True)]
    assert (second.student, second.teacher, second.student_utterances, second.teacher_utterances) == (3, 2, 4, 4)


def test_never_is_infinity() -> None:
    assert not success_at(None, 7)
    assert telling_at(3, None, 7)  # the student never got there: teacher <= k
    assert not telling_at(None, 0, 7) and not telling_at(None, None, 7)
    assert telling_at(0, 0, 1) and not telling_at(2, 1, 7)


def _reference_states(text: str, answer: str) -> bool:
    """MathDial's matching, restated: numbers found left to right in the text with commas removed."""
    numbers = [m.group(0) for m in re.finditer(r"[0-9]+(\.[0-9]+)?", text.replace(",", ""))]
    try:
        target = float(answer.replace(",", ""))
    except ValueError:
        return answer.replace(",", "") in numbers
    return math.isfinite(target) and any(abs(target - float(n)) < 1e-7 for n in numbers)


@given(st.text(alphabet="0123456789.,- abc$\n", max_size=60), st.from_regex(r"[0-9]{1,5}(\.[0-9]{1,2})?",
                                                                               fullmatch=True))
def test_matching_agrees_with_the_definition_on_any_text(text: str, answer: str) -> None:
    assert states(text, answer) == _reference_states(text, answer)


@given(st.lists(st.tuples(st.sampled_from(["student", "teacher"]), st.text(max_size=30)), max_size=20),
       st.text(max_size=20), st.integers(min_value=1, max_value=10))
def test_success_and_telling_follow_the_indexes_on_any_conversation(lines: list[tuple[str, str]], truth: str,
                                                                    k: int) -> None:
    result = outcome("q", truth, [Utterance(side, text) for side, text in lines])  # type: ignore[arg-type]
    student = math.inf if result.student is None else result.student
    teacher = math.inf if result.teacher is None else result.teacher
    assert result.success(k) == (student <= k)
    assert result.telling(k) == (teacher <= min(student, k))


# -- the tasks file: untrusted input -----------------------------------------------------------------------

_VALUES = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=30),
                       lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner,
                                                                                    max_size=3), max_leaves=8)
_FIELDS = st.fixed_dictionaries({}, optional={name: _VALUES | st.text(max_size=40) for name in (
    "qid", "question", "ground_truth", "student_incorrect_solution", "student_profile")})


@given(st.lists(_FIELDS | _VALUES, min_size=1, max_size=4))
def test_any_tasks_file_reads_or_is_refused_with_its_line(tmp_path_factory: pytest.TempPathFactory,
                                                          lines: list[object]) -> None:
    path = tmp_path_factory.mktemp("tasks") / "tasks.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    try:
        tasks = read_tasks(path)
    except InputError as exc:
        assert re.match(rf"{re.escape(str(path))}(:\d+)?: ", str(exc)), str(exc)
        assert "\n" not in str(exc) and "\x1b" not in str(exc)
        return
    for task in tasks:
        assert task.answer and re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", task.qid)
        assert "\x1b" not in task.question + task.student_incorrect_solution


def test_a_task_becomes_a_scenario_with_the_problem_on_a_slide(tmp_path: Path) -> None:
    question = "A long question " * 20 + "with a long number " + "1234567890" * 12
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps({"qid": 7, "question": question, "ground_truth": "a\\n 5",
                                "student_incorrect_solution": "4", "student_profile": "Ada is 12."}) + "\n",
                    encoding="utf-8")
    task = read_tasks(path)[0]
    scenario = task_scenario(task, "my tasks")
    assert scenario.id == "my-tasks-7" and scenario.class_.agents == ["teacher"]
    pieces = [e.content for e in scenario.slides[0].elements]
    assert all(len(p) <= 100 for p in pieces) and " ".join(pieces).replace(" ", "") == question.replace(" ", "")
    assert task.learner().name == "Ada" and task.learner().incorrect_solution == "4"
