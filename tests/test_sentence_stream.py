"""Sentences out of streamed text: complete ones as soon as they are, the same whatever the split."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from maic_cli.speech.sentence_stream import LONGEST, SentenceStream, split_sentences


def feed_in_pieces(text: str, cuts: list[int]) -> list[str]:
    stream = SentenceStream()
    sentences: list[str] = []
    start = 0
    for cut in sorted(set(cuts)):
        sentences += stream.feed(text[start:cut])
        start = cut
    sentences += stream.feed(text[start:])
    rest = stream.flush()
    return sentences + ([rest] if rest else [])


def test_a_sentence_is_handed_out_once_the_space_after_its_full_stop_arrives() -> None:
    stream = SentenceStream()
    assert stream.feed("Plants need light") == []
    assert stream.feed(".") == []  # "3." of "3.5", or the end: not known yet
    assert stream.feed(" Water") == ["Plants need light."]
    assert stream.feed(" too! And") == ["Water too!"]
    assert stream.flush() == "And"
    assert stream.flush() is None


def test_numbers_abbreviations_and_initials_do_not_end_a_sentence() -> None:
    assert split_sentences("It is 3.5 metres, e.g. a door. Ask Dr. Lee or J. Smith. Done") == [
        "It is 3.5 metres, e.g. a door.", "Ask Dr. Lee or J. Smith.", "Done"]


def test_line_breaks_quotes_and_ellipses() -> None:
    assert split_sentences('She said "yes." Then…  wait?! Okay\n- one item\n\n- two') == [
        'She said "yes."', "Then…", "wait?!", "Okay", "- one item", "- two"]


def test_a_sentence_with_no_end_is_cut_at_a_space_before_the_longest() -> None:
    text = ("word " * 200).strip()
    sentences = split_sentences(text)
    assert all(len(s) <= LONGEST for s in sentences)
    assert " ".join(sentences) == text


PIECES = ["Hello there.", " ", "\n", "e.g.", " Dr. Who", "3.5", "?!", "…", '"', ")", "word", "x" * 90, "  ", ".", "A.",
          "```", "~~~", "```py\n"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=30).map("".join),
       st.lists(st.integers(min_value=0, max_value=3000), max_size=25))
def test_any_split_into_deltas_gives_the_same_sentences(text: str, cuts: list[int]) -> None:
    whole = split_sentences(text)
    assert feed_in_pieces(text, [c % (len(text) + 1) for c in cuts]) == whole
    assert feed_in_pieces(text, list(range(len(text)))) == whole  # a character at a time
    assert all(s == s.strip() and s for s in whole)
    assert "".join(whole).replace(" ", "").replace("\n", "") == text.replace(" ", "").replace("\n", "")


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=700), st.lists(st.integers(min_value=0, max_value=700), max_size=12))
def test_any_text_any_split(text: str, cuts: list[int]) -> None:
    assert feed_in_pieces(text, [c % (len(text) + 1) for c in cuts]) == split_sentences(text)


def test_a_code_fence_is_never_cut_into_sentences() -> None:
    text = "Try this.\n```python\nfor i in range(3):\n    print(i)\n```\nIt prints. Done"
    assert split_sentences(text) == ["Try this.", "```python\nfor i in range(3):\n    print(i)\n```", "It prints.",
                                     "Done"]
    long_listing = "See:\n```\n" + "x = 1\n" * 100 + "```\nThat is all."
    assert split_sentences(long_listing) == ["See:", "```\n" + "x = 1\n" * 100 + "```", "That is all."]


def test_a_first_clause_can_be_taken_before_its_sentence_ends() -> None:
    stream = SentenceStream()
    assert stream.feed("Light from the sun, water from the roots") == []
    assert stream.clause() is None  # "Light from the sun," is shorter than a clause worth saying alone
    assert stream.feed(", and air") == []
    assert stream.clause() == "Light from the sun, water from the roots,"
    assert stream.feed(" go in. Then") == ["and air go in."]
    assert stream.flush() == "Then"
    numbers = SentenceStream()
    numbers.feed("It weighs 1,000 kilograms or 2,000 pounds")
    assert numbers.clause() is None  # a comma inside a number is no break


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([*PIECES, ", ", "; ", " - ", "a clause of some length"]), max_size=30).map("".join),
       st.lists(st.tuples(st.integers(min_value=0, max_value=3000), st.booleans()), max_size=25))
def test_taking_clauses_loses_nothing_and_says_nothing_twice(text: str, cuts: list[tuple[int, bool]]) -> None:
    stream = SentenceStream()
    pieces: list[str] = []
    start = 0
    for cut, take in sorted({(c % (len(text) + 1), t) for c, t in cuts}):
        pieces += stream.feed(text[start:cut])
        start = max(start, cut)
        if take and (piece := stream.clause()) is not None:
            pieces.append(piece)
    pieces += stream.feed(text[start:])
    rest = stream.flush()
    pieces += [rest] if rest else []
    assert all(p == p.strip() and p for p in pieces)
    assert "".join(pieces).replace(" ", "").replace("\n", "") == text.replace(" ", "").replace("\n", "")
