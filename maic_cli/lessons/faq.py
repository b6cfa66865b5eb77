"""The questions a teacher expects: a learner's question matched to a scene's ``faq:`` (pure).

A slide or a discussion may carry ``faq:`` (lessons/lesson.py: :class:`ExpectedQuestion`, each with
one or several phrasings ``q`` and the answer ``a``).  :func:`match` finds the expected question a
learner's question is, in other words than its phrasings: the question's content words (stemmed,
stop words and the words that only ask left out: lessons/grounding.py's :func:`terms`) are scored
against each phrasing, weighted by how rare each word is in the lesson (its slides, scripts, faqs):

* ``asked`` — the share of the question's weight a phrasing holds (a word only in the faq's answer,
  its other phrasings or its scene's slide counts for less: :data:`ANSWER_WORD`, :data:`SCENE_WORD`);
* ``said`` — the share of the phrasing's weight the question holds (a long phrasing the question
  touches on one word is not it);

its score is their weighted mean, the best phrasing's; the current scene's faqs are a little
ahead (:data:`CURRENT`), then the lesson's.  A match is the best faq whose score reaches
:data:`THRESHOLD` (measured on ``tests/benchmarks/faq_tune.yaml``: every paraphrase written before
the faqs; never on ``faq_heldout.yaml``) and leads the next faq by :data:`MARGIN` — two faqs nearly
as good are no match, as a question the lesson's faqs do not hold is none.  Numbers and negations
count: "is 3/4 the same as 4/3" is not "is 3/4 the same as 6/8".
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from .grounding import lesson_passages, terms
from .lesson import DiscussionScene, ExpectedQuestion, Lesson, SlideScene

THRESHOLD = 0.5  # the lowest score that is a match (tuned on faq_tune.yaml)
MARGIN = 0.06  # how far the best faq leads the next one
CURRENT = 0.1  # the scene on screen's faqs, ahead by this much
ANSWER_WORD = 0.7  # a question word found only in the faq's answer or its other phrasings
SCENE_WORD = 0.25  # ... only on the faq's own slide (its title, elements, script)
ASKED_WEIGHT = 0.6  # of the score: the question's share (the phrasing's share is the rest)
NUMBER = re.compile(r"\d+(?:[./]\d+)?")
NEGATION = re.compile(r"\b(?:not|no|never|without|n't|isn't|aren't|doesn't|don't|wasn't|weren't|can't|cannot)\b",
                      re.IGNORECASE)


KINDS = (  # what a question asks for, by its opening words (the first that fits)
    ("if", re.compile(r"\b(what if|what would happen|would|wouldn't|if)\b")),
    ("amount", re.compile(r"\bhow (much|many|far|long|big|often|hot|cold)\b|\bby how\b")),
    ("why", re.compile(r"\bwhy\b|\bhow come\b|\bwhat makes\b|\bwhat causes\b|\bbecause\b")),
    ("when", re.compile(r"\bwhen\b|\bwhat time\b|\bwhich month\b|\bwhat month\b")),
    ("where", re.compile(r"\bwhere\b")),
    ("how", re.compile(r"\bhow\b")),
    ("what", re.compile(r"\b(what|which|who)\b")),
    ("yes", re.compile(r"^\W*(is|are|was|were|do|does|did|can|could|will|should|must|has|have|isn't|aren't|doesn't|"
                       r"don't|didn't|can't)\b")),
)
SAME_KIND = 0.1  # a phrasing that asks for what the question asks for, ahead by this much
OTHER_KIND = 0.2  # ... one that asks for something else (a why for a how much), behind by this much
NO_KIND = 0.12  # ... one that asks no such thing (a yes-or-no faq for a why), behind by this much
SPECIFIC = frozenset({"amount", "why", "when", "where", "how"})


def kind(text: str) -> str:
    """What ``text`` asks for: if, amount, why, when, where, how, what, yes (a yes/no question) or say."""
    folded = text.casefold().replace("’", "'")
    return next((name for name, pattern in KINDS if pattern.search(folded)), "say")


@dataclass(frozen=True)
class Expected:
    """One expected question of a lesson, and where it is."""

    scene_id: str
    index: int  # its place in the scene's faq
    faq: ExpectedQuestion


@dataclass(frozen=True)
class Match:
    expected: Expected
    score: float
    next_best: float  # the next faq's score (0: none)


def expected_questions(lesson: Lesson) -> list[Expected]:
    """Every expected question of ``lesson``, in lesson order."""
    return [Expected(scene.id, index, faq) for scene in lesson.scenes
            if isinstance(scene, (SlideScene, DiscussionScene))
            for index, faq in enumerate(scene.faq)]


NUMBER_WORDS = {w: str(n) for n, w in enumerate(  # not "one": "one and the same", "the right one"
    "zero - two three four five six seven eight nine ten eleven twelve".split()) if w != "-"}
_NUMBER_WORD = re.compile(r"\b(" + "|".join(NUMBER_WORDS) + r")\b", re.IGNORECASE)


def _digits(text: str) -> str:
    """``text`` with its number words as digits ("one to ten" is "1 to 10")."""
    return _NUMBER_WORD.sub(lambda m: NUMBER_WORDS[m.group(1).lower()], text)


def _numbers(text: str) -> frozenset[str]:
    return frozenset(NUMBER.findall(_digits(text).replace(",", "")))


@dataclass(frozen=True)
class _Index:
    weights: dict[str, float]  # word → its weight (inverse document frequency in the lesson)
    scene_words: dict[str, frozenset[str]]  # scene id → the words of its slide, title and script
    expected: tuple[Expected, ...]
    phrasings: tuple[tuple[frozenset[str], ...], ...]  # per expected question: each phrasing's words
    answers: tuple[frozenset[str], ...]  # per expected question: its answer's and all its phrasings' words


def _scene_text(scene: SlideScene | DiscussionScene) -> str:
    steps = " ".join(step.say or "" for step in scene.script)
    if isinstance(scene, SlideScene):
        return " ".join([scene.title, steps, *(e.plain_text() for e in scene.elements)])
    return " ".join([scene.title or "", scene.topic, scene.prompt or "", steps])


def _build(lesson: Lesson) -> _Index:
    language = lesson.language or "english"
    expected = tuple(expected_questions(lesson))
    phrasings = tuple(tuple(frozenset(terms(_digits(p), language, asking=True)) for p in e.faq.phrasings)
                      for e in expected)
    answers = tuple(frozenset(terms(_digits(e.faq.a), language)).union(*ps)
                    for e, ps in zip(expected, phrasings, strict=True))
    documents: list[frozenset[str]] = [frozenset(terms(_digits(p.text), language)) for p in lesson_passages(lesson)]
    documents += [words for ps in phrasings for words in ps] + list(answers)
    frequency = Counter(word for document in documents for word in document)
    total = max(len(documents), 1)
    weights = {word: math.log(1 + (total - n + 0.5) / (n + 0.5)) for word, n in frequency.items()}
    scene_words = {scene.id: frozenset(terms(_scene_text(scene), language)) for scene in lesson.scenes
                   if isinstance(scene, (SlideScene, DiscussionScene))}
    return _Index(weights, scene_words, expected, phrasings, answers)


_BUILT: dict[str, _Index] = {}  # a lesson's json → its index (a few lessons a process plays)


def _index_of(lesson: Lesson) -> _Index:
    key = lesson.model_dump_json(include={"language", "scenes"})
    if key not in _BUILT:
        if len(_BUILT) >= 8:
            _BUILT.pop(next(iter(_BUILT)))
        _BUILT[key] = _build(lesson)
    return _BUILT[key]


def _share(words: Iterable[str], found: dict[str, float], weights: dict[str, float], unknown: float) -> float:
    listed = list(words)
    total = sum(weights.get(w, unknown) for w in listed)
    if total <= 0:
        return 0.0
    return sum(weights.get(w, unknown) * found.get(w, 0.0) for w in listed) / total


def scores(lesson: Lesson, question: str, current: str | None = None,
           ignore: Iterable[str] = ()) -> list[tuple[Expected, float]]:
    """Every expected question of ``lesson`` with its score for ``question`` (see the module), best first;
    ``ignore``: words that are not the question's (the class members' names)."""
    index = _index_of(lesson)
    if not index.expected:
        return []
    language = lesson.language or "english"
    skip = {w for name in ignore for w in terms(name, language)}
    asked = [w for w in dict.fromkeys(terms(_digits(question), language, asking=True)) if w not in skip]
    if not asked:
        return []
    unknown = max(index.weights.values(), default=1.0) * 1.2  # a word the lesson never says: rarest of all
    numbers, negated, asks = _numbers(question), bool(NEGATION.search(question)), kind(question)
    found: list[tuple[Expected, float]] = []
    for expected, phrasings, answer in zip(index.expected, index.phrasings, index.answers, strict=True):
        scene = index.scene_words.get(expected.scene_id, frozenset())
        best = 0.0
        for phrasing, text in zip(phrasings, expected.faq.phrasings, strict=True):
            if not phrasing:
                continue
            held = {w: 1.0 if w in phrasing else ANSWER_WORD if w in answer else SCENE_WORD if w in scene else 0.0
                    for w in asked}
            asked_share = _share(asked, held, index.weights, unknown)
            said_share = _share(phrasing, {w: 1.0 for w in asked}, index.weights, unknown)
            score = ASKED_WEIGHT * asked_share + (1 - ASKED_WEIGHT) * said_share
            theirs = _numbers(text)
            if numbers != theirs and (numbers or theirs) and not numbers <= _numbers(expected.faq.a) | theirs:
                score *= 0.6  # other numbers: another question ("3/4 of 60" is not "3/4 of 40")
            if negated != bool(NEGATION.search(text)):
                score *= 0.95
            best = max(best, score)
        kinds = {kind(text) for text in expected.faq.phrasings}
        if asks in kinds:
            best += SAME_KIND
        elif asks in SPECIFIC:
            # "how much is it tilted" is not "why is it tilted"; a why is a little less a yes-or-no question
            best -= OTHER_KIND if kinds & SPECIFIC else NO_KIND
        if expected.scene_id == current:
            best += CURRENT
        found.append((expected, best))
    found.sort(key=lambda pair: -pair[1])
    return found


def match(lesson: Lesson, question: str, current: str | None = None, *, ignore: Iterable[str] = (),
          threshold: float = THRESHOLD, margin: float = MARGIN) -> Match | None:
    """The expected question ``question`` is (see the module), or ``None``."""
    ranked = scores(lesson, question, current, ignore)
    if not ranked or ranked[0][1] < threshold:
        return None
    best, score = ranked[0]
    others = [s for e, s in ranked[1:] if e.faq.a.strip() != best.faq.a.strip()]
    next_best = others[0] if others else 0.0
    if score - next_best < margin:
        return None
    return Match(best, score, next_best)


def candidates(lesson: Lesson, question: str, current: str | None = None, most: int = 3) -> list[Expected]:
    """The ``most`` best expected questions for ``question``, for a chooser (a small model picks one or none)."""
    return [e for e, s in scores(lesson, question, current)[:most] if s > 0]
