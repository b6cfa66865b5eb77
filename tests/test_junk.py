"""The junk detector (replies/junk.py): what it finds, what it leaves alone, and how it is made inert.

``TEACHING`` is ordinary classroom prose (fractions, times, decimals, formulas, code, file
names, camelCase names): its false-positive count is measured here and must stay 0.
``JUNK`` is what small models wrote (a whiteboard full of addresses, a home folder path) and its kin.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from maic_cli.replies.junk import (
    drawn_from,
    drawn_text,
    find_junk,
    first_junk,
    has_junk,
    inert_params,
    make_inert,
)

TEACHING = [
    "Three quarters is 3/4, and 3/4 of 8 is 6.",
    "Half of it, 1/2, plus a quarter, 1/4, makes 3/4 in all.",
    "The train leaves at 10:30 and arrives at 12:45, so the trip takes 2 hours 15 minutes.",
    "Pi is about 3.14159, and e is about 2.718.",
    "A speed of 60 km/h is the same as 1 km per minute.",
    "Use and/or carefully: it means one, the other, or both.",
    "In Python, for i in range(3): print(i) prints 0, 1 and 2.",
    "The loop `for item in items:` walks through the list one element at a time.",
    "Call os.path.join('data', 'file.txt') to build a path that works everywhere.",
    "Save your program as hello.py and run it with python hello.py.",
    "In JavaScript, document.getElementById returns one element.",
    "The XMLHttpRequest object was how pages fetched data before fetch existed.",
    "Glucose is C6H12O6, and table sugar is C12H22O11.",
    "Water is H2O, and baking soda is NaHCO3.",
    "Einstein wrote E=mc^2: energy equals mass times the speed of light squared.",
    "The area of a circle is pi*r^2, and its circumference is 2*pi*r.",
    "If f(x) = x^2/2, then the slope f'(x) is just x.",
    "The derivative of sin(x) is cos(x), and d/dx of x^3 is 3x^2.",
    "A ratio of 16:9 is the shape of most screens.",
    "The year 1492 is when Columbus sailed, and 1969 is when people walked on the Moon.",
    "Photosynthesis turns light, water and CO2 into sugar and oxygen in the chloroplasts.",
    "Mitochondria release energy from glucose; that is cellular respiration.",
    "The iPhone and the McDonald's logo are examples of brands you know.",
    "An HTTPServer answers requests; a URL names what you ask for.",
    "Is zero even? Yes: 0 divided by 2 is 0 with no remainder.",
    "Negative numbers like -7 and -3.5 sit to the left of zero.",
    "The pH of pure water is 7, lemon juice is about 2.",
    "One megabyte is 1024 kilobytes in the old binary sense.",
    "The answer is (a): the light bends because it slows down.",
    "Rain forms when water vapour cools, condenses into droplets, and they grow heavy enough to fall.",
    "e.g. a cat, i.e. a mammal, etc. are common abbreviations.",
    "Write x += 1 to add one, and x //= 2 to halve it without a remainder.",
    "The list [1, 2, 3] has len(list) == 3.",
    "A dictionary like {'a': 1} maps keys to values.",
    "The hex colour #ff0000 is pure red.",
    "Version 3.12 of Python came out in 2023.",
    "Use snake_case_names for variables and CamelCase for classes.",
    "The function math.sqrt(16) returns 4.0.",
    "df.info() and df.describe() summarise a table in pandas.",
    "Rome was founded, the story says, in 753 BC.",
]

JUNK = [
    # seen in the offline model's speech (the benchmark, round 17): a query string and a UUID cut short
    ("At.../date?id=f7b8c64e-5d93-0dea-abcd...", "path"),
    ("the page index.php?page=2 says so", "path"),
    ("it is f7b8c64e-5d93-0dea in the end", "hash"),
    ("#20f3ab5aef12-shakir@yahoo.com/changetexts (A)", "email"),
    ("wiBwLlGvMn", "token"),
    ("An answer that began with /Users/ana/.Miscellaneous and went on.", "path"),
    ("Open ~/projects/notes/today.txt to read it.", "path"),
    ("Look at C:\\Users\\ana\\Desktop\\x.txt now.", "path"),
    ("Visit https://docs.python.org/3/library for more.", "url"),
    ("See www.example.org for details.", "url"),
    ("Go to example.com/page to read more.", "url"),
    ("Mail me at teacher.ana+class@school.edu please.", "email"),
    ("The commit 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b fixed it.", "hash"),
    ("Its id is 123e4567-e89b-12d3-a456-426614174000.", "hash"),
    ("The key was a8F3kQ9zXp.", "token"),
    ("ftp://files.example.net/pub/x.zip", "url"),
]


def test_ordinary_teaching_prose_has_no_false_positives() -> None:
    flagged = {text: [j.text for j in find_junk(text)] for text in TEACHING}
    assert {t: f for t, f in flagged.items() if f} == {}  # the measure: 0 of len(TEACHING) sentences
    assert all(make_inert(text) == text for text in TEACHING)


@pytest.mark.parametrize(("text", "kind"), JUNK)
def test_junk_is_found_with_its_kind(text: str, kind: str) -> None:
    found = find_junk(text)
    assert found and found[0].kind == kind, found
    assert has_junk(text) and first_junk(text) == found[0].start
    assert text[found[0].start:found[0].end] == found[0].text


def test_a_sentence_end_is_not_part_of_a_url_or_path() -> None:
    assert find_junk("See https://a.org/x.")[0].text == "https://a.org/x"
    assert find_junk("It was in /tmp/a/b, then.")[0].text == "/tmp/a/b"


@pytest.mark.parametrize(("text", "inert"), [
    ("see https://docs.python.org/3/x now", "see https[:]//docs[.]python[.]org/3/x now"),
    ("www.example.org, yes", "www[.]example[.]org, yes"),
    ("mail ana@school.edu.", "mail ana[at]school[.]edu."),
    ("go to example.com/page", "go to example[.]com/page"),
    ("a path /Users/ana/x stays readable", "a path /Users/ana/x stays readable"),
])
def test_links_and_addresses_are_defanged(text: str, inert: str) -> None:
    assert make_inert(text) == inert
    assert make_inert(inert) == inert  # idempotent


def test_board_text_must_come_from_its_sources() -> None:
    speech = "Light bends when it slows down in water."
    assert drawn_from("slows down in water", speech)
    assert drawn_from("=", speech)  # symbols only: nothing invented
    assert not drawn_from("changetexts (A) quantum", speech)
    assert not drawn_from("light ana@b.com", speech + " ana@b.com")  # junk is never drawn, even if said
    assert drawn_from(r"\frac{3}{4}", "three quarters is 3 over 4")  # LaTeX commands are not words


def test_drawn_text_reads_every_string_a_drawing_shows_but_not_ids() -> None:
    params: dict[str, object] = {"elementId": "eq1", "title": "Rain", "labels": ["cloud", "drop"],
              "series": [{"name": "mm", "values": [1, 2]}], "data": [["a", "b"]]}
    assert set(drawn_text(params).split("\n")) == {"Rain", "cloud", "drop", "mm", "a", "b"}
    assert inert_params({"content": "www.x.org", "n": [1, "a@b.com"]}) == {"content": "www[.]x[.]org",
                                                                         "n": [1, "a[at]b[.]com"]}


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300))
def test_fuzz_spans_are_ordered_disjoint_and_inert_output_has_no_links(text: str) -> None:
    found = find_junk(text)
    ends = -1
    for junk in found:
        assert ends <= junk.start < junk.end <= len(text) and text[junk.start:junk.end] == junk.text
        ends = junk.end
    inert = make_inert(text)
    assert not [j for j in find_junk(inert) if j.kind in ("url", "email")]
    assert make_inert(inert) == inert


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["https://", "www.", "a@b.", "/", "~", "x", ".com", " ", "0f", "Ab", "\n", "…"]),
                max_size=60))
def test_fuzz_near_misses_of_links_never_leave_one_live(parts: list[str]) -> None:
    inert = make_inert("".join(parts))
    assert not re.search(r"\b[a-z]{2,}://", inert) or "[:]//" in inert
    assert not [j for j in find_junk(inert) if j.kind in ("url", "email")]


def test_a_long_text_is_scanned_in_bounded_time() -> None:
    """Runs that make backtracking patterns quadratic (0.5 s a piece before they were anchored)."""
    import time
    text = " ".join(run * 20_000 for run in ("a/", "Ab1", "x.", "a@", "a-", "www.a"))
    start = time.monotonic()
    find_junk(text)
    assert make_inert(text).count("[.]") >= 20_000  # every www.a
    assert time.monotonic() - start < 10.0  # about 0.5 s on a busy machine


def _inert_word_by_word(text: str) -> str:
    """make_inert as it reads every word in full (all patterns on each), for the fast path to agree with."""
    from maic_cli.replies import junk

    def has_link(word: str) -> bool:
        if "://" in word or "www." in word.lower() or junk._AT.search(word):
            return True
        return any(j.kind in ("url", "email") for i in range(0, len(word), junk.MAX_WORD)
                   for j in junk._word_junk(word[max(0, i - 32):i + junk.MAX_WORD], 0))

    return re.sub(r"\S+", lambda m: junk._defang(m.group()) if has_link(m.group()) else m.group(), text)


LINKISH = st.lists(st.sampled_from(["https://", "www.", "WWW.", "a@b", "@", ".", ".com", ".ORG", ".io", ".cn",
                                    "x", "Ab1", " ", "\n", "/", "-", "é", "…", ")", "com", "org", "a" * 40]),
                   max_size=80).map("".join)


@settings(max_examples=400, deadline=None)
@given(st.one_of(LINKISH, st.text(max_size=200)))
def test_making_text_inert_skips_only_words_that_cannot_hold_a_link(text: str) -> None:
    assert make_inert(text) == _inert_word_by_word(text)
