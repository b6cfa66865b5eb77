"""Text for a voice (speech/normalize.py): formulas read as words, no markup, ids, addresses or code."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from maic_cli.speech.normalize import MAX_SPOKEN, for_speech, fraction_words
from maic_cli.speech.say import FIRST_WORDS, pieces

ALLOWED = re.compile(r"^[\w\s.,;:!?'\"()-]*$")


@pytest.mark.parametrize(("text", "spoken"), [
    ("So 3/4 of the pizza is left.", "So three quarters of the pizza is left."),
    ("One half is 1/2, and 17/20 is bigger.", "One half is one half, and 17 over 20 is bigger."),
    ("Note that x^2 + 2x = 0.", "Note that x squared plus 2x equals 0."),
    ("Volume grows with r³ and x^n.", "Volume grows with r cubed and x to the power of n."),
    ("Then x² ≥ 0 and y ≠ 3.", "Then x squared is greater than or equal to 0 and y is not equal to 3."),
    ("The formula $\\frac{a}{b} \\leq \\sqrt{c}$ holds.",
     "The formula a over b is less than or equal to the square root of c holds."),
    ("$$E = mc^2$$", "E equals mc squared"),
    ("θ is 30°, π ≈ 3.14", "theta is 30 degrees, pi is approximately 3.14"),
    ("It costs $5 and $10.", "It costs 5 dollars and 10 dollars."),
    ("a_1 + a_{n+1} = 50%", "a sub 1 plus a sub n plus 1 equals 50 percent"),
    ("Speed is 60 km/h.", "Speed is 60 kilometres per hour."),
    ("x - y and -3, but well-known", "x minus y and minus 3, but well-known"),
])
def test_formulas_are_read_as_words(text: str, spoken: str) -> None:
    assert for_speech(text) == spoken


@pytest.mark.parametrize(("text", "spoken"), [
    ("This is **really** important, *right*?", "This is really important, right?"),
    ("## Photosynthesis\n- light\n- water", "Photosynthesis. light. water"),
    ("[Khan Academy](https://khan.org) explains it.", "Khan Academy explains it."),
    ("Look at wb_3 on the board.", "Look at the board on the board."),
    ("See https[:]//khan[.]org/math or write to ana[at]b[.]com.", "See a link or write to an e-mail address."),
    ("Open www.example.org now", "Open a link now"),
    ("Great job 🎉! <b>bold</b> &amp; more", "Great job! bold and more"),
    ("Run it:\n```python\nfor i in range(3):\n    print(i)\n```\nDone.", "Run it: Done."),
    ("Call `os.path.join()` here.", "Call os path join here."),
    ("| a | b |\n|---|---|\n| 1 | 2 |", "a, b, 1, 2"),
    ("Saved in /home/ana/notes/today.txt for later.", "Saved in a file for later."),
])
def test_markup_ids_addresses_and_code_are_not_read(text: str, spoken: str) -> None:
    assert for_speech(text) == spoken


def test_plain_prose_is_left_as_it_is() -> None:
    text = "Good question, Mia! Plants make sugar from light; that's photosynthesis. Shall we try one?"
    assert for_speech(text) == text


def test_fraction_words() -> None:
    assert [fraction_words(1, 2), fraction_words(2, 3), fraction_words(3, 4), fraction_words(1, 10)] == \
        ["one half", "two thirds", "three quarters", "one tenth"]
    assert fraction_words(11, 4) == "11 over 4" and fraction_words(3, 11) == "3 over 11"


_PROSE = st.text(alphabet=st.sampled_from("abcdefghij ABC.,!?'"), max_size=80)
_ANY = st.text(max_size=300)
_MARKUP = st.lists(st.sampled_from([
    "**", "*", "_", "`", "```", "$", "$$", "\\frac{1}{2}", "\\alpha", "x^2", "^{n}", "a_1", "3/4", "=", "<b>", "</b>",
    "&amp;", "[link](http://a.b/c)", "https://x.org/a", "https[:]//x[.]org", "ana[at]b[.]com", "wb_12", "# ", "\n- ",
    "|", "{", "}", "[", "]", "~", "#", "<", ">", "≤", "√", "π", "²", "🎉", "\x1b[31m", "\u202e", " ", "word", "7", "-",
    "(", ")", ".", "\n",
]), max_size=40).map("".join)


@settings(max_examples=200, deadline=None)
@given(st.one_of(_ANY, _MARKUP))
def test_the_result_is_only_words_and_sentence_punctuation(text: str) -> None:
    spoken = for_speech(text)
    assert ALLOWED.match(spoken), spoken
    assert "_" not in spoken and "://" not in spoken and "[.]" not in spoken
    assert not re.search(r"\bwb \d", spoken)
    assert spoken == spoken.strip() and "  " not in spoken
    assert len(spoken) <= MAX_SPOKEN


@settings(max_examples=200, deadline=None)
@given(st.one_of(_ANY, _MARKUP))
def test_normalising_twice_changes_nothing(text: str) -> None:
    once = for_speech(text)
    assert for_speech(once) == once


@settings(max_examples=200, deadline=None)
@given(_PROSE)
def test_letters_of_prose_are_kept_in_order(text: str) -> None:
    letters = [c for c in text if c.isalpha()]
    assert [c for c in for_speech(text) if c.isalpha()] == letters


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=20000))
def test_a_long_text_is_bounded(text: str) -> None:
    assert len(for_speech(text)) <= MAX_SPOKEN


def test_pieces_start_short_and_cover_the_text() -> None:
    text = ("Welcome back, everyone, to our lesson on fractions, which we started last week. "
            "Today we add 1/2 and 1/4, and we will see why the answer is 3/4.")
    cut = pieces(text)
    assert len(cut[0].split()) <= FIRST_WORDS
    assert " ".join(cut) == for_speech(text)
    assert pieces("**  ** `` $$") == []
