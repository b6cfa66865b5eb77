"""Short answers in the learner's own words (issue 30 item 6): synonyms, number words, other word forms.

The set (tests/benchmarks/paraphrase_set.yaml) holds right and wrong paraphrases of an answer to every built-in
lesson's short question, written before the measure was changed for them.  The measure (lessons/rubric.py), which
decides the built-in model's grades, must never grade a wrong one right, and grades at least as many right ones
right as it did when the words were added (21 of 27; 18 before).
"""

from __future__ import annotations

from pathlib import Path

from maic_cli.lessons.lesson import QuizQuestion
from maic_cli.lessons.quiz import measure_answer
from maic_cli.lessons.rubric import measure, read_rubric
from tests.benchmarks.grading_agreement import entries

SET = Path(__file__).resolve().parent / "benchmarks" / "paraphrase_set.yaml"


def test_no_wrong_paraphrase_is_graded_right_and_most_right_ones_are() -> None:
    items = entries([SET])
    lessons = {entry.question.question for entry in items}
    assert len(lessons) == 4  # every built-in lesson's short question
    wrong_right, right_right, undecided = [], 0, 0
    for entry in items:
        points = measure_answer(entry.question, entry.answer).points
        if points is None:
            undecided += 1
        elif entry.right and points >= entry.question.points / 2:
            right_right += 1
        elif not entry.right and points > 0:
            wrong_right.append(entry.answer)
        assert not (entry.right and points == 0), entry.answer  # a right answer is never graded 0
    assert wrong_right == []
    assert right_right >= 21


def test_number_words_say_what_digits_say() -> None:
    question = QuizQuestion(id="q", type="short", question="How many legs does an insect have?",
                            rubric="An insect has 6 legs. Saying six (6) is essential.", points=1)
    assert measure_answer(question, "It has six legs.").verdict == "right"
    assert measure_answer(question, "Insects walk on 6 legs").verdict == "right"
    rubric = read_rubric("Cut it into three equal parts. Essential: three equal parts.")
    assert measure(rubric, "you make 3 equal pieces", 1).verdict == "right"


def test_an_answer_that_denies_the_question_s_premise_is_not_graded_right() -> None:
    question = QuizQuestion(id="q", type="short", question="Why do plants need light?",
                            rubric="Light gives the energy. Mentioning energy is essential.", points=3)
    measured = measure_answer(question, "Plants do not need light; they get their energy from the soil.")
    assert measured.points is None and measured.verdict == "undecided"
    assert measure_answer(question, "Light gives them energy.").verdict == "right"
