"""A teacher's notes as a lecture script: sentence by sentence, with the spotlight on what a sentence is about.

Speaker notes (a deck's notes, a Markdown slide's paragraphs) become ``say`` steps, one
per sentence.  Before a sentence, the spotlight moves to the slide element it talks
about, matched by words: the element sharing the most content words with the sentence
(stemmed crudely: case, plural ``s`` and ``ing``/``ed`` endings ignored), or the one whose
kind it names ("this table", "the picture", "the code").  A sentence that matches no
element better than the one already lit leaves the spotlight where it is.

Notes that mark their steps (a line ``[spotlight: ID]`` or ``[laser: ID]`` naming an element
of the slide, as ``maic lesson export`` writes them) are read line by line instead: a
marker is a step and every other line one ``say`` step, so an exported lesson comes back
with the script it had.  A marker (of a step naming no element of the slide, of a quiz or a
discussion slide) is never spoken.  Pure: text
in, steps out; bounded by the lesson's own limits.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..engine.models import SlideElement
from ..lessons.lesson import ScriptStep

MAX_STEPS = 200  # = SlideScene.script's limit
MAX_SAY = 4000  # = ScriptStep.say's limit
MAX_NOTES_CHARS = 100_000  # of one slide's notes; the rest is not read

_MARKER = re.compile(r"^\s*\[\s*(spotlight|laser)\s*:\s*([A-Za-z0-9_.-]{1,64})\s*\]\s*$", re.IGNORECASE)
_ANY_MARKER = re.compile(r"^\s*\[\s*(?:spotlight|laser|quiz|discussion)\s*:[^\]\n]{0,200}\]\s*$", re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[.!?…])[\"'”’)\]]*\s+(?=[\"'“‘(\[]*[A-Z0-9À-ÖØ-Þ])")
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_KIND_WORDS = {
    "table": ("table", "column", "columns", "row", "rows"),
    "image": ("picture", "image", "photo", "drawing", "diagram", "figure"),
    "code": ("code", "program", "snippet"),
    "formula": ("formula", "equation"),
    "bullets": ("list",),
}
STOP_WORDS = frozenset(
    "a an and are as at be been but by can do does for from has have how i if in into is it its of on or our "
    "so than that the their them then there these they this to was we were what when where which who why will "
    "with you your here now also just very more most some all any not no one two first next let us see look".split())


def stem(word: str) -> str:
    """A crude stem: lower case, without a plural ``s`` or an ``ing``/``ed`` ending."""
    word = word.lower()
    for ending in ("ing", "ed", "es", "s"):
        if len(word) > len(ending) + 3 and word.endswith(ending):
            return word[:-len(ending)]
    return word


def content_words(text: str) -> set[str]:
    """The stems of the words that carry meaning (no stop words, no one-letter words)."""
    return {stem(w) for w in _WORD.findall(text[:MAX_NOTES_CHARS].lower()) if len(w) > 1 and w not in STOP_WORDS}


def sentences(text: str) -> list[str]:
    """``text`` cut into sentences (line breaks inside a paragraph are spaces)."""
    found: list[str] = []
    for paragraph in re.split(r"\n\s*\n", text[:MAX_NOTES_CHARS]):
        flat = " ".join(paragraph.split())
        found += [part.strip() for part in _SENTENCE_END.split(flat) if part.strip()]
    return found


def element_text(element: SlideElement) -> str:
    return " ".join([element.content, *element.items, *(" ".join(row) for row in element.rows)])


def best_element(sentence: str, elements: Sequence[SlideElement], current: str | None) -> str | None:
    """The id of the element ``sentence`` talks about, or ``None`` if it names none clearly."""
    words = content_words(sentence)
    raw = {w.lower() for w in _WORD.findall(sentence)}
    best, best_score = None, 0.0
    for element in elements:
        own = content_words(element_text(element))
        shared = len(words & own)
        score = float(shared) if shared >= 2 or (shared == 1 and len(own) <= 3) else 0.0
        if raw & set(_KIND_WORDS.get(element.type, ())):
            score += 1.5
        if element.id.lower() in raw:
            score += 1.0
        if score > best_score or (score == best_score and score > 0 and element.id == current):
            best, best_score = element.id, score
    return best if best_score > 0 else None


def _say(text: str) -> ScriptStep:
    if len(text) > MAX_SAY:
        text = text[:MAX_SAY - 1].rsplit(" ", 1)[0] + "…"
    return ScriptStep(say=text)


def marked(notes: str, ids: set[str]) -> bool:
    """Whether ``notes`` mark their steps (a marker line naming one of ``ids``)."""
    return any((m := _MARKER.match(line)) is not None and m.group(2) in ids
               for line in notes[:MAX_NOTES_CHARS].splitlines())


def notes_script(notes: str, elements: Sequence[SlideElement]) -> list[ScriptStep]:
    """The lecture script that ``notes`` make for a slide holding ``elements`` (see the module)."""
    ids = {element.id for element in elements}
    steps: list[ScriptStep] = []
    if marked(notes, ids):
        for line in notes[:MAX_NOTES_CHARS].splitlines():
            match = _MARKER.match(line)
            if match is not None and match.group(2) in ids:
                kind = match.group(1).lower()
                steps.append(ScriptStep(spotlight=match.group(2)) if kind == "spotlight"
                             else ScriptStep(laser=match.group(2)))
            elif _ANY_MARKER.match(line) is None and " ".join(line.split()):
                steps.append(_say(" ".join(line.split())))
        return steps[:MAX_STEPS]
    current: str | None = None
    unmarked = "\n".join(line for line in notes[:MAX_NOTES_CHARS].splitlines() if _ANY_MARKER.match(line) is None)
    for sentence in sentences(unmarked):
        target = best_element(sentence, elements, current)
        if target is not None and target != current:
            steps.append(ScriptStep(spotlight=target))
            current = target
        steps.append(_say(sentence))
        if len(steps) >= MAX_STEPS - 1:
            break
    return steps[:MAX_STEPS]


def script_notes(script: Sequence[ScriptStep]) -> str:
    """A script as notes :func:`notes_script` reads back step for step (markers on their own lines)."""
    lines = []
    for step in script:
        if step.say is not None:
            lines.append(" ".join(step.say.split()))
        elif step.spotlight is not None:
            lines.append(f"[spotlight: {step.spotlight}]")
        elif step.laser is not None:
            lines.append(f"[laser: {step.laser}]")
    return "\n".join(lines)
