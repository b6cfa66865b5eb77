"""The rubric check of short answers (lessons/rubric.py) and how quiz grading uses it (lessons/quiz.py):
a small model's grade is checked, never inverted; the inverted cases seen in use; a hosted model's grade stands."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from maic_cli.lessons.lesson import QuizQuestion
from maic_cli.lessons.quiz import grade, grade_short, measure_answer
from maic_cli.lessons.rubric import answer_stems, measure, read_rubric
from maic_cli.llm.scripted import ScriptedLLM, ScriptedReply
from maic_cli.store.lessons import load_lesson

ROOT = Path(__file__).parent.parent
GRADING_SET = ROOT / "tests" / "benchmarks" / "grading_set.yaml"


def lesson_question(lesson: str, question_id: str) -> QuizQuestion:
    for scene in load_lesson(ROOT / "lessons" / lesson).scenes:
        for question in getattr(scene, "questions", []):
            if question.id == question_id:
                return question
    raise AssertionError(f"{lesson}: no question {question_id}")


LIGHT = lesson_question("photosynthesis.yaml", "q3")  # 3 points: energy essential, chlorophyll a bonus
LOOP = lesson_question("python_loops.yaml", "q3")  # 3 points: "it changes on each repetition" essential
# A generated lesson's kind of question: four points, a plain model answer with no marked points.
HEART = QuizQuestion(id="h", type="short", question="What does the heart do?", points=4,
                     rubric="The heart pumps blood around the body, carrying oxygen to the organs.")


def small(*replies: str | ScriptedReply) -> ScriptedLLM:
    """A grader named like the built-in model: its grades are checked against the rubric."""
    return ScriptedLLM(list(replies), name="local")


def run(question: QuizQuestion, answer: str, llm: ScriptedLLM, **kwargs: object):  # type: ignore[no-untyped-def]
    return asyncio.run(grade_short(question, answer, llm, **kwargs))  # type: ignore[arg-type]


# -- reading a rubric ------------------------------------------------------------------------------------
def test_a_rubric_is_read_into_essential_points_bonus_points_and_key_terms() -> None:
    rubric = read_rubric(LIGHT.rubric or "", LIGHT.question)
    assert [p.label for p in rubric.essential] == ["energy"]
    assert [p.label for p in rubric.bonus] == ["chlorophyll or chloroplasts"]
    assert len(rubric.bonus[0].alternatives) == 2  # "or": either one is the point
    words = [t.word for t in rubric.terms]
    assert "glucose" in words and "light" not in words  # the question's own words are no evidence


def test_a_point_of_short_parts_joined_by_and_is_several_points() -> None:
    rubric = read_rubric("Naming gravity and air resistance is essential.", "Why does a ball slow down?")
    assert [p.label for p in rubric.essential] == ["gravity", "air resistance"]


def test_words_are_stemmed_and_synonyms_count() -> None:
    rubric = read_rubric(LOOP.rubric or "", LOOP.question)
    for answer in ("It changed with every iteration.", "a different item on each pass", "it varies each time"):
        assert rubric.essential[0].found_in(answer_stems(answer).affirmed), answer


def test_a_negated_term_is_not_said() -> None:
    assert "energi" not in answer_stems("Light is not a source of energy.").affirmed
    assert "energi" in answer_stems("Light is not a source of energy.").denied
    assert "energi" in answer_stems("Without light there is no energy for the plant.").affirmed  # imagined


# -- the measure alone -----------------------------------------------------------------------------------
@pytest.mark.parametrize(("question", "answer", "verdict", "points"), [
    (LIGHT, "Plants need light because it gives them energy to make food.", "right", 2),
    (LIGHT, "The chlorophyll captures light energy to make glucose.", "right", 3),
    (LIGHT, "So they can see where to grow.", "wrong", 0),
    (LIGHT, "Light is not energy, it just keeps them warm.", "wrong", 0),
    (LOOP, "It holds one item at a time and changes on each pass.", "right", 3),
    (LOOP, "It holds the whole list and never changes.", "wrong", 0),
    (HEART, "It pumps blood through the body.", "right", 4),
    (HEART, "It helps you think.", "wrong", 0),
])
def test_the_measure_decides_plain_cases(question: QuizQuestion, answer: str, verdict: str, points: float) -> None:
    measured = measure_answer(question, answer)
    assert (measured.verdict, measured.points) == (verdict, points), measured.comment
    assert measured.comment


def test_a_yes_no_question_is_read_by_its_answer() -> None:
    rubric = read_rubric("Yes. Zero is even because it divides by 2. Saying that zero is even is essential.",
                         "Is zero an even number?")
    assert measure(rubric, "Yes, it is even.", 2).verdict == "right"
    assert measure(rubric, "No, zero is odd.", 2).points == 0


def test_what_the_measure_cannot_decide_it_says_so() -> None:
    measured = measure_answer(LIGHT, "Light is not a source of energy; plants get their energy from soil.")
    assert measured.verdict == "undecided" and measured.points is None and "both says and denies" in measured.comment


# -- grading with a small model: never inverted -------------------------------------------------------------
def test_a_right_answer_scored_zero_with_no_comment_is_regraded() -> None:
    """The sample lesson: a right answer that matched the rubric got 0/3 with an empty comment."""
    graded = run(LIGHT, "Light gives the plant the energy to turn carbon dioxide and water into glucose.",
                 small('{"points": 0, "comment": ""}'))
    assert graded.points == 3 and graded.correct and graded.graded_by == "rubric"
    assert graded.comment is not None and "energy" in graded.comment


def test_an_inverted_pair_of_grades_on_a_four_point_question_is_caught() -> None:
    """Another lesson: a right answer got 0/4 and a wrong one 2/4."""
    right = run(HEART, "It pumps blood around the body so the organs get oxygen.", small('{"points": 0}'))
    wrong = run(HEART, "It digests the food we eat.", small('{"points": 2, "comment": "Good answer!"}'))
    assert right.points > wrong.points
    assert (right.points, wrong.points) == (4, 0)
    assert wrong.comment is not None and "Good answer" not in wrong.comment and "pumps" in wrong.comment


def test_a_small_models_grade_inside_the_measures_range_stands() -> None:
    graded = run(LIGHT, "It gives them energy.", small('{"points": 3, "comment": "Right."}'))
    assert (graded.points, graded.graded_by) == (3, "model")  # the measure accepts 2 or 3
    assert graded.comment is not None and "“energy”" in graded.comment  # the points found are named


def test_below_full_points_the_comment_says_what_is_missing() -> None:
    graded = run(LIGHT, "It gives them energy.", small('{"points": 2}'))
    assert graded.points == 2 and graded.comment is not None and "chlorophyll" in graded.comment


def test_a_small_model_that_cannot_grade_is_replaced_by_the_measure_where_it_decides() -> None:
    graded = run(LIGHT, "It gives them energy.", small(ScriptedReply(error="server_error")))
    assert (graded.points, graded.graded_by) == (2, "rubric") and graded.comment
    unusable = run(LIGHT, "It gives them energy.", small("A fine answer."))
    assert (unusable.points, unusable.graded_by) == (2, "rubric")


def test_where_nothing_decides_the_answer_is_not_graded() -> None:
    """The small model alone is not trusted (it gave most right answers 0): "not graded", said plainly."""
    llm = small('{"points": 3, "comment": "Right."}')
    graded = run(LIGHT, "Light is not a source of energy; plants get their energy from soil.", llm)
    assert (graded.points, graded.graded_by) == (0, "none")
    assert graded.comment is not None and graded.comment.startswith("not graded: ") and "both says and denies" in \
        graded.comment
    assert llm.calls == []  # its grade could not have counted


def test_the_small_model_is_asked_only_where_its_grade_can_count() -> None:
    llm = small('{"points": 3}')
    assert run(LOOP, "It never changes.", llm).points == 0 and llm.calls == []  # only 0 fits
    assert run(LIGHT, "It gives them energy.", llm).points == 3 and len(llm.calls) == 1  # 2 or 3 fit


def test_small_is_known_by_the_models_name_or_said() -> None:
    wrong = "It digests the food."
    assert run(HEART, wrong, ScriptedLLM(['{"points": 2, "comment": "ok"}'])).points == 2  # hosted: it stands
    assert run(HEART, wrong, ScriptedLLM(['{"points": 2, "comment": "ok"}']), small=True).points == 0
    assert asyncio.run(grade(HEART, wrong, small('{"points": 2, "comment": "ok"}'))).points == 0


def test_a_hosted_models_zero_always_has_a_comment() -> None:
    graded = run(HEART, "It helps you think.", ScriptedLLM(['{"points": 0, "comment": ""}']))
    assert graded.points == 0 and graded.graded_by == "model"
    assert graded.comment and "pumps" in graded.comment
    other = run(HEART, "It pumps blood.", ScriptedLLM(['{"points": 0}']))
    assert other.points == 0 and other.comment == "0 points: the grader gave no reason."  # its grade stands


# -- the set of right and wrong answers --------------------------------------------------------------------
def grading_cases(path: Path) -> list[tuple[QuizQuestion, str, str]]:
    cases = []
    for number, item in enumerate(yaml.safe_load(path.read_text(encoding="utf-8"))):
        if "lesson" in item:
            question = lesson_question(Path(item["lesson"]).name, item["question"])
        else:
            question = QuizQuestion(id=f"g{number}", type="short", question=item["question"],
                                    rubric=item["rubric"], points=item["points"])
        cases += [(question, answer, label) for label in ("right", "wrong") for answer in item[label]]
    return cases


@pytest.mark.parametrize(("name", "decides"), [("grading_set.yaml", 0.85), ("grading_heldout.yaml", 0.6)])
def test_the_measure_never_inverts_the_answer_sets(name: str, decides: float) -> None:
    """Right answers earn at least half the points, wrong ones none, or the measure leaves them to the model."""
    cases = grading_cases(GRADING_SET.parent / name)
    decided = inverted = 0
    for question, answer, label in cases:
        measured = measure_answer(question, answer)
        if measured.points is None:
            assert measured.low < measured.high  # undecided: a range for the model, not a grade
            continue
        decided += 1
        inverted += not (measured.points >= question.points / 2 if label == "right" else measured.points == 0)
    assert len(cases) >= 30
    assert inverted == 0
    assert decided >= decides * len(cases)


# -- any input ---------------------------------------------------------------------------------------------
@settings(max_examples=300, deadline=None)
@given(rubric=st.text(max_size=400), question=st.text(max_size=100), answer=st.text(max_size=400),
       points=st.integers(min_value=1, max_value=100))
def test_any_rubric_and_answer_give_a_bounded_measure(rubric: str, question: str, answer: str, points: int) -> None:
    measured = measure(read_rubric(rubric, question), answer, points)
    assert 0 <= measured.low <= measured.high <= points
    assert measured.points is None or measured.low <= measured.points <= measured.high
    assert measured.comment and len(measured.comment_for(0)) < 2000


def test_a_huge_rubric_and_answer_are_measured_quickly() -> None:
    rubric = "Energy is essential; " * 2000 + "naming x or y is a bonus. " * 2000
    start = time.perf_counter()
    measure(read_rubric(rubric, "q"), "energy " * 100_000, 3)
    assert time.perf_counter() - start < 2.0
