"""The lesson's gate on a small model's speech (maic_cli/replies/gate.py): a pure function, tested alone.

The issue's own sentences (SmolLM2-135M in the fractions lesson) are refused; the lesson's sentences pass;
and two properties hold for any lesson hypothesis makes up: a text made only of lesson sentences always
passes, and a sentence with a number that neither the lesson nor the question holds never does.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from maic_cli.lessons.grounding import lesson_sources
from maic_cli.replies.gate import Ground, build_ground, carried, check, keep_grounded, numbers, passes, sentences
from maic_cli.store.lessons import load_lesson

LESSONS = Path(__file__).parent.parent / "lessons"
QUESTION = "Sam, what do you think: is 6/8 the same as 3/4?"


@pytest.fixture(scope="module")
def fractions() -> Ground:
    lesson = load_lesson(LESSONS / "fractions.yaml")
    return build_ground(lesson_sources(lesson), [QUESTION], names=["Sam", "Ms. Rivera"])


@pytest.mark.parametrize("said", [
    "How to convert fractions into decimals.",  # a fragment of the model's own, not the lesson's
    "1. A fraction says that there are parts equal to a whole; 2.",  # a list cut in two
    "7.65-Euclid's proof of the infinitude of mathematical integers.",
    "3/12 = (4 × 6) / 8.",  # false arithmetic
    "1/4 = half.",
    "You are looking at your hands when they hold yours.",
    "Add one half to it, you get four fifths.",  # 4/5: a number the lesson never says
    "1/5 + 2/5 is 3/10, so add them.",  # the lesson says it is not
    "3/8 of a cake is more than 1/2 of it.",  # the lesson only asks which is more
    "So 2/3 is bigger than 3/4.",  # the question's numbers, put in a claim the lesson never makes
    "Trees get their mass from the fractions.",
    "Yes, it is.",
])
def test_the_issues_sentences_are_refused(fractions: Ground, said: str) -> None:
    verdict = check(said, fractions)
    assert not verdict.passes and verdict.reason


@pytest.mark.parametrize("said", [
    "The parts must be equal.",
    "Divide the top and the bottom by the same number to simplify: 6/8 = 3/4.",
    "Six eighths is three quarters.",  # the lesson's numbers, spoken
    "A half is two quarters, so a half plus a quarter is three quarters.",
    "Sam, the parts must be equal.",  # a name is not a claim
    "Good question.",  # says nothing of the subject
    "The bottom number says how many equal parts the whole is cut into.",
])
def test_the_lessons_own_sentences_and_plain_connections_pass(fractions: Ground, said: str) -> None:
    assert check(said, fractions).passes, check(said, fractions).reason


def test_numbers_are_read_as_the_gate_compares_them() -> None:
    assert numbers("three quarters, a half, 3 quarters, twenty-five, a hundred, 7,5 and 0.75") == [
        "3/4", "1/2", "3/4", "25", "100", "7.5", "0.75"]
    assert numbers("one pizza, the one I ate") == []  # a bare "one" is not a number
    assert numbers("1/2 + 1/4 = 3/4") == ["1/2", "1/4", "3/4"]


def test_keep_grounded_drops_only_what_fails(fractions: Ground) -> None:
    text = "The parts must be equal. 3/12 = (4 × 6) / 8. Good question."
    kept, dropped = keep_grounded(text, fractions)
    assert kept == "The parts must be equal. Good question." and dropped == 1
    assert keep_grounded("7.65 is the answer.", fractions) == ("", 1)


def test_a_line_is_carried_by_its_words_and_all_its_numbers() -> None:
    line = "Divide the top and the bottom by the same number to simplify: 6/8 = 3/4."
    assert carried("You divide top and bottom by the same number: 6/8 = 3/4.", line)
    assert not carried("You divide top and bottom by the same number.", line)  # its numbers are missing


# -- properties ------------------------------------------------------------------------------------------
WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=2, max_size=9)
NUMERAL = st.one_of(st.integers(0, 999).map(str),
                    st.tuples(st.integers(1, 99), st.integers(1, 99)).map(lambda f: f"{f[0]}/{f[1]}"),
                    st.tuples(st.integers(0, 99), st.integers(0, 99)).map(lambda d: f"{d[0]}.{d[1]}"))
TOKEN = st.one_of(WORD, WORD, WORD, NUMERAL, st.sampled_from(["=", "+", "not", "never", "more", "than", "a", "half"]))
SENTENCE = st.lists(TOKEN, min_size=1, max_size=14).map(lambda words: " ".join(words).capitalize() + ".")
LESSON = st.lists(SENTENCE, min_size=1, max_size=12)


@settings(max_examples=150, deadline=None)
@given(LESSON, st.data())
def test_a_text_made_only_of_lesson_sentences_always_passes(lesson: list[str], data: st.DataObject) -> None:
    ground = build_ground(lesson)
    chosen = data.draw(st.lists(st.sampled_from(lesson), min_size=1, max_size=5))
    text = " ".join(chosen)
    assert all(passes(sentence, ground) for sentence in sentences(text))
    assert keep_grounded(text, ground) == (text, 0)


@settings(max_examples=150, deadline=None)
@given(LESSON, st.text(max_size=80), st.data())
def test_a_sentence_with_a_number_absent_from_lesson_and_question_never_passes(
        lesson: list[str], question: str, data: st.DataObject) -> None:
    ground = build_ground(lesson, [question])
    number = data.draw(NUMERAL)
    canonical = numbers(number)
    assume(canonical and not set(canonical) <= ground.numbers)
    base = data.draw(st.one_of(st.sampled_from(lesson), SENTENCE))
    words = base.rstrip(".").split(" ")
    at = data.draw(st.integers(0, len(words)))
    said = " ".join([*words[:at], number, *words[at:]]) + "."
    assert not passes(said, ground)
    assert keep_grounded(said, ground)[0] == ""


@settings(max_examples=150, deadline=None)
@given(st.lists(st.text(max_size=120), max_size=6), st.text(max_size=300))
def test_any_text_is_checked_without_error_and_what_is_kept_passes(lesson: list[str], said: str) -> None:
    ground = build_ground(lesson)
    kept, dropped = keep_grounded(said, ground)
    assert dropped >= 0 and all(passes(sentence, ground) for sentence in sentences(kept))


@pytest.mark.parametrize(("said", "passes_gate"), [
    ("One half is more than three eighths.", True),  # the lesson's direction: 1/2 (4/8) before "more", 3/8 after
    ("Three eighths is more than one half of the cake.", False),  # the sides swapped
    ("So 3/8 of the cake is more than 1/2 of it.", False),
])
def test_a_comparison_keeps_its_sides(said: str, passes_gate: bool) -> None:
    ground = build_ground(["One half is four eighths, and that is one eighth more than three eighths."])
    assert check(said, ground).passes is passes_gate, check(said, ground)
