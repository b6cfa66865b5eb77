"""Grounded answers: the lesson's sentences that answer a learner's question, and a check of a reply.

Pure (no files, no terminal).  A lesson is cut into short :class:`Passage` s — a slide's text
elements sentence by sentence, each bullet and table row with its slide's title, formulas, an
image's description, the teacher's script sentences (never a classmate's ``by:`` line), and, once
a quiz question has been answered, its key or rubric (never before: a question asked during a quiz must not give the
answer away).  :func:`ground` ranks them for a question with BM25 (``bm25s``; ``numpy`` and the
stemmer are imported on the first question, never at startup) and says what the question is:

* ``lesson`` — its words are the lesson's: the best passages go into the agents' context;
* ``general`` — it has no words of its own ("I don't get it", "say it again"): the current
  slide's passages stand in;
* ``beyond`` — most of its words are not in the lesson: the class says so and brings it back.

:func:`carries` checks a reply against the passages (their stemmed words beyond the question's
own, enough of them); :func:`fallback_text` is what the teacher says plainly when a small
model's reply does not carry them.  Words are lower-cased, stop words left out, stemmed in the
lesson's language where the stemmer knows it (English otherwise).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Literal

from ..engine.models import SlideElement
from ..replies.prose import as_prose, compose, is_question
from .lesson import Lesson, QuizScene, ScriptStep, SlideScene

MAX_PASSAGE = 400  # characters of one passage
MAX_PASSAGES = 2000  # a lesson's passages at most (60 scenes × 40 elements is already more than a lesson has)
MAX_SOURCE_CHARS = 60_000  # of the lesson's text the gate of a small model's speech reads
TOP = 3  # passages put in the agents' context
# Share of the question's words the lesson must know for the question to be the lesson's.  Low on purpose:
# a lesson question met as "beyond the lesson" (no answer at all) costs more than an outside question
# answered from the lesson's nearest sentences ("How can a gas make a tree heavy?" knows 1 word of 3).
IN_LESSON = 0.3
STRONG_MATCH = 0.5  # below this share the question is widened by its best matches' words ...
FEEDBACK = 2  # ... of this many passages
CURRENT_SCENE_BOOST = 1.25  # at equal relevance, the slide on screen first
CARRY_SHARE = 0.5  # share of a passage's new words a reply must say to carry it ...
CARRY_MOST = 3  # ... but never more than this many
SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[\"'(A-Z0-9])")
WORD = re.compile(r"[^\W_]+", re.UNICODE)
# Words that ask rather than say what a question is about ("can you explain it again?").
ASKING = frozenset("""
    explain explained explaining mean means meant understand understood get got know knew tell told say
    said show again please thanks thank ok okay yes yeah no sorry confused confusing lost sure really
    example examples idea ideas actually exactly word words thing things stuff part bit lot lots
    question questions answer answers help slide lesson teacher like just also well want
    hi hello hey does did do doing done make made makes happen happens happened work works
    give gives gave get gets put puts take takes go goes went off out up down
""".split())
Verdict = Literal["lesson", "general", "beyond"]
PassageKind = Literal["text", "bullet", "row", "formula", "image", "code", "script", "quiz", "discussion"]
SPOKEN_KINDS = frozenset({"text", "bullet", "row", "formula", "script", "quiz"})  # what the teacher may read out
PROSE_KINDS = frozenset({"text", "bullet", "script", "quiz"})
# Structured or descriptive passages repeat their key words (a table row names "equinox" twice): a little behind.
KIND_WEIGHT: dict[str, float] = {"row": 0.6, "image": 0.6, "code": 0.8, "discussion": 0.5}


@dataclass(frozen=True)
class Passage:
    text: str
    scene_id: str
    kind: PassageKind
    element_id: str | None = None  # the slide element it comes from (spotlighted when it is read out)
    title: str = ""  # its slide's title: searched with it, never said with it (a bullet's)

    @property
    def is_question(self) -> bool:
        return self.text.rstrip().endswith("?")


@dataclass
class Grounding:
    """What the lesson says about one question."""

    verdict: Verdict
    passages: list[Passage] = field(default_factory=list)
    terms: frozenset[str] = frozenset()  # the question's own words (stemmed)
    weak: bool = False  # few of the question's words are the lesson's: its passages may not answer it

    @property
    def lines(self) -> list[str]:
        """The passages as the prompts show them: each a sentence."""
        return [as_sentence(p.text) for p in self.passages]


def as_sentence(text: str) -> str:
    """``text`` with a final full stop if it has none (a bullet, a table row)."""
    text = text.rstrip()
    return text if text[-1:] in ".!?…" else text + "."


# -- words ---------------------------------------------------------------------------------------
STEMMER_LANGUAGES = {"english", "french", "german", "spanish", "italian", "portuguese", "dutch", "swedish",
                     "norwegian", "danish", "finnish", "russian", "hungarian", "romanian", "turkish"}


@lru_cache(maxsize=8)
def stemmer(language: str) -> Callable[[list[str]], list[str]]:
    """The Snowball stemmer of ``language`` (English when it has none); lower-casing only without PyStemmer."""
    try:
        import Stemmer
    except ImportError:  # pragma: no cover - PyStemmer is a dependency; a bare install still grounds
        return lambda words: words
    name = language.lower() if language.lower() in STEMMER_LANGUAGES else "english"
    stem: Callable[[list[str]], list[str]] = Stemmer.Stemmer(name).stemWords
    return stem


# Beyond bm25s's English stop words: pronouns, auxiliaries and contractions a learner's question is full of.
COMMON = frozenset("""
    i me my mine we us our you your yours he him his she her it its they them their this that these those
    what which who whom whose when where why how can could would should will shall may might must
    is are was were be been being am have has had do does did not don doesn didn isn aren wasn weren won
    t s d ll re ve m let there here some any much many very so too than then inside into onto within upon
    all each every both other such only own
""".split())


@lru_cache(maxsize=1)
def stopwords() -> frozenset[str]:
    from bm25s.stopwords import STOPWORDS_EN

    return frozenset(STOPWORDS_EN) | COMMON


def terms(text: str, language: str = "english", *, asking: bool = False) -> list[str]:
    """``text``'s content words, stemmed (``asking``: also without the words that only ask)."""
    stop = stopwords()
    words = [w for w in WORD.findall(text.lower()) if w not in stop and (len(w) > 1 or w.isdigit())]
    if asking:
        words = [w for w in words if w not in ASKING]
    return stemmer(language)(words) if words else []


# -- the lesson, cut into passages ---------------------------------------------------------------
def _sentences(text: str) -> list[str]:
    return [s.strip() for s in SENTENCE.split(" ".join(text.split())) if s.strip()]


def _cut(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_PASSAGE else text[:MAX_PASSAGE - 1].rsplit(" ", 1)[0] + "…"


def row_sentence(header: list[str], row: list[str]) -> str:
    """A table row said as a sentence: "For early July (aphelion), distance from the Sun is about 152 million
    km." (no header: its cells, one after another)."""
    cells = [c for c in row if c]
    if not header or not row or not row[0]:
        return as_sentence(", ".join(cells)) if cells else ""
    said = [f"{h[:1].lower() + h[1:] if h[1:2].islower() or len(h) < 2 else h} is {c}"
            for h, c in zip(header[1:], row[1:], strict=False) if c and h]
    if not said:
        return as_sentence(", ".join(cells))
    return as_sentence(f"For {row[0]}, " + (", ".join(said[:-1]) + " and " + said[-1] if len(said) > 1 else said[0]))


def element_passages(element: SlideElement, scene: SlideScene) -> list[Passage]:
    """One element's passages: sentences, bullets and rows with the slide's title, a formula, a picture."""
    def make(text: str, kind: PassageKind, title: str = "") -> Passage:
        return Passage(_cut(text), scene.id, kind, element.id, title)

    if element.type == "bullets":
        return [make(as_sentence(as_prose(item) or item), "bullet", scene.title) for item in element.items
                if item.strip()]
    if element.type == "table":
        rows = [[cell.strip() for cell in row] for row in element.rows]
        header = rows[0] if len(rows) > 1 else []
        return [make(row_sentence(header, row), "row", scene.title) for row in rows[1 if header else 0:] if any(row)]
    content = (element.content or "").strip()
    if not content:
        return []
    if element.type == "formula":
        return [make(content, "formula")]
    if element.type in ("image", "chart", "video", "shape"):  # a description of a picture
        return [make(content, "image")]
    if element.type == "code":
        return [make(content, "code")]
    return [make(sentence, "text") for sentence in _sentences(content)]


def lesson_passages(lesson: Lesson, answered: Iterable[str] = ()) -> list[Passage]:
    """Every passage of ``lesson``; quiz keys and rubrics only of the ``answered`` questions
    (``"<scene id>/<question id>"``)."""
    done = set(answered)
    found: list[Passage] = []
    for scene in lesson.scenes:
        if isinstance(scene, SlideScene):
            for element in scene.elements:
                found += element_passages(element, scene)
            found += _teacher_lines(scene.id, scene.script)
        elif isinstance(scene, QuizScene):
            for question in scene.questions:
                if f"{scene.id}/{question.id}" not in done:
                    continue
                if question.rubric:
                    found += [Passage(_cut(s), scene.id, "quiz") for s in _sentences(question.rubric)]
                else:
                    right = ", ".join(question.options[i] for i in sorted(question.key()) if i < len(question.options))
                    found.append(Passage(_cut(f"{question.question} {right}."), scene.id, "quiz"))
        else:
            found.append(Passage(_cut(scene.topic), scene.id, "discussion"))
            found += _teacher_lines(scene.id, scene.script)
    return found[:MAX_PASSAGES]


def _teacher_lines(scene_id: str, script: list[ScriptStep]) -> list[Passage]:
    """A script's sentences the teacher says (a classmate's ``by:`` line may be a wrong idea on purpose)."""
    return [Passage(_cut(s), scene_id, "script") for step in script if step.say and step.by is None
            for s in _sentences(step.say)]


def lesson_sources(lesson: Lesson, answered: Iterable[str] = (), current: str | None = None,
                   most: int = MAX_SOURCE_CHARS) -> list[str]:
    """The lesson's own sentences, as the gate of a small model's speech reads them (replies/gate.py): every
    passage, each bullet as written (and under its slide's title), discussion prompts, the expected answers
    (``faq:``) and discussions' ``close:`` lines (a bare title is no sentence to copy); the
    ``current`` scene's first, at most ``most`` characters."""
    texts: list[tuple[bool, str]] = [(p.scene_id == current, p.text) for p in lesson_passages(lesson, answered)]
    for scene in lesson.scenes:
        here = scene.id == current
        if isinstance(scene, SlideScene):
            texts += [(here, item) for e in scene.elements for item in e.items if item.strip()]
            # a bullet under its slide's title (how the lecture reads a list) ...
            texts += [(here, f"{scene.title}: {item}") for e in scene.elements for item in e.items if item.strip()]
        elif not isinstance(scene, QuizScene) and scene.prompt:
            texts.append((here, scene.prompt))
        if not isinstance(scene, QuizScene):  # ... the answers the lesson expects to give, a discussion's closing
            texts += [(here, f.a) for f in scene.faq]
            texts += [(here, s.say) for s in getattr(scene, "close", []) if s.say]
    texts.sort(key=lambda pair: not pair[0])  # stable: the scene on screen first, then lesson order
    found: list[str] = []
    for _, text in texts:
        most -= len(text)
        if most < 0:
            break
        found.append(text)
    return found


# -- ranking ---------------------------------------------------------------------------------------
def rank(passages: list[Passage], query: list[str], language: str = "english",
         current: str | None = None) -> list[tuple[Passage, float]]:
    """``passages`` that share a word with ``query``, best first (BM25; the ``current`` scene's a little
    ahead).  ``bm25s`` and ``numpy`` are imported here, on the first question, not at startup."""
    if not passages or not query:
        return []
    import bm25s

    corpus = [terms(f"{p.title} {p.text}", language) or ["\x00"] for p in passages]
    index = bm25s.BM25()
    index.index(corpus, show_progress=False)
    scores = index.get_scores(list(query))
    ranked = [(p, float(s) * KIND_WEIGHT.get(p.kind, 1.0) * (CURRENT_SCENE_BOOST if p.scene_id == current else 1.0))
              for p, s in zip(passages, scores, strict=True) if float(s) > 0 and math.isfinite(float(s))]
    ranked.sort(key=lambda pair: -pair[1])  # stable: at equal scores, lesson order
    return ranked


def ground(lesson: Lesson, question: str, *, current: str | None = None, answered: Iterable[str] = (),
           focus: str | None = None, top: int = TOP) -> Grounding:
    """What ``lesson`` says about ``question`` (asked at scene ``current``; ``focus``: the slide element
    it is about, whose passages come first)."""
    language = lesson.language or "english"
    passages = lesson_passages(lesson, answered)
    asked = terms(question, language, asking=True)
    focused = [p for p in passages if focus is not None and p.scene_id == current and p.element_id == focus]
    if not asked:
        on_screen = focused or [p for p in passages if p.scene_id == current and p.kind != "image"
                                and not p.is_question]
        return Grounding("general", on_screen[:top], frozenset())
    titles = [scene.title for scene in lesson.scenes if isinstance(scene, SlideScene)]
    known = {word for text in [*(p.text for p in passages), *titles] for word in terms(text, language)}
    share = sum(1 for w in set(asked) if w in known) / len(set(asked))
    ranked = [p for p, _ in rank(passages, asked, language, current) if not p.is_question]  # a question answers nothing
    best = focused + [p for p in ranked if p not in focused]
    if share < STRONG_MATCH and not focused:
        # Few of its words are the lesson's ("How can a gas make a tree heavy?"): the question is asked
        # again with the words of the passages it matches best, the lesson's own questions included
        # (pseudo-relevance feedback: "Where does a tree's mass come from?" brings "mass").
        seeds = [p for p, _ in rank(passages, asked, language, current)][:FEEDBACK]
        expanded = list(asked) + [w for p in seeds for w in terms(p.text, language)]
        best = [p for p, _ in rank(passages, expanded, language, current) if not p.is_question]
    verdict: Verdict = "lesson" if share >= IN_LESSON or focused else "beyond"
    if verdict == "lesson" and not best:  # the lesson's words (a slide's title) but no sentence says them
        on_screen = [p for p in passages if p.scene_id == current and p.kind != "image" and not p.is_question]
        return Grounding("general", on_screen[:top], frozenset(asked))
    return Grounding(verdict, best[:top], frozenset(asked), weak=share < STRONG_MATCH and not focused)


# -- checking a reply ------------------------------------------------------------------------------
def _checkable(passages: list[Passage], asked: frozenset[str], language: str) -> list[set[str]]:
    """Each spoken passage's words beyond the question's own (what an answer adds), where it adds any."""
    found = []
    for passage in passages:
        if passage.kind not in SPOKEN_KINDS or passage.is_question:
            continue
        new = set(terms(passage.text, language, asking=True)) - asked  # "happens" adds nothing to an answer
        if new:
            found.append(new)
    return found


ASKS = frozenset("explain understand understood mean means meant again confused confusing lost repeat what why how "
                 "which where when who".split())


def needs_answer(text: str, grounding: Grounding) -> bool:
    """Whether a reply to ``text`` should carry the lesson: a question of the lesson's, or one about the slide
    ("I don't get it", "what?"); not "thanks" or "ok"."""
    if grounding.verdict == "lesson":
        return True
    if grounding.verdict == "beyond":
        return False
    return "?" in text or any(word in ASKS for word in WORD.findall(text.lower()))


def _compact(text: str) -> str:
    return "".join(text.lower().split())


def carries(reply: str, grounding: Grounding, language: str = "english", *,
            among: list[Passage] | None = None) -> bool:
    """Whether ``reply`` says what the answer says: the passages the teacher would read out (or ``among``),
    enough of their words beyond the question's.  Nothing to check (no passage adds a word) is carried.
    Only the best passages count: a reply that repeats a weaker match (a slide's bullet that shares a word
    with the question) does not carry the answer."""
    candidates = fallback_passages(grounding) if among is None else among
    formulas = [p for p in candidates if p.kind == "formula"]
    if formulas and any(_compact(p.text) in _compact(reply) for p in formulas):
        return True
    candidates = [p for p in candidates if p.kind != "formula"]  # a formula is carried whole, not by its numbers
    if formulas and not candidates:
        return False
    wanted = _checkable(candidates, grounding.terms, language)
    if not wanted:
        return True
    said = set(terms(reply, language))
    return any(len(said & new) >= min(CARRY_MOST, math.ceil(len(new) * CARRY_SHARE)) for new in wanted)


SHORT = 80  # a first sentence this short is followed by a second one


def fallback_passages(grounding: Grounding) -> list[Passage]:
    """What the teacher reads out when a reply did not carry the lesson: the best spoken passage (no
    question), and the next one if it comes right after it and is prose (after a formula or a row, or
    after a short sentence)."""
    spoken = [(rank, p) for rank, p in enumerate(grounding.passages) if p.kind in SPOKEN_KINDS and not p.is_question]
    if not spoken:
        return []
    (first_rank, first), rest = spoken[0], spoken[1:]
    if rest and rest[0][0] == first_rank + 1 and rest[0][1].kind in PROSE_KINDS \
            and (first.kind not in PROSE_KINDS or len(first.text) < SHORT):
        if first.kind == "formula" and _compact(first.text) in _compact(rest[0][1].text):
            return [rest[0][1]]  # the sentence says the formula already: "3/4. When … = 3/4." says it twice
        return [first, rest[0][1]]
    return [first]


def fallback_text(grounding: Grounding, asked: str | None = None) -> str | None:
    """The teacher's own answer in the lesson's sentences, as prose (``None``: nothing to say); ``asked``:
    the learner's words — a statement, not a question, is answered with the lesson's closest sentence
    offered as a check, never called a good question."""
    chosen = fallback_passages(grounding)
    said = compose(p.text for p in chosen)
    if not said:
        return None
    if asked is not None and not is_question(asked) and grounding.verdict != "general":
        return f"Let us see what the lesson says. {said} Is that what you mean?"
    if grounding.weak:  # honest about a match on few of the question's words
        return f"Here is the closest the lesson comes to that: {said}"
    if grounding.verdict == "general":
        return f"Let me put it again: {said}"
    return f"Good question. {said}"


def beyond_text(scene_title: str) -> str:
    """What the teacher says to a question the lesson does not cover, on a model too small to answer it."""
    return (f"Today's lesson does not cover that, and on this small offline model I would rather not guess: "
            f"for open questions, try a provider model (maic chat --model …). We are on \"{scene_title}\": "
            "ask me anything about it, or we carry on with the lesson.")
