"""Composed answers read as prose (replies/prose.py, lessons/grounding.py's ``fallback_text``): for any lesson
(hypothesis), no slide title glued in front, no sentence said twice, no word cut short, no stray mark or
list word, a capital first and an end mark last; the issue's own answers are caught by ``problems``."""

from __future__ import annotations

import string

from hypothesis import given, settings
from hypothesis import strategies as st

from maic_cli.lessons.grounding import fallback_text, ground
from maic_cli.lessons.lesson import Lesson
from maic_cli.replies.prose import as_prose, compose, is_question, problems, sentences, tidy

WORDS = ["sun", "tilt", "axis", "summer", "winter", "light", "days", "longer", "Earth", "heat", "ground",
         "pole", "equator", "season", "orbit", "warm", "cold", "steep", "angle", "north"]
LIST_WORDS = ["Second, ", "First, ", "Also, ", "and ", "; ", "- ", "1. ", ""]
word = st.sampled_from(WORDS)
phrase = st.lists(word, min_size=3, max_size=12).map(" ".join)
piece = st.tuples(st.sampled_from(LIST_WORDS), phrase, st.sampled_from(["", ".", ";", " …", "!", ","])).map(
    lambda t: t[0] + t[1] + t[2])


@st.composite
def lessons(draw: st.DrawFn) -> Lesson:
    scenes = []
    for number in range(draw(st.integers(1, 3))):
        title = draw(st.lists(word, min_size=1, max_size=3).map(" ".join)).capitalize()
        elements = [{"id": "b", "type": "bullets", "items": draw(st.lists(piece, min_size=1, max_size=4))},
                    {"id": "t", "type": "text", "content": " ".join(draw(st.lists(piece, min_size=1, max_size=3)))}]
        if draw(st.booleans()):
            header = ["When", "What"]
            elements.append({"id": "x", "type": "table", "rows": [header, *draw(st.lists(
                st.tuples(phrase, piece).map(list), min_size=1, max_size=3))]})
        script = [{"say": p} for p in draw(st.lists(piece, max_size=3))]
        scenes.append({"type": "slide", "id": f"s{number}", "title": title, "elements": elements, "script": script})
    return Lesson.model_validate({"title": "Generated", "scenes": scenes})


@settings(max_examples=60, deadline=None)
@given(lesson=lessons(), asked=st.lists(word, min_size=1, max_size=5), mark=st.sampled_from(["?", ".", ""]))
def test_any_lessons_composed_answer_reads_as_prose(lesson: Lesson, asked: list[str], mark: str) -> None:
    question = " ".join(asked) + mark
    grounding = ground(lesson, question, current=lesson.scenes[0].id)
    said = fallback_text(grounding, question)
    if said is None:
        return
    titles = [scene.title for scene in lesson.scenes if scene.title]
    assert problems(said, titles) == [], said


@given(st.lists(piece, min_size=1, max_size=6))
def test_composed_pieces_read_well_and_say_each_sentence_once(pieces: list[str]) -> None:
    said = compose(pieces)
    assert not said or problems(said) == [], said
    folded = [s.casefold() for s in sentences(said)]
    assert len(folded) == len(set(folded))


@given(st.text(alphabet=string.ascii_letters + " .,;:!?…-", max_size=200))
def test_as_prose_of_any_text_reads_well_or_is_nothing(text: str) -> None:
    made = as_prose(text)
    assert made == "" or problems(made) == [], made


def test_the_issues_answers_do_not_read_well_and_their_composition_does() -> None:
    glued = ("The tilted axis: The tilt of Earth's axis, not distance to the Sun. ; At June when Northern "
             "Hemisphere lea…. The tilted axis: So the two hemispheres always have opposite seasons.")
    twice = ("Second, summer days are longer. Second, summer days are longer, so the ground is heated for more "
             "hours. Steep light and long days: In summer the days are also longer, …")
    assert problems(glued, ["The tilted axis"]) and problems(twice, ["Steep light and long days"])
    assert problems("It is warm. It is warm.") == ["said twice: 'It is warm.'"]
    made = compose(["Second, summer days are longer.", "Second, summer days are longer, so the ground is heated.",
                    "; At June when Northern Hemisphere lea…", "In summer the days are also longer, …"])
    assert made == "Summer days are longer, so the ground is heated. In summer the days are also longer."
    assert tidy(" second, it is warm. It is warm.", "It is warm.") == ""


def test_a_statement_is_not_a_question() -> None:
    assert is_question("Wait, so if the axis were not tilted, would we have no seasons?")
    assert is_question("why is it warm") and is_question("Is it warm") and is_question("isn't it the tilt")
    assert not is_question("In Germany the winters would be less dark, but summers would be colder too.")
    assert not is_question("I'd take the 3/8 because 3 is more than 1")


def test_a_title_glued_in_front_of_a_models_sentence_is_taken_off_and_a_fragment_left_is_nothing() -> None:
    titles = ["The tilted axis", "Your first for loop"]
    assert tidy(" The tilted axis: the axis keeps pointing the same way.", "", titles) == \
        " The axis keeps pointing the same way."
    assert tidy("Your first for loop: Theo.", "", titles) == ""
    assert as_prose("range(1, 5) stops before 5") == "range(1, 5) stops before 5."  # code keeps its case
    assert problems("range(1, 5) stops before 5.") == []
