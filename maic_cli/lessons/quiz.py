"""Quiz grading: choice answers by the key, short answers by the model against the rubric.

Choice answers are read leniently: letters or numbers, any case, separated by commas,
spaces, semicolons or slashes (``"A,C"``, ``"a c"``, ``"1 3"``, ``"b)"``).  An answer that
does not name options of the question is not graded at all: :class:`AnswerNotUnderstood`
says how to answer, and the caller asks again.

Scoring: a single-choice question earns its points for the right letter.  A multiple-choice
question earns its points only for exactly the right set of options — a missing or an extra
option earns nothing (no partial credit: the comment names the right set).

A short answer is graded by one model call (``purpose="grade"``) that must reply
``{"points": n, "comment": "..."}``; the reply is found anywhere in the text and repaired
like other model replies (``json_repair``), the points are clamped to the question's.  A
provider error or an unusable reply never raises: the answer is kept with 0 points,
``graded_by="none"`` and a comment that says why.

A small model (the built-in one, whose grades were found inverted: a right answer 0/4, a wrong
one 2/4; measured on tests/benchmarks/grading_set.yaml it gave 31 of 35 right answers 0) is
checked against a deterministic measure of the rubric (:mod:`.rubric`: its essential points,
bonus points and key terms, stemmed, with synonyms and negations).  The model's grade stands
only inside the range the measure accepts (2 or 3 for an answer with the essential point but not
the bonus); where they disagree, or the model gives no grade, the measure's own grade wins
(``graded_by="rubric"``), and the model is not asked at all where only one grade fits.  The
comment is the measure's: which points were found and which were missed.  Where the measure
cannot decide, the answer is ``graded_by="none"`` and says "not graded" (the small model alone
is not trusted).  A hosted model's grade stands; a grade of 0 from any model has a comment.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from ..engine.prompt_set import PromptSet, resolve
from ..errors import InputError
from ..llm.port import LLMClient, LLMError, LLMRequest, TurnFacts, read_reply
from ..replies.json_reply import first_json_object
from ..replies.sanitize import replace_surrogates
from .lesson import LETTERS, QuizAnswer, QuizQuestion
from .rubric import Measure, measure, read_rubric

_SEPARATORS = re.compile(r"[\s,;/&+]+")
_TRIM = ".)]:(["
GRADE_MAX_TOKENS = 200
MAX_COMMENT = 300
MAX_GRADE_CHARS = 8_000  # of a grade's reply read (a grade is a line; a runaway server is stopped)
MAX_ANSWER = 4000  # characters of a short answer sent to the grader
_MAX_REPAIR = 4000  # characters given to json_repair


class AnswerNotUnderstood(InputError):
    """The learner's answer does not name options of the question: ask again."""


def option_letters(question: QuizQuestion) -> str:
    return LETTERS[:len(question.options)]


def how_to_answer(question: QuizQuestion) -> str:
    letters = option_letters(question)
    span = f"{letters[0]}–{letters[-1]} (or 1–{len(letters)})"
    if question.type == "multiple":
        return f"answer with the letters {span}, several separated by commas or spaces"
    return f"answer with one letter {span}"


def parse_choice(question: QuizQuestion, text: str) -> list[str]:
    """The letters ``text`` names, in option order; :class:`AnswerNotUnderstood` if it names
    none, something that is not an option, or several for a single-choice question."""
    letters = option_letters(question)
    chosen: set[str] = set()
    for token in _SEPARATORS.split(text.strip()):
        token = token.strip(_TRIM).upper()
        if not token:
            continue
        if token.isascii() and token.isdigit() and 1 <= int(token) <= len(letters):
            chosen.add(letters[int(token) - 1])
        elif len(token) == 1 and token in letters:
            chosen.add(token)
        else:
            shown = token[:20] + ("…" if len(token) > 20 else "")
            raise AnswerNotUnderstood(f"{shown!r} is not one of the options: {how_to_answer(question)}")
    if not chosen:
        raise AnswerNotUnderstood(how_to_answer(question))
    if question.type == "single" and len(chosen) > 1:
        raise AnswerNotUnderstood(f"one answer only: {how_to_answer(question)}")
    return sorted(chosen)


def grade_choice(question: QuizQuestion, text: str) -> QuizAnswer:
    """A choice answer graded by the key (raises :class:`AnswerNotUnderstood`, see the module)."""
    chosen = parse_choice(question, text)
    correct = set(chosen) == set(question.answer)
    key = ", ".join(question.answer)
    comment = None if correct else f"the answer is {key}"
    if not correct and question.type == "multiple" and set(chosen) & set(question.answer):
        comment = f"partly right, but only the exact set counts: the answer is {key}"
    return QuizAnswer(question_id=question.id, answer=text.strip(), chosen=chosen,
                      points=question.points if correct else 0, max_points=question.points,
                      correct=correct, comment=comment, graded_by="key")


class GradeReply(BaseModel):
    points: float = Field(allow_inf_nan=False)  # NaN or infinity: no grade
    comment: str = ""


def grade_schema(question: QuizQuestion) -> dict[str, Any]:
    return {"type": "object",
            "properties": {"points": {"type": "integer", "minimum": 0, "maximum": question.points},
                           "comment": {"type": "string", "maxLength": MAX_COMMENT}},
            "required": ["points", "comment"], "additionalProperties": False}


def parse_grade(text: str) -> GradeReply | None:
    """``{"points": n, "comment": "..."}`` from anywhere in ``text`` (repaired if need be)."""
    value, _ = first_json_object(text, accept=lambda found: "points" in found, max_depth=4, max_repair=_MAX_REPAIR)
    if value is None:
        return None
    try:
        return GradeReply.model_validate(value)
    except ValidationError:
        return None


def grade_messages(question: QuizQuestion, text: str, *, language: str | None = None,
                   prompts: PromptSet | None = None) -> list[dict[str, str]]:
    data = {"question": question.question, "rubric": question.rubric or "", "points": question.points,
            "language": language or ""}
    system = resolve(prompts).render("snippets/grade_short.j2", data)
    return [{"role": "system", "content": system},
            {"role": "user", "content": text.strip()[:MAX_ANSWER] or "(no answer)"}]


def _ungraded(question: QuizQuestion, text: str, why: str) -> QuizAnswer:
    return QuizAnswer(question_id=question.id, answer=text.strip(), points=0, max_points=question.points,
                      correct=False, comment=f"not graded: {why}", graded_by="none")


def measure_answer(question: QuizQuestion, text: str, *, language: str | None = None) -> Measure:
    """The deterministic measure of a short answer against the question's rubric (see :mod:`.rubric`)."""
    rubric = read_rubric(question.rubric or "", question.question, language=language)
    return measure(rubric, text, question.points, language=language)


def _is_small(llm: LLMClient) -> bool:
    from ..llm.spec import ModelSpec

    return ModelSpec.parse(str(getattr(llm, "model", ""))).compact_prompts


SMALL_UNDECIDED = ("the rubric's words do not decide it, and the built-in model's grades are not reliable "
                   "enough to stand alone (measured: it gave most right answers 0)")


def _by_rubric(question: QuizQuestion, text: str, measured: Measure, points: float | None = None) -> QuizAnswer:
    """A small model's grade checked by the measure: the model's (``points``) inside the measure's range, else
    the measure's; "not graded" where the measure cannot decide."""
    if measured.points is None:
        return _ungraded(question, text, f"{SMALL_UNDECIDED}: {measured.comment}")
    by: Literal["model", "rubric"] = "rubric"
    final = measured.points
    if points is not None and measured.accepts(points):
        final, by = points, "model"
    return QuizAnswer(question_id=question.id, answer=text.strip(), points=final, max_points=question.points,
                      correct=final >= question.points, comment=measured.comment_for(final)[:MAX_COMMENT],
                      graded_by=by)


async def grade_short(question: QuizQuestion, text: str, llm: LLMClient, *, language: str | None = None,
                      prompts: PromptSet | None = None, small: bool | None = None) -> QuizAnswer:
    """A short answer graded by the model against the rubric (never raises for the model's faults).

    ``small`` (default: the built-in model, known by its name): the grade is checked by :func:`measure_answer`,
    and the model is asked only where its grade can matter (the measure accepts more than one grade)."""
    small = _is_small(llm) if small is None else small
    measured = measure_answer(question, text, language=language)
    if small and (measured.points is None or measured.low == measured.high):
        return _by_rubric(question, text, measured)
    request = LLMRequest(messages=grade_messages(question, text, language=language, prompts=prompts),
                         purpose="grade", max_tokens=GRADE_MAX_TOKENS, temperature=0,
                         response_schema=grade_schema(question), facts=TurnFacts(learner_text=text))
    try:
        reply = await read_reply(llm, request, MAX_GRADE_CHARS)
    except LLMError as exc:
        if small:
            return _by_rubric(question, text, measured)
        return _ungraded(question, text, f"the model could not be reached ({exc})")
    grade = parse_grade(reply)
    if grade is None:
        return _by_rubric(question, text, measured) if small else \
            _ungraded(question, text, "the model's reply was not a grade")
    points = min(max(grade.points, 0.0), float(question.points))
    if small:
        return _by_rubric(question, text, measured, points)
    comment = " ".join(replace_surrogates(grade.comment).split())[:MAX_COMMENT] or None
    if comment is not None and comment.startswith("<") and comment.endswith(">"):
        comment = None  # a placeholder copied from an example, not a comment
    if comment is None and points == 0:  # a 0 is never left unexplained
        comment = measured.comment if measured.verdict == "wrong" else "0 points: the grader gave no reason."
    return QuizAnswer(question_id=question.id, answer=text.strip(), points=points, max_points=question.points,
                      correct=points >= question.points, comment=comment, graded_by="model")


async def grade(question: QuizQuestion, text: str, llm: LLMClient, *, language: str | None = None,
                prompts: PromptSet | None = None, small: bool | None = None) -> QuizAnswer:
    """Any question: choice by the key, short answer by the model (a small one checked by the rubric)."""
    if question.type == "short":
        return await grade_short(question, text, llm, language=language, prompts=prompts, small=small)
    return grade_choice(question, text)
