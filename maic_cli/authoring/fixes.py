"""Turning the generation steps' replies into lesson scenes, with the safe fix-ups counted.

A fix-up is made only where the intent is plain: an element id that clashes or is not a
simple word is renamed, a script step that names no element of its slide is dropped, a
step holding two things is split, answer letters are upper-cased, an answer given as the
option's text becomes its letter, ``"A) …"`` prefixes come off options, an initiator
outside the class becomes its first student (with no class known, the player's default).
Each is counted in :class:`Fixes` (the CLI reports them).  Anything else that is wrong
raises :class:`StepProblem`, whose text is told to the model when the step is retried — among
them a question without its one-sentence ``explanation`` and an "all/none of the above" option.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from typing import Any

from pydantic import ValidationError

from ..engine.models import SlideElement
from ..lessons.lesson import (
    LETTERS,
    MAX_FAQ,
    MAX_PHRASINGS,
    DiscussionScene,
    ExpectedQuestion,
    QuizQuestion,
    QuizScene,
    ScriptStep,
    SlideScene,
)
from .schemas import DiscussionReply, QuestionDraft, tidy

_NOT_ID = re.compile(r"[^A-Za-z0-9_.-]+")
_OPTION_PREFIX = re.compile(r"^\s*\(?([A-Ja-j])[).:]\s+")
_ALL_OR_NONE = re.compile(r"\b(all|none|both|neither)\s+of\s+(the\s+)?(above|these|them)\b", re.IGNORECASE)
MAX_ID = 40
MAX_STEPS = 200  # = SlideScene.script's limit
POINTS = {"single": 1, "multiple": 2, "short": 2}


class StepProblem(ValueError):
    """A reply that cannot be used: the message says what is wrong, for the model's retry."""


class Fixes(Counter[str]):
    """Fix-up name → how many times it was made."""

    def describe(self) -> str:
        return ", ".join(f"{count} {name}" for name, count in sorted(self.items()))


def slug(text: str, fallback: str, limit: int = MAX_ID) -> str:
    """A simple ascii id from ``text`` (``"Light & leaves!"`` → ``light-leaves``)."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    word = re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")[:limit].strip("-")
    return word or fallback


def unique(name: str, taken: set[str]) -> str:
    """``name``, or ``name_2``, ``name_3`` … whichever is free; the result is added to ``taken``."""
    candidate, number = name, 1
    while candidate in taken:
        number += 1
        candidate = f"{name[:MAX_ID - 4]}_{number}"
    taken.add(candidate)
    return candidate


def first_problem(exc: ValidationError) -> str:
    """One line for the model: where in its reply, and what is wrong."""
    error = exc.errors()[0]
    where = ".".join(str(part) for part in error["loc"])
    return f"{where}: {error['msg']}" if where else str(error["msg"])


# -- slides ------------------------------------------------------------------------------------

def _element_id(raw: object, number: int, taken: set[str], fixes: Fixes) -> str:
    given = raw.strip() if isinstance(raw, str) else ""
    simple = _NOT_ID.sub("_", given).strip("_.-")[:MAX_ID]
    if simple != given:
        fixes["element ids made simple"] += 1
    simple = simple or f"e{number}"
    final = unique(simple, taken)
    if final != simple:
        fixes["clashing element ids renamed"] += 1
    return final


def _element(raw: dict[str, Any], number: int, taken: set[str], fixes: Fixes) -> SlideElement:
    data = {key: value for key, value in raw.items() if key in ("type", "content", "items", "rows", "language")}
    if data.get("type") == "bullets" and not data.get("items") and isinstance(data.get("content"), str):
        data["items"] = [line.strip(" -•*") for line in data.pop("content").splitlines() if line.strip(" -•*")]
        fixes["bullet lists split from text"] += 1
    if isinstance(data.get("items"), list):  # numbers in a list are its text too
        data["items"] = [tidy(str(item)) if isinstance(item, str | int | float) else item for item in data["items"]]
    rows = data.get("rows")
    if data.get("type") == "table" and isinstance(rows, list) and rows and all(isinstance(r, list) for r in rows):
        width = max(len(row) for row in rows)
        if any(len(row) != width for row in rows):
            fixes["table rows padded"] += 1
        data["rows"] = [[_cell(cell) for cell in row] + [""] * (width - len(row)) for row in rows]
    try:
        element = SlideElement.model_validate({**data, "id": _element_id(raw.get("id"), number, taken, fixes)})
    except ValidationError as exc:
        raise StepProblem(f"elements.{number - 1}.{first_problem(exc)}") from None
    if not element.plain_text().strip():
        raise StepProblem(f"elements.{number - 1}: the {element.type} element {element.id!r} is empty")
    return _bounded(element, fixes)


MAX_CONTENT = 2_000  # characters of an element's text (a code block included)
MAX_SAY = 1_000  # of one lecture step
MAX_ITEM = 300  # of a bullet or a table cell
MAX_ITEMS = 20  # bullets, or table rows and columns
MAX_EXPLANATION = 1_000  # = QuizQuestion.explanation's limit


def _bounded(element: SlideElement, fixes: Fixes) -> SlideElement:
    """The element cut to what a slide shows (and a lesson file may hold: a file is at most 1 MB)."""
    content = element.content[:MAX_CONTENT]
    items = [item[:MAX_ITEM] for item in element.items[:MAX_ITEMS]]
    rows = [[cell[:MAX_ITEM] for cell in row[:MAX_ITEMS]] for row in element.rows[:MAX_ITEMS]]
    if (content, items, rows) != (element.content, element.items, element.rows):
        fixes["overlong slide text cut"] += 1
    return element.model_copy(update={"content": content, "items": items, "rows": rows})


def _cell(value: object) -> object:
    """A table cell as text (a model writes numbers as numbers); anything else is left for validation."""
    return "" if value is None else str(value) if isinstance(value, str | int | float) else value


def slide_elements(raw: list[dict[str, Any]], most: int, fixes: Fixes) -> list[SlideElement]:
    """The slide's elements (the first ``most``; more are dropped and counted), ids made unique."""
    if len(raw) > most:
        fixes["slide elements beyond the limit dropped"] += len(raw) - most
    taken: set[str] = set()
    return [_element(item if isinstance(item, dict) else {}, number, taken, fixes)
            for number, item in enumerate(raw[:most], 1)]


def _step_parts(raw: object, fixes: Fixes) -> list[dict[str, str]]:
    """A step as one or more single-key steps (``{"say": …, "spotlight": …}`` is split)."""
    if not isinstance(raw, dict):
        raise StepProblem(f"a script step must be an object like {{\"say\": \"...\"}}, not {raw!r:.60}")
    parts = [{key: value.strip()} for key in ("spotlight", "laser", "say")
             if isinstance((value := raw.get(key)), str) and value.strip()]
    if len(parts) > 1:
        fixes["script steps split"] += 1
    by = raw.get("by")
    if isinstance(by, str) and by.strip() and parts and "say" in parts[-1]:
        parts[-1]["by"] = by.strip()  # who says it: checked against the class by the caller
    return parts


def slide_script(raw: list[Any], elements: list[SlideElement], fixes: Fixes,
                 speakers: list[str] | None = None) -> list[ScriptStep]:
    """The lecture steps; those pointing at no element of this slide are dropped (counted), and a line
    said ``by`` someone not in ``speakers`` (the students of the class) is the teacher's (counted)."""
    known = {element.id for element in elements}
    steps: list[ScriptStep] = []
    for item in raw:
        for part in _step_parts(item, fixes):
            if "by" in part and part["by"] not in (speakers or []):
                del part["by"]
                fixes["script lines by someone outside the class given to the teacher"] += 1
            if len(part.get("say", "")) > MAX_SAY:  # a step is a sentence or three: keep whole sentences
                said = part["say"][:MAX_SAY]
                part["say"] = said[:said.rfind(". ") + 1] if ". " in said else said
                fixes["overlong lecture steps cut"] += 1
            target = part.get("spotlight") or part.get("laser")
            if target is not None and target not in known:
                fixes["script steps naming a missing element dropped"] += 1
                continue
            try:
                steps.append(ScriptStep.model_validate(part))
            except ValidationError as exc:
                raise StepProblem(f"steps.{len(steps)}.{first_problem(exc)}") from None
    if len(steps) > MAX_STEPS:
        fixes["script steps beyond the limit dropped"] += len(steps) - MAX_STEPS
        steps = steps[:MAX_STEPS]
    if not any(step.say for step in steps):
        raise StepProblem("the script has no step with \"say\": the teacher must say something")
    return steps


def slide_scene(scene_id: str, title: str, elements: list[SlideElement], script: list[ScriptStep],
                faq: list[ExpectedQuestion] | None = None) -> SlideScene:
    return SlideScene(type="slide", id=scene_id, title=title, elements=elements, script=script, faq=faq or [])


def expected(raw: list[Any], fixes: Fixes) -> list[ExpectedQuestion]:
    """A model's expected questions, each kept only when it is one (``q`` a phrasing or a few, ``a`` the answer)."""
    found: list[ExpectedQuestion] = []
    for entry in raw[:MAX_FAQ]:
        try:
            if not isinstance(entry, dict):
                raise ValueError("not an object")
            asked = entry.get("q")
            phrasings = [tidy(str(q)) for q in (asked if isinstance(asked, list) else [asked]) if q]
            found.append(ExpectedQuestion(q=phrasings[0] if len(phrasings) == 1 else phrasings[:MAX_PHRASINGS],
                                          a=tidy(str(entry.get("a") or ""))))
        except (ValidationError, ValueError, IndexError):
            fixes["expected questions left out"] += 1
    return found


# -- quizzes -----------------------------------------------------------------------------------

PLACEHOLDERS = frozenset({"therightanswer", "rightanswer", "wronganswer", "wronganswers", "awronganswer",
                          "correctanswer", "thecorrectanswer"})  # letters only, lower case


def _options(raw: list[str], fixes: Fixes) -> list[str]:
    cleaned = []
    for option in raw:
        text = str(option).strip()
        bare = _OPTION_PREFIX.sub("", text, count=1)
        if bare != text:
            fixes["letter prefixes taken off options"] += 1
        cleaned.append(tidy(bare))
    if any(not option for option in cleaned):
        raise StepProblem("options: an option is empty")
    copied = [option for option in cleaned if re.sub(r"[^a-z]", "", option.lower()) in PLACEHOLDERS]
    if copied:  # a small model copies the prompt's wording for the answer it should write
        raise StepProblem(f"options: {copied[0]!r} is a word from the instructions; write a real answer instead")
    if len({option.lower() for option in cleaned}) != len(cleaned):
        raise StepProblem("options: two options are the same")
    lazy = [option for option in cleaned if _ALL_OR_NONE.search(option)]
    if lazy:  # it tests reading the options, not the lesson
        raise StepProblem(f"options: {lazy[0]!r}: no 'all of the above' or 'none of the above'; every option is "
                          "an answer of its own, the wrong ones mistakes a learner could make")
    return cleaned


def _answer_letters(answer: list[str] | str, options: list[str], fixes: Fixes) -> list[str]:
    """Letters, upper-cased; an answer that is no option's letter but is an option's text becomes its letter."""
    letters, valid = [], LETTERS[:len(options)]
    lowered = [option.lower() for option in options]
    given = [answer] if isinstance(answer, str) else list(answer)
    if isinstance(answer, str) and answer.strip().lower() not in lowered:
        parts = [part for part in re.split(r"[\s,;/&+]+", answer) if part]
        if len(parts) > 1 and all(len(part) == 1 and part.upper() in valid for part in parts):
            given = parts  # "A, C" or "a c": several letters in one string
    for item in given:
        text = str(item).strip()
        if len(text) == 1 and text.upper() in valid:
            if text.islower():
                fixes["answer letters upper-cased"] += 1
            letters.append(text.upper())
        elif text.lower() in lowered:
            letters.append(LETTERS[lowered.index(text.lower())])
            fixes["answers given as text turned into letters"] += 1
        else:
            letters.append(text)
    return letters


def quiz_question(raw: QuestionDraft, number: int, fixes: Fixes) -> QuizQuestion:
    explanation = " ".join((raw.explanation or "").split())
    if not explanation:
        raise StepProblem(f"questions.{number - 1}.explanation: say in one sentence why the answer is right")
    data: dict[str, Any] = {"id": f"q{number}", "type": raw.type, "question": raw.question,
                            "points": POINTS[raw.type], "explanation": explanation[:MAX_EXPLANATION]}
    if raw.type == "short":
        if raw.options:
            fixes["options dropped from short questions"] += 1
        data["rubric"] = raw.rubric or None
    elif raw.right is not None:  # the right option first: it goes to a place that varies by question
        options = _options([raw.right, *raw.wrong], fixes)
        place = (number + len(raw.question)) % len(options)
        options.insert(place, options.pop(0))
        data.update(options=options, answer=[LETTERS[place]])
    else:
        options = _options(raw.options, fixes)
        data.update(options=options, answer=_answer_letters(raw.answer, options, fixes))
    try:
        return QuizQuestion.model_validate(data)
    except ValidationError as exc:
        raise StepProblem(f"questions.{number - 1}.{first_problem(exc)}") from None


def quiz_scene(scene_id: str, title: str, questions: list[QuizQuestion], fixes: Fixes) -> QuizScene:
    """The quiz; a question asked twice (same words) is dropped, counted."""
    kept: dict[str, QuizQuestion] = {}
    for question in questions:
        kept.setdefault(" ".join(question.question.lower().split()), question)
    if len(kept) < len(questions):
        fixes["repeated questions dropped"] += len(questions) - len(kept)
    return QuizScene(type="quiz", id=scene_id, title=title, questions=list(kept.values()))


# -- discussions -------------------------------------------------------------------------------

def discussion_scene(scene_id: str, title: str, raw: DiscussionReply, initiators: list[str],
                     fixes: Fixes) -> DiscussionScene:
    initiator = raw.initiator.strip() or None
    if initiator is not None and initiator not in initiators:  # no class known: the player's default opens it
        initiator = initiators[0] if initiators else None
        fixes["unknown discussion initiators replaced"] += 1
    try:
        close = [ScriptStep(say=tidy(str(line))[:4000]) for line in raw.close[:20] if tidy(str(line))]
        return DiscussionScene(type="discussion", id=scene_id, title=title, topic=raw.topic,
                               prompt=raw.prompt or None, initiator=initiator, faq=expected(raw.faq, fixes),
                               close=close)
    except ValidationError as exc:
        raise StepProblem(first_problem(exc)) from None
