"""Does a generated lesson read clean?  The check the small offline model's lessons must pass to be written.

A lesson can validate and still read as fragments.  :func:`lesson_problems` lists what a
reader would stumble on, first the worst:

* a field name given as content (a bullet ``title``, ``description: The idea…``);
* a word cut off at the end (``from fl.``) or a string that stops at an open bracket or quote;
* a quiz option that talks about answering (``The answer to this question would be…``) instead
  of being an answer, or one that appears in two questions;
* the same sentence said twice in the lecture.

It knows nothing about the topic: it catches form, not falsehood.  The offline benchmark
(``tests/benchmarks/lesson_offline.py``) counts the lessons it finds nothing in: none of ten
from the built-in model, which is why ``maic lesson new`` refuses that model.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator

from ..lessons.lesson import DiscussionScene, Lesson, QuizScene, SlideScene

FIELD_NAMES = ("title", "description", "content", "items", "item", "type", "question", "answer", "options",
               "option", "rubric", "goal", "points", "id", "say", "spotlight", "laser", "text", "elements",
               "explanation", "topic", "prompt", "right", "wrong")
_FIELD_AS_CONTENT = re.compile(r"^\s*[\"'{\[]*\s*(?:" + "|".join(FIELD_NAMES) + r")\s*[\"']?\s*(?::|=|$)",
                               re.IGNORECASE)
_ABOUT_ANSWERING = re.compile(r"\b(?:the (?:correct |right )?answer (?:is|to|would)|answer to this|this question|"
                              r"would be:|the correct option|option [a-e]\b|none of the above|all of the above)",
                              re.IGNORECASE)
_LAST_WORD = re.compile(r"([A-Za-z]+)\W*$")
SHORT_WORDS = frozenset(
    "a i an as at be by do go he if in is it me my no of oh ok on or so to up us we am are but can day did "
    "dna dry due eat end far few fly for fun get got had has her him his hot how its key law let lot low "
    "man may men new nor not now odd off oil old one our out own put ran raw red run saw say sea see set "
    "she sky sun ten the too top two use war was way wet who why win yes yet you all any air age arm art "
    "ask bad bag bed big bit box boy bus buy car cat cell co cut dog ear egg eye fat fit fix gas god gun "
    "hat ice ill ink job joy kid lab leg lie map mix mud net nut pan pen pet pig pin pot ray rod row sad "
    "sit six son sum tax tea tie tin toe ton toy tree via web wit zoo ago add fog etc vs km cm mm kg".split())


def _texts(lesson: Lesson) -> Iterator[tuple[str, str]]:
    """(where, text) for every string a learner reads or hears."""
    yield "the title", lesson.title
    if lesson.description:
        yield "the description", lesson.description
    for scene in lesson.scenes:
        where = f"scene {scene.id!r}"
        if isinstance(scene, SlideScene):
            yield where, scene.title
            for element in scene.elements:
                for text in (element.content, *element.items, *(cell for row in element.rows for cell in row)):
                    if text and element.type != "code":
                        yield f"{where} element {element.id!r}", text
            for step in scene.script:
                if step.say:
                    yield f"{where} lecture", step.say
        elif isinstance(scene, QuizScene):
            for question in scene.questions:
                yield f"{where} question {question.id}", question.question
                for option in question.options:
                    yield f"{where} question {question.id} option", option
                if question.explanation:
                    yield f"{where} question {question.id} explanation", question.explanation
        elif isinstance(scene, DiscussionScene):
            yield where, scene.topic
            if scene.prompt:
                yield where, scene.prompt


def _cut(text: str) -> bool:
    """A word cut off at the end (``from fl.``), or an open bracket or quote left open."""
    stripped = text.strip()
    if stripped.count("(") != stripped.count(")") or stripped.count("[") != stripped.count("]"):
        return True
    if stripped.count("{") or stripped.count("}") or stripped.count('"') % 2:
        return True
    match = _LAST_WORD.search(stripped)
    if match is None or not stripped.endswith((".", "!", "?", "…")):
        return False
    word, words = match.group(1), stripped.lower().split()
    if len(word) == 1:  # "how bees create a n.": a letter after an article is a word cut off ("by n." is not)
        return word.islower() and len(words) > 1 and words[-2] in ("a", "an", "the")
    return len(word) <= 3 and word.islower() and word not in SHORT_WORDS and len(words) > 1


def lesson_problems(lesson: Lesson, *, english: bool | None = None) -> list[str]:
    """What reads wrong in ``lesson`` (see the module), each one line; empty when it reads clean."""
    english = (lesson.language or "English").lower().startswith("en") if english is None else english
    problems: list[str] = []
    for where, text in _texts(lesson):
        if _FIELD_AS_CONTENT.match(text):
            problems.append(f"{where}: a field name as content: {text[:60]!r}")
        elif english and _cut(text):
            problems.append(f"{where}: cut off: {text[-40:]!r}")
    seen: Counter[str] = Counter()
    for scene in lesson.scenes:
        if isinstance(scene, QuizScene):
            for question in scene.questions:
                for option in question.options:
                    if _ABOUT_ANSWERING.search(option):
                        problems.append(f"quiz {scene.id!r} question {question.id}: an option that talks about "
                                        f"answering: {option[:60]!r}")
                seen.update({" ".join(o.lower().split()) for o in question.options})
    problems += [f"the option {option[:60]!r} is in {count} questions" for option, count in seen.items() if count > 1]
    said = Counter(" ".join(step.say.lower().split()) for _, scene in lesson.slide_scenes()
                   for step in scene.script if step.say)
    problems += [f"the lecture says {sentence[:60]!r} {count} times" for sentence, count in said.items() if count > 1]
    return problems
