"""Judged turns: a judge model scores a finished round of a class against a rubric.

One judge call per round: the round's turns are judged together, in one structured
reply, because "adds something new this round" can only be judged against the
turns before it, "was the learner answered" needs all of them, and one call per
round costs a fraction of one per turn.  The scores are yes/no (``CRITERIA`` per
turn, ``answered`` per round with a learner message), each with a one-line reason:
a small model manages a yes/no far better than a 1–5 scale, and yes/no rates get
exact-enough Wilson intervals in the report.

The rubric is a template like every other prompt (``judge/rubric.j2`` for the system
message, ``judge/round.j2`` for the round), rendered in the prompt set's sandbox and
overridable by relative path; a ``rubric-version: NAME`` line in the rubric names it,
and a fingerprint of the judge templates tells two edits apart even when the version
was not changed.

The reply is read like any model reply: the first JSON object (tried at the first 20
braces; ``json-repair`` when it is broken, on a bounded prefix), each turn's verdict validated on its own.  An
incomplete verdict is asked for again (``ATTEMPTS`` calls at most); what is still
unusable is recorded as missing, never raised.  Pure: no files, no clock.

Which rubric judges is a :class:`~.judge_rubrics.Rubric` (``default`` above, or ``pedagogy``: the
BEA 2025 dimensions, three labels each, teacher-side turns only): its templates, its criteria and
their labels, the roles it judges.  A default verdict keeps its true/false fields; another rubric's
is a label per criterion (``TurnVerdict.labels``), a turn's verdict usable only when every one of
its criteria got an allowed label.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, Field, SerializerFunctionWrapHandler, TypeAdapter, ValidationError, model_serializer

from ..engine.prompt_set import PromptSet
from ..llm.port import LLMClient, LLMError, LLMRequest, TurnFacts, read_reply
from ..replies.json_reply import first_json_object
from ..replies.sanitize import clean_tree
from ..untrusted import one_line
from .judge_rubrics import DEFAULT, Rubric

CRITERIA = ("on_topic", "correct", "in_role", "brief", "new")
CRITERIA_LABELS = {"on_topic": "on topic", "correct": "correct", "in_role": "in role and persona",
                   "brief": "brief enough", "new": "adds something new"}
ATTEMPTS = 2  # calls per round at most: the first, and one more when its verdict is incomplete
MAX_TURN_CHARS = 2_000  # of one turn's speech shown to the judge
MAX_REPLY_CHARS = 20_000  # of a reply read (a server that ignores max_tokens stops here)
MAX_REPAIR_CHARS = 8_000  # given to json_repair (slow on long text; a verdict is short)
MAX_DEPTH = 6  # containers in a verdict (its turns are 3 deep)
MAX_OBJECT_STARTS = 20  # braces a JSON object is looked for at (prose may hold a brace before it)
MAX_REASON_CHARS = 200
UNVERSIONED = "unversioned"
_VERSION = re.compile(r"rubric-version:[ \t]*([A-Za-z0-9._-]{1,60})")
_DECODER = json.JSONDecoder(strict=False)
_BOOL: TypeAdapter[bool] = TypeAdapter(bool)  # lax: true/false, yes/no, 1/0


@dataclass(frozen=True)
class TurnToJudge:
    speaker: str
    name: str
    role: str
    persona: str
    text: str
    actions: tuple[str, ...] = ()


@dataclass(frozen=True)
class RoundToJudge:
    index: int  # 0-based, as in the run's round summaries
    learner: str | None  # None: a discussion's opening round (nothing to answer)
    turns: tuple[TurnToJudge, ...]
    learner_name: str = "the learner"
    topic: str | None = None


class TurnVerdict(BaseModel):
    """One turn's scores; a criterion is ``None`` when the verdict for the turn was unusable."""

    turn: int  # 1-based within the round
    speaker: str
    on_topic: bool | None = None
    correct: bool | None = None
    in_role: bool | None = None
    brief: bool | None = None
    new: bool | None = None
    reason: str = ""
    labels: dict[str, str] = Field(default_factory=dict)  # a label per criterion (rubrics other than the default)

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if not self.labels:  # a default verdict: the true/false fields
            data.pop("labels", None)
        return data

    @property
    def usable(self) -> bool:
        return bool(self.labels) or all(getattr(self, name) is not None for name in CRITERIA)

    @property
    def score(self) -> int | None:
        """Default criteria met (0 to 5), ``None`` when missing or judged on another rubric."""
        if self.labels or not self.usable:
            return None
        return sum(bool(getattr(self, name)) for name in CRITERIA)


class RoundVerdict(BaseModel):
    round: int  # 1-based
    status: Literal["ok", "partial", "missing", "no_turns"]
    answered: bool | None = None  # None: missing, or no learner message to answer
    answered_reason: str = ""
    turns: list[TurnVerdict] = Field(default_factory=list)
    attempts: int = 0
    repaired: bool = False  # the reply was broken JSON that json-repair mended
    error: str | None = None
    provider_error: bool = False  # incomplete because a judge call failed (an outage): judged again later

    @property
    def usable(self) -> int:
        """How many of its verdicts (each turn's, and ``answered``) could be read."""
        return sum(t.usable for t in self.turns) + (self.answered is not None)


@dataclass(frozen=True)
class RubricIdentity:
    version: str
    fingerprint: str  # of every judge/ template: two edits differ even under one version
    source: str  # "built-in", or the prompt set that overrides a judge template


def rubric_identity(prompts: PromptSet, rubric: Rubric = DEFAULT) -> RubricIdentity:
    names = [name for name in prompts.names if name in rubric.templates]
    digest = hashlib.sha256()
    for name in names:
        digest.update(f"{name}\0{prompts.source(name).text}\0".encode())
    found = _VERSION.search(prompts.source(rubric.template).text) if rubric.template in names else None
    overridden = any(name in rubric.templates for name in prompts.overridden)
    return RubricIdentity(found.group(1) if found else UNVERSIONED, digest.hexdigest()[:12],
                          prompts.name if overridden else "built-in")


def quoted(text: str) -> str:
    """``text`` with ``> `` before every line: what an agent (or the learner) said is marked as a quote
    from its first line to its last, so no line of it can pass for the round's own ``Turn N:`` header."""
    return "\n".join("> " + line for line in text.splitlines() or [""])


def judged_turns(round_: RoundToJudge, rubric: Rubric = DEFAULT) -> list[tuple[int, TurnToJudge]]:
    """The round's turns the rubric judges, each with its 1-based number in the round."""
    return [(number, turn) for number, turn in enumerate(round_.turns, 1) if rubric.judges(turn.role)]


def judge_messages(prompts: PromptSet, round_: RoundToJudge, rubric: Rubric = DEFAULT) -> list[dict[str, str]]:
    """The judge's messages for one round.  Speech and the learner's words are quoted (:func:`quoted`);
    names, roles and personas are one line each: nothing in them can start a line of the round's layout."""
    agents: dict[str, dict[str, str]] = {}
    turns = []
    for number, turn in enumerate(round_.turns, 1):
        name, role = one_line(turn.name), one_line(turn.role)
        agents.setdefault(turn.speaker, {"id": one_line(turn.speaker), "name": name, "role": role,
                                         "persona": one_line(turn.persona)})
        turns.append({"number": number, "speaker": one_line(turn.speaker), "name": name, "role": role,
                      "text": quoted(turn.text[:MAX_TURN_CHARS]) if turn.text.strip() else "",
                      "chars": len(turn.text), "cut": len(turn.text) > MAX_TURN_CHARS,
                      "actions": [one_line(action) for action in turn.actions],
                      "judged": rubric.judges(turn.role)})
    data = {"learner": quoted(round_.learner) if round_.learner is not None else None,
            "learner_name": one_line(round_.learner_name), "topic": one_line(round_.topic or "") or None,
            "agents": list(agents.values()), "turns": turns,
            "judged": [number for number, _ in judged_turns(round_, rubric)]}
    return [{"role": "system", "content": prompts.render(rubric.template, data)},
            {"role": "user", "content": prompts.render(rubric.round_template, data)}]


def verdict_schema(turns: int, learner: bool, rubric: Rubric = DEFAULT,
                   numbers: list[int] | None = None) -> dict[str, Any]:
    """The reply's JSON schema: exactly one verdict per judged turn (no string lengths: a llama.cpp
    grammar nests one rule per character of a length limit).  ``numbers``: the judged turns' numbers
    when the rubric judges only some of the round's turns."""
    number: dict[str, Any] = {"type": "integer", "minimum": 1, "maximum": turns} if numbers is None \
        else {"type": "integer", "enum": numbers}
    criteria = {c.name: {"type": "boolean"} if rubric.boolean else {"type": "string", "enum": list(c.labels)}
                for c in rubric.criteria}
    turns = turns if numbers is None else len(numbers)
    turn = {"type": "object",
            "properties": {"turn": number, "reason": {"type": "string"}, **criteria},
            "required": ["turn", "reason", *rubric.names], "additionalProperties": False}
    properties: dict[str, Any] = {"turns": {"type": "array", "items": turn, "minItems": turns, "maxItems": turns}}
    if learner and rubric.answered:
        properties |= {"answered_reason": {"type": "string"}, "answered": {"type": "boolean"}}
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}


def judge_request(prompts: PromptSet, round_: RoundToJudge, rubric: Rubric = DEFAULT) -> LLMRequest:
    """The judge call for one round; its facts (speakers, learner text) let a fake answer without the prompt."""
    judged = judged_turns(round_, rubric)
    n = len(judged)
    numbers = None if rubric.roles is None else [number for number, _ in judged]
    return LLMRequest(messages=judge_messages(prompts, round_, rubric), purpose="judge", temperature=0.0,
                      max_tokens=120 + (90 + 15 * len(rubric.criteria) * (not rubric.boolean)) * n,
                      response_schema=verdict_schema(len(round_.turns), round_.learner is not None, rubric, numbers),
                      facts=TurnFacts(turn=n, spoken=tuple(t.speaker for _, t in judged),
                                      learner_text=round_.learner))


def _first_object(text: str) -> tuple[dict[str, Any] | None, bool]:
    """The reply's verdict object and whether it had to be repaired: a bare array of turns before any
    brace is read as the turns; else the first object holding ``turns`` or ``answered`` (not one turn
    of a broken verdict), found as every reply object is (replies/json_reply.py)."""
    first = text.find("{")
    bracket = text.find("[", 0, first if first != -1 else len(text))
    if bracket != -1:
        try:
            value, _ = _DECODER.raw_decode(text, bracket)
            if isinstance(value, list) and value and all(isinstance(item, dict) for item in value):
                return {"turns": clean_tree(value, MAX_DEPTH, cut=True)}, False
        except (ValueError, RecursionError):
            pass
    return first_json_object(text, accept=lambda value: "turns" in value or "answered" in value,
                             max_depth=MAX_DEPTH, max_repair=MAX_REPAIR_CHARS, candidates=MAX_OBJECT_STARTS)


def _flag(value: Any) -> bool | None:
    try:
        return _BOOL.validate_python(value)
    except ValidationError:
        return None


def _reason(value: Any) -> str:
    return one_line(value).strip()[:MAX_REASON_CHARS] if isinstance(value, str) else ""


def _turn_items(items: Any, wanted: list[int]) -> list[dict[str, Any] | None]:
    """Each judged turn's item: by its ``turn`` number when every item has a distinct one of the judged
    turns' numbers (``wanted``), else by position."""
    found: list[dict[str, Any] | None] = [item if isinstance(item, dict) else None for item in items] \
        if isinstance(items, list) else []
    numbers = [item.get("turn") if item else None for item in found]
    if all(type(n) is int and n in wanted for n in numbers) and len(set(numbers)) == len(numbers):
        by_number = dict(zip(numbers, found, strict=True))
        return [by_number.get(number) for number in wanted]
    return (found + [None] * len(wanted))[:len(wanted)]


def _turn_verdict(number: int, turn: TurnToJudge, item: dict[str, Any] | None, rubric: Rubric) -> TurnVerdict:
    """One turn's verdict: complete, or with no scores at all (missing)."""
    verdict = TurnVerdict(turn=number, speaker=turn.speaker)
    if item is None:
        return verdict
    if rubric.boolean:
        flags = {name: _flag(item.get(name)) for name in rubric.names}
        if all(flag is not None for flag in flags.values()):
            return verdict.model_copy(update={**flags, "reason": _reason(item.get("reason"))})
        return verdict
    labels = {name: rubric.read(name, item.get(name)) for name in rubric.names}
    if all(label is not None for label in labels.values()):
        return verdict.model_copy(update={"labels": labels, "reason": _reason(item.get("reason"))})
    return verdict


def parse_verdict(text: str, round_: RoundToJudge, rubric: Rubric = DEFAULT) -> RoundVerdict:
    """A round's verdict from a judge's reply; whatever cannot be read is missing (never an exception)."""
    data, repaired = _first_object(text[:MAX_REPLY_CHARS])
    data = data or {}
    judged = judged_turns(round_, rubric)
    items = _turn_items(data.get("turns"), [number for number, _ in judged])
    turns = [_turn_verdict(number, turn, item, rubric) for (number, turn), item in zip(judged, items, strict=True)]
    asked = round_.learner is not None and rubric.answered
    answered = _flag(data.get("answered")) if asked else None
    result = RoundVerdict(round=round_.index + 1, status="ok", answered=answered, repaired=repaired, turns=turns,
                           answered_reason=_reason(data.get("answered_reason")) if answered is not None else "")
    wanted = len(turns) + asked
    if result.usable < wanted:
        result.status = "partial" if result.usable else "missing"
        result.error = ("the reply holds no JSON object" if not data else
                         f"{wanted - result.usable} of {wanted} verdicts unusable")
    return result


async def judge_round(llm: LLMClient, prompts: PromptSet, round_: RoundToJudge,
                      attempts: int = ATTEMPTS, rubric: Rubric = DEFAULT) -> RoundVerdict:
    """Judge one round, asking again (up to ``attempts`` calls) while the verdict is incomplete;
    the most complete verdict is kept.  A round nobody spoke in needs no call: it was not answered
    (a round with no turn the rubric judges needs none either)."""
    if not judged_turns(round_, rubric):
        asked = round_.learner is not None and rubric.answered and not round_.turns
        return RoundVerdict(round=round_.index + 1, status="no_turns", answered=False if asked else None,
                            answered_reason="no agent spoke" if asked else "")
    request = judge_request(prompts, round_, rubric)
    best: RoundVerdict | None = None
    failed = False  # a call failed (provider error): an incomplete verdict is judged again later
    for attempt in range(1, attempts + 1):
        try:
            verdict = parse_verdict(await read_reply(llm, request, MAX_REPLY_CHARS), round_, rubric)
        except LLMError as exc:
            verdict = parse_verdict("", round_, rubric).model_copy(update={"error": str(exc)})
            failed = True
        if best is None or verdict.usable >= best.usable:  # on a tie the latest (its error is the last)
            best = verdict
        best.attempts = attempt
        if best.status == "ok":
            break
    assert best is not None
    best.provider_error = failed and best.status != "ok"
    return best


async def judge_rounds(llm: LLMClient, prompts: PromptSet, rounds: list[RoundToJudge],
                       rubric: Rubric = DEFAULT) -> list[RoundVerdict]:
    """Every round of a run, one after another (a run's rounds share one judge client)."""
    return [await judge_round(llm, prompts, round_, rubric=rubric) for round_ in rounds]
