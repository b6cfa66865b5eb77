"""The questions a teacher expects: a learner's question matched to a scene's ``faq:`` (pure).

A slide or a discussion may carry ``faq:`` (lessons/lesson.py: :class:`ExpectedQuestion`, each with
one or several phrasings ``q`` and the answer ``a``).  :func:`match` finds the expected question a
learner's question is, in other words than its phrasings.  The question and the lesson are first said
one way (lessons/faq_words.py: contractions, US spelling, number and fraction words as numbers, a typo
taken for the lesson word one edit away); then the question's content words (stemmed, stop words and
the words that only ask left out, but for :data:`KEEP`) are scored against each phrasing, weighted by
how rare each word is in the lesson (its slides, scripts, faqs; a word the lesson never says: rarest):

* ``asked`` — the share of the question's weight a phrasing holds (a synonym, a word only in the faq's
  other phrasings, its answer or its scene's slide counts for less: :data:`SYNONYM`,
  :data:`OTHER_PHRASING`, :data:`ANSWER_WORD`, :data:`SCENE_WORD`);
* ``said`` — the share of the phrasing's weight the question holds (a long phrasing the question
  touches on one word is not it);

its score is their weighted mean, plus the share of the question's neighbouring word pairs it holds
(:data:`PAIRS`), the best phrasing's; a phrasing said word for word is far ahead (:data:`EXACT`), one
under :data:`FLOOR` (or holding under :data:`ASKED_FLOOR` of the question) far behind.  A faq that asks
what the question asks (why, how much, yes or no …) is ahead (:data:`SAME_KIND`), the current scene's
faqs are too (:data:`CURRENT`).  A match is the best faq whose score reaches :data:`THRESHOLD` and leads
the next faq by :data:`MARGIN` — two faqs nearly as good are no match, as a question the lesson's faqs
do not hold is none: a miss falls back to the lesson's grounded answer, a wrong match says another
question's answer, so the numbers lean to missing.  Numbers and negations count: "is 3/4 the same as
4/3" is not "is 3/4 the same as 6/8".  Tuned on ``tests/benchmarks/faq_tune.yaml`` and a lesson of its
own (``faq_magnets.yaml``, ``faq_tune_magnets.yaml``), never on ``faq_heldout.yaml``
(``tests/benchmarks/faq_match.py`` measures either).  A small model choosing among the close
candidates was measured and left out: SmolLM2-135M mostly picks the first one offered.
"""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from .faq_words import fix_typos, normal, synonym_groups, synonyms, words
from .grounding import ASKING, WORD, lesson_passages, stemmer, stopwords
from .lesson import DiscussionScene, ExpectedQuestion, Lesson, SlideScene

THRESHOLD = 0.65  # the lowest score that is a match (tuned on faq_tune.yaml)
MARGIN = 0.09  # how far the best faq leads the next one
CURRENT = 0.15  # the scene on screen's faqs, ahead by this much
OTHER_PHRASING = 0.85  # a question word found only in the faq's other phrasings
SYNONYM = 0.8  # ... a synonym of it in the phrasing (lessons/faq_words.py)
ANSWER_WORD = 0.7  # ... only in the faq's answer
SCENE_WORD = 0.25  # ... only on the faq's own slide (its title, elements, script)
OTHER_NUMBERS = 0.6  # a question with numbers neither the phrasing nor the answer holds: its score times this
FEWER_NUMBERS = 0.8  # ... one without the phrasing's own numbers
FLOOR = 0.45  # a phrasing whose words' score is below this: another question, however its kind and scene agree
ASKED_FLOOR = 0.3  # ... or whose share of the question's words is below this (the question is mostly another's)
UNDER_FLOOR = 0.7  # ... its score times this
EXACT = 0.5  # a phrasing said word for word: ahead by this much
UNKNOWN = 1.2  # a word the lesson never says weighs this many times its rarest word
PAIRS = 0.1  # the share of the question's pairs of neighbouring words the phrasing holds, times this: added
ASKED_WEIGHT = 0.7  # of the score: the question's share (the phrasing's share is the rest)
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
YES_FOR_SPECIFIC = 0.05  # a yes-or-no or a what question, to a faq that only asks how much, why, when …: behind
YES_OR_NO = frozenset({"yes", "if"})
SPECIFIC = frozenset({"amount", "why", "when", "where", "how"})


def kind(text: str) -> str:
    """What ``text`` asks for: if, amount, why, when, where, how, what, yes (a yes/no question) or say."""
    folded = normal(text)
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


_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}\b)")


_WORDS = re.compile(r"[^\W_]+")
_ONE = re.compile(r"\bone\b")


def _numbers(text: str, held: bool = False) -> frozenset[str]:
    """The numbers of ``text`` (normal: "three quarters" is 3/4), "1,200" as 1200 ("range(1,5)" is 1 and 5);
    ``held``: "one" is 1 too (a faq's "three is more than one" holds the question's 1, yet "the right one" in
    a question asks no number)."""
    found = frozenset(NUMBER.findall(_THOUSANDS.sub("", text)))
    return found | {"1"} if held and _ONE.search(text) else found


KEEP = frozenset({"inside", "up", "down"})  # stop words (or asking words) that tell near twins apart here


def terms(text: str, language: str = "english", *, asking: bool = False) -> list[str]:
    """grounding's ``terms`` (content words, stemmed; ``asking``: without the words that only ask), keeping
    :data:`KEEP` ("which colour is on the inside" is not "… on the outside")."""
    drop = (stopwords() | (ASKING if asking else frozenset())) - KEEP
    words = [w for w in WORD.findall(text.lower()) if w not in drop and (len(w) > 1 or w.isdigit())]
    return stemmer(language)(words) if words else []


def _pairs(words: list[str]) -> frozenset[tuple[str, str]]:
    return frozenset(itertools.pairwise(words))


@dataclass(frozen=True)
class _Facts:
    """One expected question's numbers, negations, kinds and words as said (computed once a lesson)."""

    answer_numbers: frozenset[str]  # its answer's numbers ("one" too)
    held: tuple[frozenset[str], ...]  # each phrasing's numbers ("one" too)
    own: tuple[frozenset[str], ...]  # ... as digits only
    negated: tuple[bool, ...]
    said: tuple[list[str], ...]  # each phrasing's words in order (normal)
    kinds: frozenset[str]


def _facts(faq: ExpectedQuestion, texts: tuple[str, ...]) -> _Facts:
    return _Facts(_numbers(normal(faq.a), held=True), tuple(_numbers(t, held=True) for t in texts),
                  tuple(_numbers(t) for t in texts), tuple(bool(NEGATION.search(t)) for t in texts),
                  tuple(_WORDS.findall(t) for t in texts), frozenset(kind(t) for t in faq.phrasings))


@dataclass(frozen=True)
class _Index:
    weights: dict[str, float]  # word → its weight (inverse document frequency in the lesson)
    scene_words: dict[str, frozenset[str]]  # scene id → the words of its slide, title and script
    expected: tuple[Expected, ...]
    phrasings: tuple[tuple[frozenset[str], ...], ...]  # per expected question: each phrasing's words
    pairs: tuple[tuple[frozenset[tuple[str, str]], ...], ...]  # ... each phrasing's pairs of neighbouring words
    others: tuple[frozenset[str], ...]  # per expected question: all its phrasings' words
    answers: tuple[frozenset[str], ...]  # per expected question: its answer's words
    texts: tuple[tuple[str, ...], ...]  # per expected question: each phrasing, normal
    facts: tuple[_Facts, ...]  # per expected question: what its phrasings and answer say beyond their words
    vocabulary: frozenset[str]  # every word of the lesson as written (normal): what a typo is taken for
    synonyms: dict[str, frozenset[str]]  # a stemmed word → its synonyms (English lessons)


def _scene_text(scene: SlideScene | DiscussionScene) -> str:
    steps = " ".join(step.say or "" for step in scene.script)
    if isinstance(scene, SlideScene):
        return " ".join([scene.title, steps, *(e.plain_text() for e in scene.elements)])
    return " ".join([scene.title or "", scene.topic, scene.prompt or "", steps])


def _build(lesson: Lesson) -> _Index:
    language = lesson.language or "english"
    expected = tuple(expected_questions(lesson))
    texts = tuple(tuple(normal(p) for p in e.faq.phrasings) for e in expected)
    phrasings = tuple(tuple(frozenset(terms(p, language, asking=True)) for p in ps) for ps in texts)
    pairs = tuple(tuple(_pairs(terms(p, language, asking=True)) for p in ps) for ps in texts)
    others = tuple(frozenset[str]().union(*ps) for ps in phrasings)
    answers = tuple(frozenset(terms(normal(e.faq.a), language)) for e in expected)
    passages = [normal(p.text) for p in lesson_passages(lesson)]
    documents: list[frozenset[str]] = [frozenset(terms(p, language)) for p in passages]
    documents += [words for ps in phrasings for words in ps] + [a | o for a, o in zip(answers, others, strict=True)]
    frequency = Counter(word for document in documents for word in document)
    total = max(len(documents), 1)
    weights = {word: math.log(1 + (total - n + 0.5) / (n + 0.5)) for word, n in frequency.items()}
    scenes = [s for s in lesson.scenes if isinstance(s, (SlideScene, DiscussionScene))]
    scene_text = {scene.id: normal(_scene_text(scene)) for scene in scenes}
    scene_words = {sid: frozenset(terms(text, language)) for sid, text in scene_text.items()}
    vocabulary = frozenset[str]().union(*(words(t) for t in [*passages, *scene_text.values(),
                                                             *(p for ps in texts for p in ps)]),
                                        *(words(normal(e.faq.a)) for e in expected))
    english = language.lower() in ("english", "en")
    groups = [terms(" ".join(group), language) for group in synonym_groups()] if english else []
    facts = tuple(_facts(e.faq, t) for e, t in zip(expected, texts, strict=True))
    return _Index(weights, scene_words, expected, phrasings, pairs, others, answers, texts, facts, vocabulary,
                  synonyms(groups))


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
    skip = {w for name in ignore for w in terms(normal(name), language)}
    said = fix_typos(normal(question), index.vocabulary, stopwords() | ASKING)
    sequence = [w for w in terms(said, language, asking=True) if w not in skip]
    asked, asked_pairs = list(dict.fromkeys(sequence)), _pairs(sequence)
    if not asked:
        return []
    unknown = max(index.weights.values(), default=1.0) * UNKNOWN
    numbers, negated, asks = _numbers(said), bool(NEGATION.search(said)), kind(question)
    near = {w: index.synonyms.get(w, frozenset()) for w in asked}
    said_words = _WORDS.findall(said)
    found: list[tuple[Expected, float]] = []
    for expected, phrasings, pairs, facts, others, answer in zip(
            index.expected, index.phrasings, index.pairs, index.facts, index.others, index.answers, strict=True):
        scene = index.scene_words.get(expected.scene_id, frozenset())
        best = 0.0
        for phrasing, pair, theirs, own, negation, words_of in zip(phrasings, pairs, facts.held, facts.own,
                                                                   facts.negated, facts.said, strict=True):
            if not phrasing:
                continue
            held = {w: 1.0 if w in phrasing else SYNONYM if near[w] & phrasing else OTHER_PHRASING if w in others
                    else ANSWER_WORD if w in answer else SCENE_WORD if w in scene else 0.0 for w in asked}
            asked_share = _share(asked, held, index.weights, unknown)
            words_said = set(asked)
            said_share = _share(phrasing, {w: 1.0 if w in words_said else
                                           SYNONYM if index.synonyms.get(w, frozenset()) & words_said else 0.0
                                           for w in phrasing}, index.weights, unknown)
            score = ASKED_WEIGHT * asked_share + (1 - ASKED_WEIGHT) * said_share
            if asked_pairs:
                score += PAIRS * len(asked_pairs & pair) / len(asked_pairs)
            if numbers - theirs - facts.answer_numbers:
                score *= OTHER_NUMBERS  # other numbers: another question ("3/4 of 60" is not "3/4 of 40")
            elif own - numbers:
                score *= FEWER_NUMBERS  # the phrasing's own numbers, not asked ("a quarter" is not "3/4")
            if negated != negation:
                score *= 0.95
            if words_of == said_words:
                score += EXACT  # its own phrasing (in any case, with any marks): no near twin is as good
            best = max(best, score if score >= FLOOR and asked_share >= ASKED_FLOOR else score * UNDER_FLOOR)
        kinds = facts.kinds
        if asks in kinds or (asks in YES_OR_NO and kinds & YES_OR_NO):  # "would it …" is a yes or a no too
            best += SAME_KIND
        elif asks in SPECIFIC:
            # "how much is it tilted" is not "why is it tilted"; a why is a little less a yes-or-no question
            best -= OTHER_KIND if kinds & SPECIFIC else NO_KIND
        elif asks in ("yes", "what") and kinds <= SPECIFIC:
            best -= YES_FOR_SPECIFIC
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
