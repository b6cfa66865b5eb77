"""Fuzz: the model replies the newer steps read — a quiz grade, a judge's verdict, each step of
``maic lesson new`` — never crash maic, whatever their shape (hypothesis).

Each property: any reply either gives a usable, bounded result or a clean failure (a grade left
"not graded", a verdict counted missing, one ``GenerationError`` line); no other exception.
``MAIC_FUZZ_EXAMPLES`` sets the number of examples, as in tests/test_fuzz_replies_end_to_end.py.
"""

from __future__ import annotations

import asyncio
import json
import math
from typing import Any

import yaml
from hypothesis import given
from hypothesis import strategies as st

from maic_cli.authoring.generation import GenerationError, Initiator, LessonBrief, generate_lesson
from maic_cli.evaluation.judge import RoundToJudge, TurnToJudge, parse_verdict
from maic_cli.lessons.lesson import Lesson, QuizQuestion
from maic_cli.lessons.quiz import grade
from maic_cli.llm.port import LLMRequest
from maic_cli.llm.scripted import FunctionLLM, ScriptedLLM
from maic_cli.store.lesson_writer import lesson_yaml
from maic_cli.store.lessons import MAX_LESSON_BYTES
from tests.lesson_steps import STEPS
from tests.test_fuzz_replies_end_to_end import FUZZ, JSON, TEXT

SHORT = QuizQuestion(id="q", type="short", question="Why?", rubric="Energy.", points=3)
ROUND = RoundToJudge(index=0, learner="Why is the sky blue?", turns=(
    TurnToJudge(speaker="teacher", name="Ms. T", role="teacher", persona="calm", text="Scattering."),
    TurnToJudge(speaker="mia", name="Mia", role="student", persona="curious", text="Why blue, not violet?")))


@st.composite
def model_text(draw: st.DrawFn, base: Any = None) -> str:
    """A reply: ``base`` (or any JSON) with values swapped for junk, maybe wrapped in prose or cut off."""
    value = draw(JSON) if base is None else base
    if isinstance(value, dict):
        value = {key: (draw(JSON) if draw(st.integers(0, 3)) == 0 else item) for key, item in value.items()}
    text = json.dumps(value, ensure_ascii=draw(st.booleans()), allow_nan=True)
    if draw(st.booleans()):
        text = draw(st.sampled_from(["Sure! ", "```json\n", "{", "<think>{not json}</think>", "[1] "])) + text
    if draw(st.integers(0, 4)) == 0:
        text = text[:draw(st.integers(0, len(text)))]
    return text if draw(st.integers(0, 6)) else draw(TEXT)


@FUZZ
@given(reply=model_text({"points": 2, "comment": "Good."}))
def test_any_grade_reply_gives_a_bounded_grade_or_none(reply: str) -> None:
    graded = asyncio.run(grade(SHORT, "Light gives energy.", ScriptedLLM([reply])))
    assert math.isfinite(graded.points) and 0 <= graded.points <= SHORT.points
    assert graded.graded_by in ("model", "none") and (graded.comment is None or len(graded.comment) <= 300)


@FUZZ
@given(reply=model_text({"turns": [{"turn": 1, "on_topic": True, "correct": True, "in_role": True, "brief": True,
                                    "new": True, "reason": "ok"}], "answered": True, "answered_reason": "yes"}))
def test_any_judge_reply_gives_a_verdict_for_every_turn(reply: str) -> None:
    verdict = parse_verdict(reply, ROUND)
    assert [turn.speaker for turn in verdict.turns] == ["teacher", "mia"]
    assert all(len(turn.reason) <= 400 for turn in verdict.turns)


def step_reply(schema: dict[str, Any]) -> dict[str, Any]:
    """The good reply (tests/test_lesson_new.py) to the step whose schema this is."""
    wanted = set(schema.get("properties", {}))
    return max(STEPS, key=lambda step: len(wanted & set(step)))


@FUZZ
@given(data=st.data())
def test_any_generation_replies_give_a_valid_lesson_or_one_line(data: st.DataObject) -> None:
    def respond(request: LLMRequest) -> str:
        assert request.purpose == "generate" and request.response_schema is not None
        return data.draw(model_text(step_reply(request.response_schema)))

    brief = LessonBrief(topic="photosynthesis", scenes=3, initiators=(Initiator("curious_student", "Mia"),))
    try:
        result = asyncio.run(generate_lesson(brief, FunctionLLM(respond)))
    except GenerationError as exc:
        assert "\n" not in str(exc) and str(exc).startswith("lesson generation")
        return
    written = lesson_yaml(result.lesson, ["a header"])
    assert len(written.encode("utf-8")) <= MAX_LESSON_BYTES  # what load_lesson reads
    assert Lesson.model_validate(yaml.safe_load(written)) == result.lesson  # what is written loads back
