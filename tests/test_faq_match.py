"""How a learner's question is matched to a lesson's expected questions (lessons/faq.py, lessons/faq_words.py):
paraphrases of a lesson written here matched, near twins not confused, a question the faqs do not hold matched
to nothing, and any faq's own phrasing matching itself (hypothesis, over the built-in lessons and this one)."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from maic_cli.lessons.faq import Expected, expected_questions, match
from maic_cli.lessons.faq_words import fix_typos, normal
from maic_cli.lessons.lesson import Lesson
from maic_cli.store.lessons import load_lesson

RAINBOW = Lesson.model_validate({
    "title": "Rainbows", "scenes": [
        {"type": "slide", "id": "light", "title": "White light is many colours", "elements": [
            {"id": "t", "type": "text", "content": "Sunlight looks white, but it is a mix of every colour. A "
                                                   "raindrop bends each colour by a slightly different amount."},
            {"id": "b", "type": "bullets", "items": ["Red is bent the least", "Violet is bent the most",
                                                     "The colours spread out into a band"]}],
         "faq": [
             {"q": ["Why is a rainbow curved?", "Why does a rainbow make an arc?"],
              "a": "Because every raindrop that sends you a colour sits at the same angle from the point opposite "
                   "the Sun, about 42 degrees, and those drops form a circle around that point."},
             {"q": ["Why is the sky blue?", "What makes the sky look blue?"],
              "a": "Air scatters blue light much more than red light, so blue light reaches your eyes from "
                   "every part of the sky."},
             {"q": ["Which colour is on the outside of a rainbow?", "Is red on the top of a rainbow?"],
              "a": "Red is on the outside, at the top of the arc, and violet is on the inside."},
             {"q": ["Which colour is on the inside of a rainbow?", "Where is violet in a rainbow?"],
              "a": "Violet is on the inside, at the bottom of the arc; red is on the outside."},
             {"q": ["How many colours does a rainbow have?", "Are there really seven colours?"],
              "a": "The colours blend smoothly into each other; seven is only the number of names we give them."}]},
        {"type": "slide", "id": "seeing", "title": "Seeing a rainbow", "elements": [
            {"id": "t", "type": "text", "content": "You see a rainbow when the Sun is behind you and rain is in "
                                                   "front of you, with the Sun low in the sky."}],
         "faq": [
             {"q": ["Can you reach the end of a rainbow?", "Where does a rainbow end?"],
              "a": "No. A rainbow is not a thing in one place: it moves with you, so you can never reach its end."},
             {"q": ["Why do we see rainbows after rain?", "Why does a rainbow need rain?"],
              "a": "The raindrops are what bend and reflect the sunlight, so you need drops in the air in front "
                   "of you and the Sun behind you."},
             {"q": ["Why are rainbows seen in the morning or evening?", "Why not at midday?"],
              "a": "The Sun has to be low, less than about 42 degrees up, or the rainbow would be below the "
                   "horizon."}]}]})


def found(question: str, current: str = "light") -> str | None:
    matched = match(RAINBOW, question, current)
    return matched.expected.faq.phrasings[0] if matched is not None else None


def test_paraphrases_match_their_expected_question() -> None:
    asked = {
        "how come rainbows are bent into a curve": "Why is a rainbow curved?",
        "what colour is at the inside edge?": "Which colour is on the inside of a rainbow?",
        "why is the sky blue": "Why is the sky blue?",
        "does a rainbow really have 7 colours": "How many colours does a rainbow have?",
    }
    for question, expected in asked.items():
        assert found(question) == expected, question
    assert found("could I ever get to the end of the rainbow?", "seeing") == "Can you reach the end of a rainbow?"
    assert found("why can't I see a rainbow at noon", "seeing") == "Why are rainbows seen in the morning or evening?"


def test_a_paraphrase_in_words_the_lesson_never_says_is_missed_rather_than_misread() -> None:
    # "outermost" is no word of the lesson: the question is mostly unknown, so no faq is sure enough (a miss
    # falls back to the lesson's grounded answer); what must never happen is another faq's answer
    assert found("whats the outermost colour of a rainbow?") in (None, "Which colour is on the outside of a rainbow?")


def test_near_twins_are_not_confused() -> None:
    assert found("which colour is on the outside?") == "Which colour is on the outside of a rainbow?"
    assert found("which colour is on the inside?") == "Which colour is on the inside of a rainbow?"
    assert found("is violet on the inside?") == "Which colour is on the inside of a rainbow?"
    # "why is the sky blue" is no question about the rainbow's colours, nor its reverse
    assert found("why is the rainbow blue at the bottom") != "Why is the sky blue?"


def test_a_question_the_faqs_do_not_hold_matches_nothing() -> None:
    for question in ["How old is the Sun?", "What is the capital of Peru?", "can we have a break",
                     "why do cats purr", "how do clouds form?", "what is a double rainbow?"]:
        assert found(question) is None, question
        assert found(question, "seeing") is None, question


def test_spellings_numbers_and_typos_are_one() -> None:
    assert normal("What's the colour of three quarters of a metre?") == "what is the color of 3/4 of a meter?"
    assert normal("Isn't it a half? I don't know") == "is not it 1/2? i do not know"
    assert normal("cut it in half, two halves") == "cut it in half, 2 halves"  # no number: no fraction
    vocabulary = frozenset({"rainbow", "colour", "raindrop", "paper", "clips"})
    assert fix_typos("why is a rainbwo curved", vocabulary) == "why is a rainbow curved"
    assert fix_typos("paperclips", vocabulary) == "paper clips"
    assert fix_typos("stoke", frozenset({"stone", "store"})) == "stoke"  # one edit from two words: kept
    assert fix_typos("cat", vocabulary) == "cat"


def test_a_typo_and_a_british_spelling_still_match() -> None:
    assert found("wich colour is on the outsdie of a rainbow") == "Which colour is on the outside of a rainbow?"
    assert found("what color is on the outside of the rainbow") == "Which colour is on the outside of a rainbow?"


ROOT = Path(__file__).resolve().parents[1]
LESSONS = [load_lesson(p) for p in sorted((ROOT / "lessons").glob("*.yaml"))] + [RAINBOW]
FAQS = [(lesson, expected, phrasing) for lesson in LESSONS for expected in expected_questions(lesson)
        for phrasing in expected.faq.phrasings]


def _said(text: str, shout: bool, mark: str) -> str:
    text = text.rstrip("?.! ")
    return (text.upper() if shout else text.lower()) + mark


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(FAQS), st.booleans(), st.sampled_from(["?", "", " ?", "??", "."]), st.booleans())
def test_any_faqs_own_phrasing_matches_itself(faq: tuple[Lesson, Expected, str], shout: bool, mark: str,
                                              at_its_scene: bool) -> None:
    lesson, expected, phrasing = faq
    matched = match(lesson, _said(phrasing, shout, mark), expected.scene_id if at_its_scene else None)
    assert matched is not None, phrasing
    assert matched.expected.faq.a == expected.faq.a, phrasing
