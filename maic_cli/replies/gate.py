"""The gate: whether a sentence a small model wrote rests on the lesson.  Pure, no maic imports.

A 135M model cannot be made to reason, so in a lesson on a small model every sentence it writes
itself must pass :func:`check` before it is shown (engine/agent_reply.py drops the rest).  The
:class:`Ground` is what speech may rest on: the lesson's own sentences, and the learner's words.
A sentence passes when

* it is one of the lesson's sentences, word for word (a copy asserts what the lesson asserts); otherwise
  all of the following hold:
* it is a whole sentence: :data:`MIN_WORDS` words or more, no list marker (``1.`` … ``; 2.``), brackets
  and quotes paired;
* every number in it — digits (``7.65``), fractions (``3/4``), number words (``four``) and spoken
  fractions (``three quarters``, ``a half``) — is the lesson's or the learner's;
* every formula in it (numbers joined by ``=``, ``+``, ``×`` …) is written in the lesson or by the
  learner (spaces aside);
* two numbers or more are said together in one of the lesson's statements (not a question, not the
  learner's), with the same negation and no comparison word that statement lacks: "3/8 is more than
  1/2" is not licensed by "Would you rather have 3/8 … or 1/2 …?", nor "1/5 + 2/5 is 3/10" by
  "1/5 + 2/5 is not 3/10"; a comparison with a direction keeps its sides: "one half is … more than
  three eighths" does not license "3/8 is more than 1/2";
* :data:`CONTENT_SHARE` of its content words, and at least one, are said together in one lesson sentence
  with the same negation (stems, PyStemmer; stop words and classroom words such as "question" or "look"
  are not content) — lesson words strung into a new claim are not enough: "Trees get their mass from
  the soil" is refused although "tree", "mass" and "soil" are each the lesson's.  A sentence with no
  content word passes this rule when it says two numbers the lesson says together.

A sentence with no number and no content word says nothing of the subject and passes ("Good
question.", "Let us begin."), unless it answers or denies ("Yes.", "No, it is not.").

Number words are English; other languages keep every other rule.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache

MIN_WORDS = 4  # "Fractions around you." is a title, not a sentence
CONTENT_SHARE = 0.75  # "most content words are the lesson's or the question's"
MAX_GROUND_TEXT = 200_000  # characters of lesson and learner text a ground is built from

_TOKEN = re.compile(r"\d+(?:[.,]\d+)?(?:\s*/\s*\d+(?:[.,]\d+)?)?|[^\W\d_]+(?:['’][^\W\d_]+)?|[=+×*÷<>≤≥−]",
                    re.UNICODE)
_NUMERIC = re.compile(r"^\d")
_SPLIT = re.compile(r"(?<=[.!?…])[\"')\]”’]*\s+")
_STRAY = re.compile(r"([.!?…])[;:,]+$")  # a small model's "tasks.;" at a sentence's end
_LIST_MARKER = re.compile(r"(^|[;:,]\s*)\(?\d{1,2}[.)](\s|$)|[;:,]\s*\d{1,2}[.)]?\s*$")
_OPERATOR = "=+×*÷<>≤≥−"
_PAIRS = (("(", ")"), ("[", "]"), ("{", "}"))

UNITS = {"zero": 0, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
         "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
         "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19}
TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80,
        "ninety": 90}
SCALES = {"hundred": 100, "thousand": 1000, "million": 1_000_000}
DENOMINATORS = {"half": 2, "halves": 2, "third": 3, "thirds": 3, "quarter": 4, "quarters": 4, "fourth": 4,
                "fourths": 4, "fifth": 5, "fifths": 5, "sixth": 6, "sixths": 6, "seventh": 7, "sevenths": 7,
                "eighth": 8, "eighths": 8, "ninth": 9, "ninths": 9, "tenth": 10, "tenths": 10,
                "twelfth": 12, "twelfths": 12, "hundredth": 100, "hundredths": 100}
COUNTERS = {"a": 1, "an": 1, "one": 1}  # "a half", "one third": a count only before a denominator
NEGATIONS = frozenset({"not", "never", "no", "none", "nor", "cannot", "isn't", "aren't", "don't", "doesn't",
                       "won't", "can't", "wasn't", "weren't", "isn’t", "aren’t", "don’t", "doesn’t"})
ANSWERS = frozenset({"yes", "yeah", "yep", "right", "wrong", "true", "false", "correct", "incorrect"})
COMPARISONS = frozenset("""less more bigger smaller greater larger fewer higher lower same equal equals different
    differ differs bigger biggest smallest most least longer shorter heavier lighter before after than""".split())
STOP = frozenset("""
    a an the and or but if then so as of at by for with about against between into through during before after
    above below to from up down in out on off over under again further once here there when where why how all
    any both each few more most other some such no nor not only own same so than too very can will just should
    now i me my myself we our ours you your yours he him his she her hers it its they them their theirs what
    which who whom this that these those am is are was were be been being have has had having do does did
    doing would could might must shall may let lets let's it's that's there's isn't aren't don't doesn't
    didn't won't can't cannot also well yes yeah ok okay oh really quite much many one ones
""".split())
# Classroom words that say nothing about the subject ("Good question, let's look at it together").
DISCOURSE = frozenset("""
    good great nice question questions answer answers look looks see think remember right sure today lesson
    lessons slide slides class together first next last example examples idea ideas learn learning talk say
    says said tell mean means like thing things way ways point try help understand explain start let us begin
    begins picture pictures show shows shown next here now welcome thanks thank glad closest comes come put puts
""".split())


# -- words and numbers --------------------------------------------------------------------------------
def tokens(text: str) -> list[str]:
    """Lower-cased words, numbers (``3/4`` is one token) and operators, in order."""
    return [re.sub(r"\s+", "", t).replace(",", ".") for t in _TOKEN.findall(text.lower())]


def _number(token: str) -> str:
    """A numeral token as the gate compares it: ``3 / 4`` → ``3/4``, ``7,5`` → ``7.5``, ``007`` → ``7``."""
    parts = token.split("/")
    return "/".join(p.lstrip("0") or "0" if "." not in p else p for p in parts)


def numbers(text: str) -> list[str]:
    """Every number ``text`` says, canonical: numerals as written, number words as digits, spoken
    fractions as ``n/d`` ("three quarters" → ``3/4``, "half" → ``1/2``); a bare "one" is not a number."""
    found: list[str] = []
    words = tokens(text)
    index = 0
    while index < len(words):
        word = words[index]
        if _NUMERIC.match(word):
            value: str | None = _number(word)
            index += 1
        else:
            value, index = _spoken(words, index)
        if value is None:
            continue
        following = words[index] if index < len(words) else ""
        if following in DENOMINATORS and "/" not in value and "." not in value:  # "3 quarters"
            value, index = f"{value}/{DENOMINATORS[following]}", index + 1
        found.append(value)
    return found


def _spoken(words: list[str], index: int) -> tuple[str | None, int]:
    """The number spoken at ``words[index]`` (``None``: none starts there) and the index after it."""
    word = words[index]
    if word in COUNTERS:
        following = words[index + 1] if index + 1 < len(words) else ""
        if following in DENOMINATORS:
            return f"1/{DENOMINATORS[following]}", index + 2
        if following in SCALES:  # "a hundred"
            return str(SCALES[following]), index + 2
        return None, index + 1
    if word in ("half", "halves") and (index == 0 or words[index - 1] not in UNITS):
        return "1/2", index + 1
    value: int | None = None
    while index < len(words):
        word = words[index]
        if word in TENS:
            value = (value or 0) + TENS[word]
        elif word in UNITS and (value is None or (value % 10 == 0 and value >= 20 and UNITS[word] < 10)):
            value = (value or 0) + UNITS[word]
        elif word in SCALES and value is not None:
            value *= SCALES[word]
        else:
            break
        index += 1
    if value is None:
        return None, index + 1
    return str(value), index


def _formula_stream(text: str) -> str:
    """``text``'s numerals and operators in order, every word a ``|``: what formulas are compared in."""
    return " " + " ".join(t.replace("*", "×") if _NUMERIC.match(t) or t in _OPERATOR else "|"
                          for t in tokens(text)) + " "


def _formulas(text: str) -> list[str]:
    """The formulas ``text`` writes: runs of numerals joined by an operator (``1/2 = 2/4``), as a stream."""
    found = []
    for run in _formula_stream(text).split("|"):
        parts = run.split()
        if sum(1 for p in parts if p in _OPERATOR) and sum(1 for p in parts if _NUMERIC.match(p)) >= 2:
            found.append(" " + " ".join(parts) + " ")
    return found


@lru_cache(maxsize=8)
def _stemmer(language: str) -> Callable[[list[str]], list[str]]:
    try:
        import Stemmer
    except ImportError:  # pragma: no cover - PyStemmer is a dependency
        return lambda words: words
    try:
        stem: Callable[[list[str]], list[str]] = Stemmer.Stemmer(language.lower()).stemWords
    except KeyError:
        stem = Stemmer.Stemmer("english").stemWords
    return stem


def content_words(text: str, language: str = "english") -> list[str]:
    """``text``'s content words, stemmed: no stop words, no classroom words, no numbers."""
    words = [re.sub(r"['’]s$", "", w) for w in tokens(text)]  # "today's" is "today"
    words = [w for w in words if w[0].isalpha() and len(w) > 1 and w not in STOP and w not in DISCOURSE
             and w not in UNITS and w not in TENS and w not in DENOMINATORS and w not in SCALES]
    return _stemmer(language)(words) if words else []


def sentences(text: str) -> list[str]:
    """``text`` cut into sentences (after ``. ! ? …`` and closing quotes, before whitespace)."""
    return [s.strip() for s in _SPLIT.split(" ".join(text.split())) if s.strip()]


# -- the ground ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Statement:
    """One lesson sentence that says two numbers or more (a question says none)."""

    numbers: frozenset[str]
    negated: bool
    compares: frozenset[str]
    # the numbers said before and after its first comparison that has a direction ("more", "smaller" …)
    sides: tuple[frozenset[str], frozenset[str]] | None = None


@dataclass(frozen=True)
class Ground:
    """What a small model's speech may rest on (build it with :func:`build_ground`)."""

    language: str
    copies: frozenset[tuple[str, ...]]  # the lesson's sentences as tokens
    numbers: frozenset[str]
    formulas: tuple[str, ...]  # the lesson's and the learner's text as formula streams
    statements: tuple[Statement, ...]
    words: frozenset[str]  # every content word of the lesson and the learner
    supports: tuple[tuple[frozenset[str], bool], ...] = ()  # each lesson sentence's content words, negated
    names: frozenset[str] = frozenset()  # the class's and the learner's names: not content ("Good point, Sam")


def _flags(words: list[str]) -> tuple[bool, frozenset[str]]:
    return any(w in NEGATIONS or w.endswith(("n't", "n’t")) for w in words), frozenset(w for w in words
                                                                                     if w in COMPARISONS)


DIRECTED = frozenset("""less more bigger smaller greater larger fewer higher lower longer shorter heavier lighter
    biggest smallest most least""".split())  # a comparison whose two sides cannot be swapped
_DIRECTED = re.compile(r"\b(?:" + "|".join(sorted(DIRECTED)) + r")\b", re.IGNORECASE)


def _sides(text: str) -> tuple[frozenset[str], frozenset[str]] | None:
    """The numbers ``text`` says before and after its first directed comparison (``None``: it makes none)."""
    found = _DIRECTED.search(text)
    if found is None:
        return None
    return frozenset(numbers(text[:found.start()])), frozenset(numbers(text[found.end():]))


_CLAUSES = re.compile(r"\s*;\s*|,?\s+(?:so|because|therefore|but|whereas|while|hence)\s+", re.IGNORECASE)


def build_ground(lesson: Iterable[str], learner: Iterable[str] = (), language: str = "english",
                 names: Iterable[str] = ()) -> Ground:
    """The ground of ``lesson``'s sentences and the ``learner``'s words (bounded: :data:`MAX_GROUND_TEXT`);
    ``names`` (the class's, the learner's) are no content words."""
    budget = MAX_GROUND_TEXT
    lesson_texts: list[str] = []
    learner_texts: list[str] = []
    for source, into in ((lesson, lesson_texts), (learner, learner_texts)):
        for text in source:
            if budget <= 0:
                break
            into.append(text[:budget])
            budget -= len(into[-1])
    copies: list[tuple[str, ...]] = []
    statements: list[Statement] = []
    supports: dict[tuple[frozenset[str], bool], None] = {}
    for text in lesson_texts:
        for sentence in sentences(text):
            copies.append(tuple(tokens(sentence)))
            negated, _ = _flags(tokens(sentence))
            if sentence.rstrip().endswith("?"):
                continue  # a question asserts nothing
            # Numbers are said together clause by clause: "four eighths is more than three eighths, so one half is
            # more cake" says 4/8 and 3/8 together, and 1/2 apart (not "3/8 is more than 1/2").
            for clause in _CLAUSES.split(sentence):
                in_clause = set(numbers(clause))
                if len(in_clause) >= 2:
                    statements.append(Statement(frozenset(in_clause), *_flags(tokens(clause)), _sides(clause)))
            said_words = frozenset(content_words(sentence, language))
            if said_words:
                supports[(said_words, negated)] = None
    every = lesson_texts + learner_texts
    found: set[str] = set()
    for text in every:
        for number in numbers(text):
            found.add(number)
            found.update(part for part in number.split("/") if "/" in number)  # 3/4 names 3 and 4
    words = {w for text in every for w in content_words(text, language)}
    return Ground(language, frozenset(copies), frozenset(found), tuple(_formula_stream(t) for t in every),
                  tuple(statements), frozenset(words), tuple(supports),
                  frozenset(w for name in names for w in content_words(name, language)))


# -- the check ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Verdict:
    passes: bool
    reason: str = ""  # why it failed, for tests and counters


def _is_copy(said: list[str], ground: Ground) -> bool:
    return bool(said) and tuple(said) in ground.copies


def _whole(sentence: str, said: list[str]) -> str:
    """Why ``sentence`` is not a whole sentence ("" when it is)."""
    if sum(1 for t in said if t not in _OPERATOR) < MIN_WORDS:
        return "too short to be a sentence"
    if _LIST_MARKER.search(sentence):
        return "a list marker: a fragment of a list"
    if any(sentence.count(a) != sentence.count(b) for a, b in _PAIRS) or sentence.count('"') % 2:
        return "unpaired brackets or quotes"
    return ""


def check(sentence: str, ground: Ground) -> Verdict:
    """Whether one ``sentence`` rests on ``ground`` (see the module for the rules), and why not."""
    said = tokens(sentence)
    if _is_copy(said, ground):
        return Verdict(True)
    spoken = numbers(sentence)
    words = [w for w in content_words(sentence, ground.language) if w not in ground.names]
    if not spoken and not words and not any(w in NEGATIONS or w in ANSWERS for w in said) and said:
        return Verdict(True)  # says nothing of the subject: "Good question.", "Let us begin."
    problem = _whole(sentence, said)
    if problem:
        return Verdict(False, problem)
    for number in spoken:
        if number not in ground.numbers:
            return Verdict(False, f"the number {number} is neither the lesson's nor the learner's")
    for formula in _formulas(sentence):
        if not any(formula in text for text in ground.formulas):
            return Verdict(False, f"the formula {formula} is not written in the lesson")
    distinct = set(spoken)
    negated, compares = _flags(said)
    if len(distinct) >= 2:
        sides = _sides(sentence)
        directed = sides is not None and bool(sides[0]) and bool(sides[1])
        if not any(distinct <= s.numbers and s.negated == negated and compares <= s.compares
                   and (not directed or _same_direction(sides, s.sides)) for s in ground.statements):
            return Verdict(False, "the lesson never says these numbers together this way")
    wanted = set(words) - ground.names
    known = max((len(wanted & support) for support, negative in ground.supports if negative == negated), default=0)
    if not known and len(distinct) < 2:
        return Verdict(False, "no lesson sentence says any of its words")
    if known < CONTENT_SHARE * len(wanted):
        return Verdict(False, f"no lesson sentence says more than {known} of its {len(wanted)} content words")
    return Verdict(True)


def _same_direction(said: tuple[frozenset[str], frozenset[str]] | None,
                    lesson: tuple[frozenset[str], frozenset[str]] | None) -> bool:
    """A comparison keeps its sides: "one half is more than three eighths" is not "3/8 is more than 1/2"."""
    return said is not None and lesson is not None and said[0] <= lesson[0] and said[1] <= lesson[1]


def passes(sentence: str, ground: Ground) -> bool:
    return check(sentence, ground).passes


def keep_grounded(text: str, ground: Ground) -> tuple[str, int]:
    """``text`` with every sentence that fails the gate left out (a stray ``;`` after a sentence's end
    too), and how many were."""
    kept, dropped = [], 0
    stray = False
    for sentence in sentences(text):
        if passes(sentence, ground):
            cleaned = _STRAY.sub(r"\1", sentence)  # "whole.;" → "whole."
            stray = stray or cleaned != sentence
            kept.append(cleaned)
        else:
            dropped += 1
    if not dropped and not stray:
        return text, 0
    lead = text[:len(text) - len(text.lstrip())]
    tail = text[len(text.rstrip()):]
    return (lead + " ".join(kept) + tail) if kept else "", dropped


def carried(reply: str, line: str, language: str = "english", share: float = 0.6) -> bool:
    """Whether ``reply`` says ``line`` (a lesson line it owes): the share of its content words and all of
    its numbers."""
    wanted = set(content_words(line, language))
    said = set(content_words(reply, language))
    if not set(numbers(line)) <= set(numbers(reply)):
        return False
    return not wanted or len(wanted & said) >= share * len(wanted)
