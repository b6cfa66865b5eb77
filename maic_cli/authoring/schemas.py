"""What each step of ``maic lesson new`` asks the model for: JSON schemas and the reply models.

Every step is one structured-output call.  Its JSON schema goes out with the request
(providers that honour it constrain the reply; the built-in offline model turns it into
a llama.cpp grammar), and the reply is read back through the matching pydantic model
below, which is deliberately lenient (extra keys ignored, strings trimmed): what the
lesson itself requires is checked afterwards against ``lessons/lesson.py``.

:class:`Limits` bound what a step may hold.  Small models get :data:`COMPACT`: the shapes
decided in advance (scene kinds; three elements ``idea``, ``points``, ``picture``; a lecture
that spotlights each and explains it; questions as the right answer and wrong ones), and
every string bounded and marked as a line, prose or a word for the offline model's grammar.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ..lessons.lesson import LETTERS

# At most N characters of a line (no JSON or markup characters, a letter first), of prose (a line that
# ends a sentence) or a lowercase word: ``{"type": "string", "x-maic-line": N}``.  Read by the offline
# model's grammar (llm/local.py); other backends ignore ``x-`` keys.
LINE_MARK, PROSE_MARK, WORD_MARK = "x-maic-line", "x-maic-prose", "x-maic-word"

SceneKindName = Literal["slide", "quiz", "discussion"]
ELEMENT_TYPES = ("text", "bullets", "formula", "code", "table", "image")


@dataclass(frozen=True)
class Limits:
    """How much one step may produce (array bounds in the schemas, counts in the prompts)."""

    objectives: int = 4
    elements: tuple[int, int] = (2, 5)
    element_types: tuple[str, ...] = ELEMENT_TYPES
    bullet_items: tuple[int, int] = (2, 6)
    table_rows: tuple[int, int] = (2, 6)
    steps: tuple[int, int] = (3, 10)
    questions: tuple[int, int] = (2, 4)
    options: tuple[int, int] = (3, 5)
    key_points: tuple[int, int] = (2, 4)  # per scene of the outline: what its slide or quiz works from
    # Small models: the outline's kinds, a slide's elements (ids ``idea``, ``points``, ``picture``), the shape
    # of its lecture and of a quiz question (the right option, then the wrong ones) are decided in advance.
    fixed_shapes: bool = False
    marked: bool = False  # strings marked as prose, lines and words for the offline model's grammar
    max_tokens: int = 1200  # per call
    # Characters in a string (None: unbounded): ids; titles, options and list items; sentences.
    # A small model runs on in a string until its tokens run out; a bound in the grammar stops it.
    id_chars: int | None = None
    title_chars: int | None = None
    short_chars: int | None = None
    long_chars: int | None = None
    speech_chars: int | None = None  # one ``say`` step
    temperature: float | None = None  # None: the client's
    retry_warmer: float = 0.0  # added to ``temperature`` per retry (a small model repeats itself when asked again)


FULL = Limits()
COMPACT = Limits(objectives=3, elements=(2, 3), element_types=("text", "bullets", "formula", "image"),
                 bullet_items=(2, 3), steps=(3, 5), questions=(2, 2), options=(3, 3), key_points=(2, 2),
                 fixed_shapes=True,
                 marked=True, max_tokens=400, id_chars=16, title_chars=48,
                 short_chars=60, long_chars=160, speech_chars=260, temperature=0.3,
                 retry_warmer=0.3)


# -- small schema helpers ----------------------------------------------------------------------

def _string(max_chars: int | None = None, mark: str | None = None) -> dict[str, Any]:
    """A string of at most ``max_chars``; ``mark`` (the offline model's grammar) narrows it to a line
    of prose or a lowercase word, bounded the same."""
    bounded: dict[str, Any] = {"type": "string"}
    if max_chars is not None:
        bounded.update({mark: max_chars} if mark else {"minLength": 1, "maxLength": max_chars})
    return bounded


def _array(items: dict[str, Any], bounds: tuple[int, int]) -> dict[str, Any]:
    return {"type": "array", "items": items, "minItems": bounds[0], "maxItems": bounds[1]}


def _object(**properties: dict[str, Any]) -> dict[str, Any]:
    """An object whose properties are all required, in the order given (the order a grammar writes them)."""
    return {"type": "object", "properties": properties, "required": list(properties),
            "additionalProperties": False}


def _const(value: str) -> dict[str, Any]:
    return {"type": "string", "const": value}


def _enum(values: list[str]) -> dict[str, Any]:
    return {"type": "string", "enum": values}


# -- the steps' schemas -----------------------------------------------------------------------

def _line(limits: Limits, max_chars: int | None) -> dict[str, Any]:
    return _string(max_chars, LINE_MARK if limits.marked else None)


def _prose(limits: Limits, max_chars: int | None) -> dict[str, Any]:
    return _string(max_chars, PROSE_MARK if limits.marked else None)


def _word(limits: Limits) -> dict[str, Any]:
    return _string(limits.id_chars, WORD_MARK if limits.marked else None)


def requirements_schema(limits: Limits) -> dict[str, Any]:
    return _object(title=_line(limits, limits.title_chars), description=_prose(limits, limits.long_chars),
                   objectives=_array(_line(limits, limits.short_chars), (1, limits.objectives)))


def outline_schema(kinds: list[str] | None, scenes: int, limits: Limits) -> dict[str, Any]:
    """``scenes`` scenes; with ``kinds`` (small models) each position's kind is fixed."""
    def scene(kind: dict[str, Any]) -> dict[str, Any]:
        return _object(kind=kind, title=_line(limits, limits.title_chars), goal=_prose(limits, limits.long_chars),
                       points=_array(_line(limits, limits.short_chars), limits.key_points))

    if kinds is not None:
        return _object(scenes={"type": "array", "items": [scene(_const(k)) for k in kinds]})
    return _object(scenes=_array(scene(_enum(["slide", "quiz", "discussion"])), (scenes, scenes)))


def _element_variant(kind: str, limits: Limits) -> dict[str, Any]:
    element_id, short = _word(limits), _line(limits, limits.short_chars)
    if kind == "bullets":
        return _object(type=_const(kind), id=element_id, items=_array(short, limits.bullet_items))
    if kind == "table":
        return _object(type=_const(kind), id=element_id, rows=_array(_array(short, (2, 4)), limits.table_rows))
    if kind == "code":
        return _object(type=_const(kind), id=element_id, language=short, content=_string())
    return _object(type=_const(kind), id=element_id, content=_prose(limits, limits.long_chars))


COMPACT_ELEMENTS = (("text", "idea"), ("bullets", "points"), ("image", "picture"))


def elements_schema(limits: Limits) -> dict[str, Any]:
    if limits.fixed_shapes:
        fixed = []
        for kind, element_id in COMPACT_ELEMENTS:
            variant = _element_variant(kind, limits)
            variant["properties"]["id"] = _const(element_id)
            fixed.append(variant)
        return _object(elements={"type": "array", "items": fixed})
    variants = [_element_variant(kind, limits) for kind in limits.element_types]
    return _object(elements=_array({"anyOf": variants}, limits.elements))


def script_schema(element_ids: list[str], limits: Limits, speakers: list[str] | None = None) -> dict[str, Any]:
    """Steps that say something or point at one of ``element_ids`` (and nothing else); with ``speakers``
    (student ids), a say step may be one of theirs (``by``) — not on small models' fixed shapes."""
    say = _prose(limits, limits.speech_chars)
    if limits.fixed_shapes:  # spotlight an element, talk about it; the next one; and so on
        steps = []
        for element_id in element_ids[:2]:
            steps += [_object(spotlight=_const(element_id)), _object(say=say)]
        return _object(steps={"type": "array", "items": steps or [_object(say=say)]})
    variants = [_object(say=say)]
    if element_ids:
        variants += [_object(spotlight=_enum(element_ids)), _object(laser=_enum(element_ids))]
    if speakers:
        variants.append(_object(say=say, by=_enum(speakers)))
    return _object(steps=_array({"anyOf": variants}, limits.steps), faq=faq_schema(limits))


FAQ_COUNT = (3, 8)  # expected questions a provider model writes for a slide or a discussion


def faq_schema(limits: Limits) -> dict[str, Any]:
    """The questions a teacher expects: one to three phrasings each, and the answer said as written."""
    entry = _object(q=_array(_line(limits, 300), (1, 3)), a=_prose(limits, 1200))
    return _array(entry, FAQ_COUNT)


def quiz_schema(limits: Limits) -> dict[str, Any]:
    if limits.fixed_shapes:  # the right option first, then the wrong ones; the options are shuffled after
        wrong = _array(_line(limits, limits.short_chars), (limits.options[0] - 1, limits.options[1] - 1))
        question = _object(type=_const("single"), question=_prose(limits, limits.long_chars),
                           right=_line(limits, limits.short_chars), wrong=wrong,
                           explanation=_prose(limits, limits.long_chars))
        return _object(questions={"type": "array", "items": [question] * limits.questions[1]})
    letters = list(LETTERS[:limits.options[1]])
    question, options = _prose(limits, limits.long_chars), _array(_line(limits, limits.short_chars), limits.options)
    why = _prose(limits, limits.long_chars)
    single = _object(type=_const("single"), question=question, options=options, answer=_enum(letters),
                     explanation=why)
    multiple = _object(type=_const("multiple"), question=question, options=options,
                       answer=_array(_enum(letters), (2, limits.options[1])), explanation=why)
    short = _object(type=_const("short"), question=question, rubric=_prose(limits, limits.long_chars),
                    explanation=why)
    return _object(questions=_array({"anyOf": [single, multiple, short]}, limits.questions))


def discussion_schema(initiators: list[str], limits: Limits) -> dict[str, Any]:
    who = _enum(initiators) if initiators else _word(limits)
    if limits.fixed_shapes:
        return _object(topic=_prose(limits, limits.long_chars), prompt=_prose(limits, limits.long_chars),
                       initiator=who)
    return _object(topic=_prose(limits, limits.long_chars), prompt=_prose(limits, limits.long_chars),
                   initiator=who, faq=faq_schema(limits), close=_array(_prose(limits, limits.speech_chars), (1, 3)))


# -- the replies, read leniently ----------------------------------------------------------------

def tidy(text: str) -> str:
    """A title, option or list item without the comma or colon a model left at its end."""
    return text.strip().rstrip(",;:").rstrip()


class _Reply(BaseModel):
    model_config = ConfigDict(extra="ignore", str_strip_whitespace=True)


class RequirementsReply(_Reply):
    title: str = Field(min_length=1, max_length=200)
    description: str = Field(default="", max_length=2000)
    objectives: list[str] = Field(default_factory=list, max_length=10)

    @field_validator("title")
    @classmethod
    def _tidy_title(cls, value: str) -> str:
        return tidy(value)


class OutlineScene(_Reply):
    kind: SceneKindName
    title: str = Field(min_length=1, max_length=200)
    goal: str = Field(default="", max_length=500)
    points: list[str] = Field(default_factory=list, max_length=10)  # the key points its slide or quiz works from

    @field_validator("points", mode="before")
    @classmethod
    def _point_texts(cls, value: object) -> object:
        if isinstance(value, list):
            return [tidy(str(item)) for item in value if isinstance(item, str | int | float) and str(item).strip()]
        return value

    @field_validator("kind", mode="before")
    @classmethod
    def _lower(cls, value: object) -> object:
        return value.strip().lower() if isinstance(value, str) else value

    @field_validator("title")
    @classmethod
    def _tidy_title(cls, value: str) -> str:
        return tidy(value)


class OutlineReply(_Reply):
    scenes: list[OutlineScene] = Field(min_length=1)


class ElementsReply(_Reply):
    elements: list[dict[str, Any]] = Field(min_length=1, max_length=40)


class ScriptReply(_Reply):
    steps: list[dict[str, Any]] = Field(min_length=1, max_length=200)
    faq: list[Any] = Field(default_factory=list, max_length=40)  # read leniently (authoring/fixes.py)


class QuestionDraft(_Reply):
    type: Literal["single", "multiple", "short"]
    question: str = Field(min_length=1, max_length=2000)
    options: list[str] = Field(default_factory=list)
    answer: list[str] | str = Field(default_factory=list)
    rubric: str | None = None
    right: str | None = None  # small models: the right option, then the wrong ones (shuffled after)
    wrong: list[str] = Field(default_factory=list)
    explanation: str | None = Field(default=None, max_length=1000)

    @field_validator("type", mode="before")
    @classmethod
    def _lower(cls, value: object) -> object:
        return value.strip().lower() if isinstance(value, str) else value


class QuizReply(_Reply):
    questions: list[QuestionDraft] = Field(min_length=1, max_length=50)


class DiscussionReply(_Reply):
    topic: str = Field(min_length=1, max_length=500)
    prompt: str = Field(default="", max_length=2000)
    initiator: str = ""
    faq: list[Any] = Field(default_factory=list, max_length=40)
    close: list[Any] = Field(default_factory=list, max_length=20)
