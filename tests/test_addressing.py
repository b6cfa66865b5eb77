"""``addressed_agent`` (engine/addressing.py): a learner's message that opens with a class member's name.

Examples from the default class, then properties (hypothesis): a name only mid-sentence never
matches, a first name two members share matches nobody, a word that merely starts with a name
(``Samuel``, ``Miami``) does not match, and a name at the start, set off by a comma, always does.
"""

from __future__ import annotations

import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from maic_cli.engine.addressing import GREETINGS, addressed_agent
from tests.helpers import agent

CLASS = [agent("teacher", "teacher", "Ms. Rivera"), agent("assistant", "assistant", "Sam"),
         agent("class_clown", name="Leo"), agent("curious_student", name="Mia"),
         agent("deep_thinker", name="Theo"), agent("note_taker", name="Priya")]


@pytest.mark.parametrize(("text", "expected"), [
    ("Sam, what do you think: is 6/8 the same as 3/4?", "assistant"),
    ("sam, what do you think?", "assistant"),
    ("SAM: why?", "assistant"),
    ("Hey Sam, can you help?", "assistant"),
    ("hey sam what is a quarter of 60", "assistant"),
    ("Hi, Mia! Do you agree?", "curious_student"),
    ("ok so Theo, is that always true?", "deep_thinker"),
    ("So Priya, sum it up", "note_taker"),
    ("Ms. Rivera, I am lost", "teacher"),
    ("Rivera: one more time please", "teacher"),
    ("curious_student, your turn", "curious_student"),
    ("Curious student, your turn", "curious_student"),
    ("Leo?", "class_clown"),
    ("Leo", "class_clown"),
    ("  Mia — what if it rains?", "curious_student"),
    # not a call
    ("Samuel, can you help?", None),
    ("Miami is warm in winter, why?", None),
    ("I think Sam is right", None),
    ("What does Mia think?", None),
    ("Sam likes fractions", None),  # a name then a plain space, with no greeting before it: a sentence
    ("Sam's answer was wrong", None),
    ("Theodore, hi", None),
    ("", None),
    ("hey", None),
    ("hey, everyone", None),
])
def test_names_at_the_start_call_that_member(text: str, expected: str | None) -> None:
    assert addressed_agent(text, CLASS) == expected


def test_a_whole_name_wins_over_a_shared_first_name_and_the_shared_one_calls_nobody() -> None:
    two_sams = [*CLASS, agent("sam_lee", name="Sam Lee")]
    assert addressed_agent("Sam, hi", two_sams) is None  # Sam (assistant) and Sam Lee: ambiguous
    assert addressed_agent("Sam Lee, hi", two_sams) == "sam_lee"
    assert addressed_agent("Curious Sam: what now?", [*CLASS[:1], agent("cs", name="Curious Sam")]) == "cs"
    assert addressed_agent("assistant, hi", two_sams) == "assistant"  # an id is always its own


def test_a_name_made_of_pattern_characters_is_plain_text() -> None:
    odd = [agent("odd", name="S.*m (x)"), agent("t", "teacher", "T")]
    assert addressed_agent("S.*m (x), hi", odd) == "odd"
    assert addressed_agent("Sam, hi", odd) is None


NAMES = st.text(alphabet=string.ascii_letters, min_size=2, max_size=8)
FILLER = st.lists(st.sampled_from(["the", "what", "is", "why", "I", "think", "because", "about", "maybe",
                                   "answer", "2/4", "right", "wrong"]), min_size=1, max_size=6)


def _class_named(name: str) -> list:
    return [agent("teacher", "teacher", "Ms. Rivera"), agent("named", name=name)]


@given(name=NAMES, before=FILLER, after=FILLER, mark=st.sampled_from([",", ":", "?", "!", ""]))
def test_a_name_only_mid_sentence_never_matches(name: str, before: list[str], after: list[str], mark: str) -> None:
    text = " ".join(before) + f" {name}{mark} " + " ".join(after)
    assert addressed_agent(text, _class_named(name)) is None


@given(name=NAMES, rest=FILLER, greeting=st.sampled_from(["", *sorted(GREETINGS)]),
       mark=st.sampled_from([",", ":", "?", "!", " —"]))
def test_a_name_at_the_start_set_off_always_matches(name: str, rest: list[str], greeting: str, mark: str) -> None:
    text = f"{greeting} {name.upper()}{mark} " + " ".join(rest)
    assert addressed_agent(text, _class_named(name)) == "named"


@given(name=NAMES, tail=st.text(alphabet=string.ascii_letters + string.digits, min_size=1, max_size=5),
       greeting=st.sampled_from(["", "hey ", "ok, "]))
def test_a_longer_word_that_starts_with_the_name_does_not_match(name: str, tail: str, greeting: str) -> None:
    assert addressed_agent(f"{greeting}{name}{tail}, what now?", _class_named(name)) is None


@given(first=NAMES, last_a=NAMES, last_b=NAMES, greeting=st.sampled_from(["", "hey "]))
def test_a_first_name_two_members_share_matches_nobody(first: str, last_a: str, last_b: str, greeting: str) -> None:
    if last_a.casefold() == last_b.casefold():
        last_b += "x"
    members = [agent("teacher", "teacher", "Ms. Rivera"), agent("a", name=f"{first} {last_a}"),
               agent("b", name=f"{first} {last_b}")]
    assert addressed_agent(f"{greeting}{first}, what now?", members) is None
    assert addressed_agent(f"{greeting}{first} {last_a}, what now?", members) == "a"


@given(st.text(max_size=300))
def test_any_text_gives_a_member_or_none(text: str) -> None:
    assert addressed_agent(text, CLASS) in {None, *(a.id for a in CLASS)}


MANY = [agent("teacher", "teacher", "Professor Quill"), agent("kit", name="Curious Kit"),
        agent("ada", name="Ada Lovelace Byron"), agent("ben", name="Ben Kit")]


@pytest.mark.parametrize(("text", "expected"), [
    ("Curious, what do you think?", "kit"), ("Hey Curious Kit, why?", "kit"),
    ("Quill, is that true?", "teacher"), ("hi Professor Quill, one more?", "teacher"),
    ("Lovelace: why?", "ada"), ("hey byron what now", "ada"), ("Ada Lovelace Byron, hi", "ada"),
    ("Kit, why?", None),  # Curious Kit and Ben Kit share it
    ("Ben, why?", "ben"), ("Ben Kit, why?", "ben"), ("Professor, why?", None),  # a title alone calls nobody
])
def test_any_word_of_a_name_no_one_else_has_calls_that_member(text: str, expected: str | None) -> None:
    assert addressed_agent(text, MANY) == expected


@given(words=st.lists(NAMES, min_size=2, max_size=4, unique_by=str.casefold),
       greeting=st.sampled_from(["", "hey ", "ok, ", "Hi "]), mark=st.sampled_from([",", ":", "?", "!"]))
def test_every_word_of_a_name_calls_that_member_under_any_greeting(words: list[str], greeting: str, mark: str) -> None:
    members = [agent("teacher", "teacher", "Professor Quill"), agent("named", name=" ".join(words)),
               agent("other", name="Zz Yy")]
    for word in words:
        called = addressed_agent(f"{greeting}{word}{mark} is it true?", members)
        shared = word.casefold() in {"zz", "yy", "quill", "professor"} or word.casefold().rstrip(".") in {
            "mr", "mrs", "ms", "miss", "mx", "dr", "prof", "sir", "madam", "teacher"} or word.casefold() in GREETINGS
        assert called == (None if shared else "named"), (word, called)
    assert addressed_agent(f"{greeting}{' '.join(words)}{mark} hi", members) == "named"
    assert addressed_agent(f"I think {words[-1]}{mark} is right", members) is None  # never mid-sentence
