"""The words of a learner's question, made comparable with a lesson's expected questions (pure; lessons/faq.py).

* :func:`normal` — one spelling for what is said many ways: contractions opened ("what's" → "what is",
  "dont" → "do not"), British spellings as US ones ("colour", "centimetre", "organise": applied to the lesson
  and the question alike, so a rule that over-reaches only makes both sides agree), number words as digits
  and fractions in words as numbers ("three quarters" → "3/4", "a half" → "1/2"; "cut in half" is no
  number), so "is 3/4 of a cup …" and "three quarters of a cup" hold the same number.
* :func:`fix_typos` — a question word the lesson never says, of five letters or more, taken for the one
  lesson word it is one edit away from (a letter added, dropped, changed or two swapped): "photosythesis".
* :data:`SYNONYMS` — words a learner may use for a lesson's (from lessons/rubric_words.py's groups, the ones
  narrow enough to be one meaning in a question, and a few of a question's own): weaker evidence than the
  word itself.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from .rubric_words import SYNONYM_GROUPS

CONTRACTIONS = {
    "what's": "what is", "whats": "what is", "that's": "that is", "thats": "that is", "it's": "it is",
    "where's": "where is", "wheres": "where is", "who's": "who is", "how's": "how is", "there's": "there is",
    "i'm": "i am", "im": "i am", "i'll": "i will", "i've": "i have", "we're": "we are",
    "they're": "they are", "you're": "you are", "can't": "can not", "cant": "can not", "cannot": "can not",
    "won't": "will not", "wont": "will not", "dont": "do not", "doesnt": "does not", "didnt": "did not",
    "isnt": "is not", "arent": "are not", "wasnt": "was not", "werent": "were not", "wouldnt": "would not",
    "couldnt": "could not", "shouldnt": "should not", "hasnt": "has not", "havent": "have not",
}
_CONTRACTION = re.compile(r"(?<![\w'])(" + "|".join(re.escape(c) for c in CONTRACTIONS) + r")(?![\w'])")
_NOT = re.compile(r"(\w)n't\b")

NUMBER_WORDS = {w: str(n) for n, w in enumerate(  # not "one": "one and the same", "the right one"
    "zero - two three four five six seven eight nine ten eleven twelve".split()) if w != "-"}
_NUMBER_WORD = re.compile(r"\b(" + "|".join(NUMBER_WORDS) + r")\b")
# A fraction in words: its count ("a", "one", a digit, a number word) and its part ("quarters", "eighths").
PARTS = {"half": 2, "third": 3, "thirds": 3, "quarter": 4, "quarters": 4, "fourth": 4, "fourths": 4,
         "fifth": 5, "fifths": 5, "sixth": 6, "sixths": 6, "seventh": 7, "sevenths": 7, "eighth": 8, "eighths": 8,
         "ninth": 9, "ninths": 9, "tenth": 10, "tenths": 10, "twelfth": 12, "twelfths": 12}
_FRACTION = re.compile(r"\b(a|an|one|\d+)[ -](" + "|".join(PARTS) + r")\b")

US_SPELLING = (  # British → US, on whole words
    (re.compile(r"\b(\w{2,})our(s|ed|ing|ite|ites|able|ful)?\b"), r"\1or\2"),  # colour (not four, hour)
    (re.compile(r"\b(\w{2,}[^aeiou\W])re(s?)\b"), r"\1er\2"),  # centimetre, litre, centre, fibre
    (re.compile(r"\b(\w{3,})is(e|es|ed|ing|ation|ations)\b"), r"\1iz\2"),  # organise, realisation
    (re.compile(r"\b(\w{3,})yse(s|d)?\b"), r"\1yze\2"),  # analyse
    (re.compile(r"\b(\w{3,})ogue(s?)\b"), r"\1og\2"),  # catalogue
    (re.compile(r"\bgrey\b"), "gray"),
    (re.compile(r"\bmum\b"), "mom"),
)


def normal(text: str) -> str:
    """``text`` folded, with one spelling for what is said many ways (see the module)."""
    text = " ".join(text.casefold().replace("’", "'").replace("‘", "'").split())
    text = _CONTRACTION.sub(lambda m: CONTRACTIONS[m.group(1)], text)
    text = _NOT.sub(r"\1 not", text)
    for pattern, us in US_SPELLING:
        text = pattern.sub(us, text)
    text = _NUMBER_WORD.sub(lambda m: NUMBER_WORDS[m.group(1)], text)
    return _FRACTION.sub(lambda m: f"{'1' if m.group(1) in ('a', 'an', 'one') else m.group(1)}/{PARTS[m.group(2)]}",
                         text)


WORD = re.compile(r"[^\W_]+|\d+/\d+")
TYPO_LENGTH = 5  # the shortest word taken for a typo of another


def _one_edit(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` differ by one letter added, dropped or changed, or two neighbours swapped."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        return len(diff) == 1 or (len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]]
                                  and a[diff[1]] == b[diff[0]])
    short, long = (a, b) if len(a) < len(b) else (b, a)
    i = next((i for i in range(len(short)) if short[i] != long[i]), len(short))
    return short[i:] == long[i + 1:]


def fix_typos(text: str, vocabulary: frozenset[str], common: frozenset[str] = frozenset()) -> str:
    """``text`` (normal) with each word of ``TYPO_LENGTH`` letters or more that ``vocabulary`` lacks taken for the
    one vocabulary word it is one edit away from, or else for the two vocabulary words it joins ("paperclips");
    none, or several: kept as it is.  A word of ``common`` (stop words: "could") is never taken for another,
    nor another for one ("could" is no typo of "would")."""
    def fixed(match: re.Match[str]) -> str:
        word = match.group(0)
        if len(word) < TYPO_LENGTH or word in vocabulary or word in common or not word.isalpha():
            return word
        near = [v for v in vocabulary if len(v) >= TYPO_LENGTH - 1 and v not in common and _one_edit(word, v)]
        if len(near) == 1:
            return near[0]
        split = [f"{word[:i]} {word[i:]}" for i in range(3, len(word) - 2)  # "paperclips": "paper clips"
                 if word[:i] in vocabulary and (word[i:] in vocabulary or word[i:].rstrip("s") in vocabulary)]
        return split[0] if len(split) == 1 else word
    return WORD.sub(fixed, text)


def words(text: str) -> frozenset[str]:
    """The words of ``text`` (normal) as written, for :func:`fix_typos`'s vocabulary."""
    return frozenset(WORD.findall(text))


# Rubric groups too wide for a question ("change" holds "new" and "next"; "repetition" holds "time" and "loop";
# "plant" holds "leaf" and "tree") are left out; the rest mean one thing in a question too.
_WIDE = frozenset({"change", "repetition", "item", "collection", "plant", "area", "low", "number", "hold",
                   "cause", "make", "use", "more", "less", "two", "three", "four", "five", "six", "seven", "eight",
                   "nine", "ten", "twelve", "hundred", "thousand", "third", "quarter", "reaction", "add"})
QUESTION_GROUPS: tuple[tuple[str, ...], ...] = (  # a question's own ways of saying a lesson's word
    ("name", "named", "call", "called", "label"),
    ("near", "nearer", "nearest", "closer", "closest"),
    ("far", "farther", "further", "distance"),
    ("phone", "mobile", "cellphone", "smartphone"),
    ("midday", "noon", "lunchtime"),
    ("evening", "dusk", "sunset"),
    ("morning", "dawn", "sunrise"),
    ("die", "dies", "dead", "death", "dying"),
    ("mistake", "error", "wrong", "bug"),
    ("forget", "forgot", "miss", "missing"),
    ("quick", "fast", "shortcut", "easy"),
    ("piece", "slice", "part", "portion", "share"),
    ("warm", "warmer", "hot", "hotter", "heat"),
    ("cold", "colder", "cool", "cooler"),
    ("daylight", "day", "days"),
    ("include", "includes", "included", "contain", "contains"),
    ("tilt", "tilted", "lean", "leans", "leaning", "slant"),
    ("stop", "stops", "end", "ends", "finish"),
    ("start", "starts", "begin", "begins"),
    ("breathe", "breathing", "respiration"),
    ("sunlight", "sun", "light", "solar"),
    ("food", "sugar", "glucose", "energy"),
)


def synonym_groups() -> list[tuple[str, ...]]:
    """The groups (plain words) a question's word may stand for a lesson's word by."""
    return [g for g in SYNONYM_GROUPS if g[0] not in _WIDE] + list(QUESTION_GROUPS)


def synonyms(stem: Iterable[list[str]]) -> dict[str, frozenset[str]]:
    """Each word's synonyms, stemmed (``stem``: the groups, each stemmed as the lesson's words are)."""
    found: dict[str, set[str]] = {}
    for group in stem:
        for word in group:
            found.setdefault(word, set()).update(w for w in group if w != word)
    return {word: frozenset(others) for word, others in found.items()}
