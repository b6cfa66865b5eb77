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
discussion slide) is never spoken.  A line ``[script]`` marks notes the same way when the script
points at nothing (``maic lesson export`` writes it first), and in marked notes a line that
starts with ``\\`` says the rest as it is (how the export writes a line that would otherwise
read as a marker or a speaker).

A paragraph (a line, in marked notes) ``Name: what they say`` whose ``Name`` is one of the
class (``speakers``: an agent's id, name or unique first name, any case) is said by that
agent (``ScriptStep.by``); one that names nobody stays the teacher's.  Pure: text in, steps
out; bounded by the lesson's own limits.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from ..engine.models import SlideElement
from ..lessons.lesson import ScriptStep

MAX_STEPS = 200  # = SlideScene.script's limit
MAX_SAY = 4000  # = ScriptStep.say's limit
MAX_NOTES_CHARS = 100_000  # of one slide's notes; the rest is not read

_MARKER = re.compile(r"^\s*\[\s*(spotlight|laser)\s*:\s*([A-Za-z0-9_.-]{1,64})\s*\]\s*$", re.IGNORECASE)
_ANY_MARKER = re.compile(r"^\s*\[\s*(?:(?:spotlight|laser|quiz|discussion)\s*:[^\]\n]{0,200}|script)\]\s*$",
                         re.IGNORECASE)
_SCRIPT = re.compile(r"^\s*\[\s*script\s*\]\s*$", re.IGNORECASE)
_SPEAKER = re.compile(r"^\s*([^\W\d_][^:\n]{0,59}?)\s*:\s+(\S.*)$", re.DOTALL)
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


Speakers = Mapping[str, str]  # a name as written, lower case with single spaces → the agent's id


def speaker_names(agents: Iterable[tuple[str, str]]) -> dict[str, str]:
    """The names a notes line may start with, for a class of ``(id, name)``: each agent's id, its name and
    (if no other agent of the class shares it) its first name, in lower case, each naming its id."""
    agents = list(agents)
    names: dict[str, str] = {}
    firsts: dict[str, set[str]] = {}
    for agent_id, name in agents:
        full = " ".join(name.lower().split())
        names.setdefault(agent_id.lower(), agent_id)
        if full:
            names.setdefault(full, agent_id)
            firsts.setdefault(full.split()[0], set()).add(agent_id)
    for first, ids in firsts.items():
        if len(ids) == 1:
            names.setdefault(first, next(iter(ids)))
    return names


def speaker_label(agent_id: str, agents: Iterable[tuple[str, str]], speakers: Speakers) -> str:
    """How a line by ``agent_id`` is written: its name, if that names it back, else its id."""
    for known_id, name in agents:
        full = " ".join(name.split())
        if known_id == agent_id and full and ":" not in full and speakers.get(full.lower()) == agent_id:
            return full
    return agent_id


def _spoken(text: str, speakers: Speakers) -> tuple[str | None, str]:
    """(who, what) of a line: ``Name: what`` when Name is one of ``speakers``, else (None, the line)."""
    match = _SPEAKER.match(text) if speakers else None
    if match is not None:
        who = speakers.get(" ".join(match.group(1).lower().split()))
        if who is not None:
            return who, match.group(2)
    return None, text


def _say(text: str, by: str | None = None) -> ScriptStep:
    text = " ".join(text.split())
    if len(text) > MAX_SAY:
        text = text[:MAX_SAY - 1].rsplit(" ", 1)[0] + "…"
    return ScriptStep(say=text, by=by)


def marked(notes: str, ids: set[str]) -> bool:
    """Whether ``notes`` mark their steps (a ``[script]`` line, or a marker line naming one of ``ids``)."""
    return any(_SCRIPT.match(line) is not None or ((m := _MARKER.match(line)) is not None and m.group(2) in ids)
               for line in notes[:MAX_NOTES_CHARS].splitlines())


def line_step(line: str, ids: set[str], speakers: Speakers) -> ScriptStep | None:
    """One line of marked notes as a step (``None``: a blank line, or a marker that is not a step)."""
    match = _MARKER.match(line)
    if match is not None and match.group(2) in ids:
        return ScriptStep(spotlight=match.group(2)) if match.group(1).lower() == "spotlight" \
            else ScriptStep(laser=match.group(2))
    if _ANY_MARKER.match(line) is not None or not line.strip():
        return None
    stripped = line.strip()
    if stripped.startswith("\\"):  # said as it is
        return _say(stripped[1:]) if stripped[1:].strip() else None
    by, said = _spoken(stripped, speakers)
    return _say(said, by)


def notes_script(notes: str, elements: Sequence[SlideElement], speakers: Speakers | None = None) \
        -> list[ScriptStep]:
    """The lecture script that ``notes`` make for a slide holding ``elements`` (see the module)."""
    ids = {element.id for element in elements}
    speakers = speakers or {}
    steps: list[ScriptStep] = []
    if marked(notes, ids):
        for line in notes[:MAX_NOTES_CHARS].splitlines():
            step = line_step(line, ids, speakers)
            if step is not None:
                steps.append(step)
                if len(steps) >= MAX_STEPS:
                    break
        return steps
    current: str | None = None
    unmarked = "\n".join(line for line in notes[:MAX_NOTES_CHARS].splitlines() if _ANY_MARKER.match(line) is None)
    for paragraph in re.split(r"\n\s*\n", unmarked):
        by, said = _spoken(" ".join(paragraph.split()), speakers)
        if by is not None:  # a classmate's turn: one step, no spotlight
            steps.append(_say(said, by))
            if len(steps) >= MAX_STEPS - 1:
                break
            continue
        for sentence in sentences(paragraph):
            target = best_element(sentence, elements, current)
            if target is not None and target != current:
                steps.append(ScriptStep(spotlight=target))
                current = target
            steps.append(_say(sentence))
            if len(steps) >= MAX_STEPS - 1:
                break
        if len(steps) >= MAX_STEPS - 1:
            break
    return steps[:MAX_STEPS]


def step_line(step: ScriptStep, labels: Mapping[str, str] | None = None, speakers: Speakers | None = None) -> str:
    """One step as a line of marked notes that :func:`line_step` reads back as the same step (``labels``:
    how each agent id is written, by default the id itself)."""
    if step.spotlight is not None:
        return f"[spotlight: {step.spotlight}]"
    if step.laser is not None:
        return f"[laser: {step.laser}]"
    said = " ".join((step.say or "").split())
    if step.by is not None:
        return f"{(labels or {}).get(step.by, step.by)}: {said}"
    if said.startswith("\\") or _ANY_MARKER.match(said) is not None or _spoken(said, speakers or {})[0] is not None:
        return "\\" + said  # would read as a marker or a speaker: said as it is
    return said


def script_notes(script: Sequence[ScriptStep], labels: Mapping[str, str] | None = None,
                 speakers: Speakers | None = None) -> str:
    """A script as notes :func:`notes_script` reads back step for step (markers on their own lines, and a first
    ``[script]`` line when no step points at an element)."""
    lines = [step_line(step, labels, speakers) for step in script]
    if lines and not any(step.target for step in script):
        lines.insert(0, "[script]")
    return "\n".join(lines)
