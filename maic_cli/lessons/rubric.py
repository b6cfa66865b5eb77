"""A deterministic measure of a short answer against its rubric: the rubric's points, found or not.

A rubric is free text written by a person (``Light provides the energy … Mentioning energy is
essential; naming chlorophyll or chloroplasts is a bonus.``).  :func:`read_rubric` reads it into
points: a sentence (or clause) that says *essential*, *must*, *required* … is an essential point,
one that says *bonus*, *optional* … a bonus point, the rest is the model answer whose content
words (less the question's own words) are the key terms.  A point's words joined by *or* are
alternatives; short phrases joined by *and* are separate points.

:func:`measure` looks for each point in the answer: words are stemmed (Snowball, PyStemmer) and each rubric
word also matches its synonyms (:mod:`.rubric_words`); a word right after a negation (*not*, *never*,
*doesn't* …) in the same clause does not count. Synonyms include number words and their digits ("three equal
parts" says "3 equal parts") and the everyday words for a rubric's (pieces and slices for parts, a slant for
an angle); an answer that denies two or more of the question's own words ("plants do not need light; …")
denies what the question is about, and is left undecided rather than graded by its other words. A point of one
or two words needs all of them, a longer one all but a third. The result is a verdict, the points the measure
gives (``None`` when it cannot decide), the range of grades it accepts from a model, and a comment that names
the points found and missing.

Everything here is bounded: the rubric and the answer are cut before they are read, and the work is
linear in their words.  No model, no file, no network.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

import Stemmer

from .rubric_words import (
    AUXILIARIES,
    BONUS_MARKERS,
    COUNTERFACTUAL_OPENERS,
    ESSENTIAL_MARKERS,
    META_WORDS,
    NEGATION_REACH,
    NEGATIONS,
    STOP_WORDS,
    SYNONYM_GROUPS,
)

MAX_RUBRIC = 2000  # characters of a rubric read (a lesson's rubric is at most this long)
MAX_ANSWER = 4000  # characters of an answer read
MAX_TERMS = 40  # content terms kept from a rubric
Verdict = Literal["right", "partial", "wrong", "undecided"]

_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")
_SENTENCE = re.compile(r"[.!?;]+(?=\s|$)|;|\n+")  # not inside 3.5 or e.g.x
_CLAUSE = re.compile(r"[,:;.!?()\[\]\"“”]+|\s[-–—]\s|\bbut\b|\bwhile\b|\bhowever\b", re.IGNORECASE)
_LEAD = re.compile(r"^(?:the answer|an answer|the learner|the student|it is|it's|this is|and|also|a|an|must|should|"
                   r"to|mentioning|mentions?|saying|says?|naming|names?|stating|states?|noting|explaining|"
                   r"explains?|that|giving)\s+", re.IGNORECASE)
_POLAR = re.compile(r"\s*(yes|no)\b\s*(?:[.,:;!]|[-–—]\s)", re.IGNORECASE)
_YES = frozenset({"yes", "yeah", "yep", "yup", "true", "correct", "right"})
_NO = frozenset({"no", "nope", "nah", "false", "wrong"})
_TAIL = re.compile(r"\s+(?:earns?|gets?|counts? as|counts? for|is worth)\b.*$", re.IGNORECASE)


@dataclass(frozen=True)
class Term:
    word: str  # as written in the rubric
    stems: frozenset[str]  # its stem and its synonyms' stems
    stem: str = ""  # its own stem

    def said_in(self, words: frozenset[str]) -> bool:
        """The answer has this word, a synonym, or a form of it the stemmer left apart (dense, density)."""
        return bool(self.stems & words) or (bool(self.stem) and any(_related(self.stem, word) for word in words))


def _related(one: str, other: str) -> bool:
    """Stems of one word the stemmer keeps apart (dens/densiti, absorb/absorpt): a shared start of 4+ letters
    with at most three more."""
    short, long = (one, other) if len(one) <= len(other) else (other, one)
    return len(short) >= 4 and len(long) - len(short) <= 3 and long.startswith(short)


@dataclass(frozen=True)
class Point:
    label: str  # the point as the rubric words it, for the comment
    alternatives: tuple[tuple[Term, ...], ...]  # any one alternative found is the point found
    echo: bool = False  # made only of the question's words: an answer may say "it" for some of them

    def found_in(self, words: frozenset[str]) -> bool:
        return any(_enough(sum(1 for term in alt if term.said_in(words)), len(alt)) for alt in self.alternatives)

    def touched_in(self, words: frozenset[str]) -> bool:
        """Some of the point's words are there, not enough of them: neither found nor missed."""
        return not self.found_in(words) and any(t.said_in(words) for t in self.terms())

    def denied_in(self, said: Said) -> bool:
        """A word of the point is denied and never said ("it never changes", "zero is not even")."""
        return any(t.said_in(said.denied) and not t.said_in(said.affirmed) for t in self.terms())

    def terms(self) -> tuple[Term, ...]:
        return tuple(term for alt in self.alternatives for term in alt)


@dataclass(frozen=True)
class Rubric:
    essential: tuple[Point, ...]
    bonus: tuple[Point, ...]
    terms: tuple[Term, ...]  # the model answer's key terms (without the question's words)
    polarity: str | None = None  # "yes" or "no": the rubric opens with the answer to a yes/no question
    asked: frozenset[str] = frozenset()  # the stems of the question's own content words

    @property
    def empty(self) -> bool:
        return not (self.essential or self.bonus or self.terms)


@dataclass(frozen=True)
class Measure:
    verdict: Verdict
    points: float | None  # the measure's own grade; None when it cannot decide
    low: float  # grades from a model in [low, high] agree with the measure
    high: float
    comment: str  # which points were found and which were missed
    to_complete: str = ""  # what full points would also need (said only below full points)

    def accepts(self, points: float) -> bool:
        return self.low <= points <= self.high

    def comment_for(self, points: float) -> str:
        """The comment for a grade of ``points``: what was found, and what full points need."""
        return f"{self.comment} {self.to_complete}" if self.to_complete and points < self.high else self.comment


def _enough(found: int, size: int) -> bool:
    return size > 0 and found >= (size if size <= 2 else size - size // 3)


@lru_cache(maxsize=8)
def _stemmer(language: str) -> Stemmer.Stemmer:
    name = language.strip().lower()
    return Stemmer.Stemmer(name if name in Stemmer.algorithms() else "english")


def is_english(language: str | None) -> bool:
    return not language or language.strip().lower() not in Stemmer.algorithms() or \
        language.strip().lower() in ("english", "porter")


@lru_cache(maxsize=8)
def _synonyms(language: str) -> dict[str, frozenset[str]]:
    stem = _stemmer(language).stemWord
    table: dict[str, set[str]] = {}
    for group in SYNONYM_GROUPS:
        stems = {stem(word) for word in group}
        for one in stems:
            table.setdefault(one, set()).update(stems)
    return {key: frozenset(value) for key, value in table.items()}


def _words(text: str) -> list[str]:
    return [w.replace("’", "'").lower() for w in _WORD.findall(text)]


def _term(word: str, language: str, english: bool) -> Term:
    stem = _stemmer(language).stemWord(word)
    stems = _synonyms(language).get(stem, frozenset({stem})) if english else frozenset({stem})
    return Term(word=word, stems=stems | {stem}, stem=stem)


def _content(words: list[str], english: bool) -> list[str]:
    if not english:
        return [w for w in words if len(w) > 2]
    return [w for w in words if w not in STOP_WORDS and w not in META_WORDS]


def _label(clause: str) -> str:
    text = " ".join(clause.split())
    for marker in (*ESSENTIAL_MARKERS, *BONUS_MARKERS):
        text = re.sub(rf"\b(?:is |are |would be |will be )?(?:an? |the )?{re.escape(marker)}\b", " ", text,
                      flags=re.IGNORECASE)
    text = _TAIL.sub("", " ".join(text.split()))
    previous = None
    while previous != text:
        previous, text = text, _LEAD.sub("", text).strip()
    return text.strip(" ,;:-")[:80]


def _points(clause: str, language: str, english: bool, asked: set[str]) -> list[Point]:
    """One marked clause as points: ``a or b`` alternatives, ``a and b`` (short parts) separate points."""
    label = _label(clause)
    parts = re.split(r",|\band\b", label)
    words_of = [_content(_words(part), english) for part in parts]
    if len(parts) > 1 and all(0 < len(w) <= 3 for w in words_of):
        return [p for part in parts for p in _points_of(part.strip(), language, english, asked)]
    return _points_of(label, language, english, asked)


def _points_of(label: str, language: str, english: bool, asked: set[str]) -> list[Point]:
    """A point's alternatives; the question's own words are left out of one (an answer says "it") unless
    it has no other words."""
    stem = _stemmer(language).stemWord
    alternatives = []
    echo = True
    for option in re.split(r"\bor\b|/", label):
        words = _content(_words(option), english)
        new = [w for w in words if stem(w) not in asked]
        echo = echo and not new
        if words:
            alternatives.append(tuple(_term(w, language, english) for w in dict.fromkeys(new or words)))
    return [Point(label=label, alternatives=tuple(alternatives), echo=echo)] if alternatives else []


def _marker(clause: str, markers: tuple[str, ...]) -> bool:
    lowered = f" {' '.join(_words(clause))} "
    return any(f" {m} " in lowered for m in markers)


def read_rubric(rubric: str, question: str = "", *, language: str | None = None) -> Rubric:
    """The rubric's essential and bonus points and its key terms (see the module)."""
    english = is_english(language)
    lang = (language or "english").strip().lower() or "english"
    essential: list[Point] = []
    bonus: list[Point] = []
    terms: dict[str, Term] = {}
    stem = _stemmer(lang).stemWord
    asked = {stem(w) for w in _words(question[:MAX_RUBRIC])}
    for sentence in _SENTENCE.split(rubric[:MAX_RUBRIC]):
        clauses = [sentence]
        if _marker(sentence, ESSENTIAL_MARKERS) and _marker(sentence, BONUS_MARKERS):
            clauses = sentence.split(",")
        for clause in clauses:
            if _marker(clause, BONUS_MARKERS):
                bonus.extend(_points(clause, lang, english, asked))
            elif _marker(clause, ESSENTIAL_MARKERS):
                essential.extend(_points(clause, lang, english, asked))
            else:
                for word in _content(_words(clause), english):
                    if stem(word) not in asked and len(terms) < MAX_TERMS:
                        terms.setdefault(stem(word), _term(word, lang, english))
    opening = _POLAR.match(rubric[:MAX_RUBRIC])
    question_stems = frozenset(stem(w) for w in _content(_words(question[:MAX_RUBRIC]), english))
    return Rubric(essential=tuple(essential), bonus=tuple(bonus), terms=tuple(terms.values()),
                  polarity=opening.group(1).lower() if opening else None, asked=question_stems)


def _answer_polarity(answer: str) -> str | None:
    words = _words(answer[:200])
    if not words:
        return None
    return "yes" if words[0] in _YES else "no" if words[0] in _NO else None


@dataclass(frozen=True)
class Said:
    """The stems an answer says, and the stems it says only after a negation (*not energy*)."""

    affirmed: frozenset[str]
    denied: frozenset[str]

    def doubts(self, point: Point) -> bool:
        """The answer both says and denies a word of ``point`` ("not a source of energy; … energy …")."""
        return any(term.said_in(self.affirmed) and term.said_in(self.denied) for term in point.terms())


def _counterfactual(sentence: str) -> bool:
    opening = " ".join(_words(sentence)[:5]) + " "
    return any(opening.startswith(f"{opener} ") for opener in COUNTERFACTUAL_OPENERS)


def answer_stems(answer: str, *, language: str | None = None) -> Said:
    """The stems the answer says; a content word up to a few after a negation in its clause is denied, not
    said, and one just before it is said and denied (unless the sentence imagines the opposite: "without
    light there is no energy").  Stop words are not said."""
    stem = _stemmer((language or "english").strip().lower() or "english").stemWord
    said: set[str] = set()
    denied: set[str] = set()
    for sentence in _SENTENCE.split(answer[:MAX_ANSWER]):
        imagined = _counterfactual(sentence)
        for clause in _CLAUSE.split(sentence):
            reach = 0
            subject: str | None = None  # "gravity does not act": the word a negation's verb is about is doubted
            for word in _words(clause):
                bare = word.replace("'", "")
                if bare in NEGATIONS or word.endswith("n't"):
                    if not imagined:
                        reach = NEGATION_REACH
                        if subject is not None:
                            denied.add(subject)
                    continue
                if bare in STOP_WORDS:
                    subject = subject if bare in AUXILIARIES else None
                    continue
                if reach:
                    reach -= 1
                    denied.add(stem(word))
                    continue
                said.add(stem(word))
                subject = stem(word)
    return Said(frozenset(said), frozenset(denied))


def _names(points: list[Point]) -> str:
    return "; ".join(f"“{p.label}”" for p in points)


def measure(rubric: Rubric, answer: str, max_points: int, *, language: str | None = None) -> Measure:
    """How the answer meets the rubric: a verdict, the measure's points, the range it accepts, a comment."""
    full = float(max_points)
    below = max(1.0, full - 1)
    spoken = answer_stems(answer, language=language)
    said = spoken.affirmed
    polarity = _answer_polarity(answer) if rubric.polarity else None
    if polarity is not None and polarity != rubric.polarity:
        return Measure("wrong", 0.0, 0.0, 0.0, f"The answer is “{rubric.polarity}”, not “{polarity}”.")
    if not polarity and not _content(_words(answer[:MAX_ANSWER]), is_english(language)):
        return Measure("wrong", 0.0, 0.0, 0.0, "No answer to grade: the answer says nothing the rubric asks for.")
    if rubric.empty:
        return Measure("undecided", None, 0.0, full, "The rubric names no words to check the answer against.")
    premise = sorted(spoken.denied & rubric.asked - said)
    if len(premise) >= 2:  # "plants do not need light; …": the answer denies what the question is about
        return Measure("undecided", None, 0.0, full, "The answer denies what the question asks about; the check "
                       "cannot follow what it says instead.")
    hit = [t for t in rubric.terms if t.said_in(said)]
    coverage = len(hit) / len(rubric.terms) if rubric.terms else 0.0
    bonus_found = [p for p in rubric.bonus if p.found_in(said)]
    bonus_note = f" Bonus found: {_names(bonus_found)}." if bonus_found else ""
    if not rubric.essential:
        return _by_terms(rubric, hit, coverage, full, below)
    found = [p for p in rubric.essential if p.found_in(said) or (polarity and p.echo and not p.denied_in(spoken))]
    missing = [p for p in rubric.essential if p not in found]
    doubtful = [p for p in found if spoken.doubts(p)]
    denied = [p for p in missing if p.denied_in(spoken)]
    touched = [p for p in missing if p not in denied and p.touched_in(said)]
    if doubtful:
        return Measure("undecided", None, 0.0, full, f"The answer both says and denies {_names(doubtful)}.")
    if not missing:
        complete = bonus_found or not rubric.bonus or coverage >= 1 / 3 or full <= 1
        value = full if complete else full - 1
        extra = "" if complete else f"For full points, also: {_names(list(rubric.bonus))}."
        return Measure("right", value, value, full, f"Right: the answer has the essential point "
                       f"{_names(found)}.{bonus_note}", extra)
    if found and full > 1:
        value = min(below, max(1.0, math.floor(full * len(found) / len(rubric.essential))))
        return Measure("partial", value, 1.0, below, f"Partly right: the answer has {_names(found)} but misses "
                       f"{_names(missing)}.{bonus_note}")
    if denied and not found:
        return Measure("wrong", 0.0, 0.0, 0.0, f"The answer denies the essential point {_names(denied)}.")
    if found or touched:  # part of a point: its other words may be said in words the check does not know
        return Measure("undecided", None, 0.0, full, f"The answer has part of {_names(touched or missing)}; the "
                       "rest may be in words the check cannot follow.")
    if hit:  # the essentials not said, but some of the model answer's words
        return Measure("undecided", None, 0.0, below, f"The essential point {_names(missing)} was not found in "
                       f"these words, though the answer has {_words_list(hit)}.")
    return Measure("wrong", 0.0, 0.0, 0.0, f"The answer misses the essential point {_names(missing)}." + bonus_note)


def _words_list(terms: list[Term]) -> str:
    return ", ".join(t.word for t in terms[:8]) or "none of its key terms"


def _by_terms(rubric: Rubric, hit: list[Term], coverage: float, full: float, below: float) -> Measure:
    """A rubric with no marked points: the share of its key terms the answer has."""
    missing = [t for t in rubric.terms if t not in hit]
    enough = len(hit) >= 3 or (coverage >= 0.5 and len(hit) >= min(2, len(rubric.terms)))
    if enough:  # a short right answer carries the model answer's core, not all of it
        value = full if coverage >= 0.6 or len(hit) >= 3 or full <= 1 else max(1.0, full - 1)
        rest = f"For full points, also: {_words_list(missing)}." if missing else ""
        return Measure("right", value, value, full, f"Right: the answer has {_words_list(hit)}.", rest)
    if not hit:
        return Measure("wrong", 0.0, 0.0, 0.0, f"The answer has none of the rubric's key terms "
                       f"({_words_list(missing)}).")
    if coverage >= 0.25 and len(hit) >= 2 and full > 1:
        return Measure("partial", min(below, max(1.0, math.floor(full / 2))), 1.0, below,
                       f"Partly right: the answer has {_words_list(hit)} but not {_words_list(missing)}.")
    return Measure("undecided", None, 0.0, below, f"The answer has only {_words_list(hit)} of the rubric's "
                   f"key terms; missing: {_words_list(missing)}.")
