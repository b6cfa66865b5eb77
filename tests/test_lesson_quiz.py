"""Quiz grading (lessons/quiz.py): choice answers by the key, short answers by a scripted model;
and the lesson's prompts (a golden file of a lecture turn and of a question during a lesson)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Literal

import pytest

from maic_cli.engine.classroom import Classroom
from maic_cli.engine.models import ClassSettings, DirectorState, RoundContext, TurnConfig, TurnRequest
from maic_cli.engine.preview import agent_call_messages, director_call_messages
from maic_cli.engine.runner import ClassRunner
from maic_cli.lessons.lesson import LessonPlay, QuizQuestion
from maic_cli.lessons.player import LessonPlayer
from maic_cli.lessons.quiz import AnswerNotUnderstood, grade_choice, grade_short, parse_choice, parse_grade
from maic_cli.llm.port import LLMRequest
from maic_cli.llm.scripted import FunctionLLM, ScriptedLLM, ScriptedReply
from maic_cli.store.lessons import load_lesson
from tests.test_prompt_templates import CLASS, PROFILE, check_golden
from tests.test_prompt_templates import as_text as golden_text


def as_text(title: str, messages: list[dict[str, str]]) -> str:
    return golden_text(title, messages).replace("tests/test_prompt_templates.py", "tests/test_lesson_quiz.py")


SINGLE = QuizQuestion(id="s", type="single", question="Q?", options=["a", "b", "c", "d"], answer=["C"], points=2)
MULTI = QuizQuestion(id="m", type="multiple", question="Q?", options=["a", "b", "c", "d"], answer=["A", "C"])
SHORT = QuizQuestion(id="t", type="short", question="Why do plants need light?", rubric="Energy.", points=3)


@pytest.mark.parametrize(("question", "text", "chosen"), [
    (SINGLE, "C", ["C"]), (SINGLE, "c", ["C"]), (SINGLE, " 3 ", ["C"]), (SINGLE, "c)", ["C"]), (SINGLE, "b.", ["B"]),
    (MULTI, "A,C", ["A", "C"]), (MULTI, "a c", ["A", "C"]), (MULTI, "1 3", ["A", "C"]), (MULTI, "c; a", ["A", "C"]),
    (MULTI, "3,1,3", ["A", "C"]), (MULTI, "a/b/c", ["A", "B", "C"]),
])
def test_choice_answers_are_read_leniently(question: QuizQuestion, text: str, chosen: list[str]) -> None:
    assert parse_choice(question, text) == chosen


@pytest.mark.parametrize(("question", "text", "says"), [
    (SINGLE, "E", "'E' is not one of the options: answer with one letter A–D (or 1–4)"),
    (SINGLE, "5", "'5' is not one of the options"),
    (SINGLE, "0", "'0' is not one of the options"),
    (SINGLE, "", "answer with one letter A–D"),
    (SINGLE, "A C", "one answer only"),
    (SINGLE, "I think C", "'I' is not one of the options"),
    (MULTI, "a, x", "'X' is not one of the options: answer with the letters A–D (or 1–4), several separated"),
])
def test_an_answer_that_is_not_an_option_is_asked_again_not_graded(question: QuizQuestion, text: str,
                                                                    says: str) -> None:
    with pytest.raises(AnswerNotUnderstood, match=says.replace("(", r"\(").replace(")", r"\)")):
        grade_choice(question, text)


@pytest.mark.parametrize(("question", "text", "points", "correct", "comment"), [
    (SINGLE, "c", 2, True, None),
    (SINGLE, "a", 0, False, "the answer is C"),
    (MULTI, "a c", 1, True, None),
    (MULTI, "a", 0, False, "partly right, but only the exact set counts: the answer is A, C"),  # no partial credit
    (MULTI, "a b c", 0, False, "partly right"),
    (MULTI, "b d", 0, False, "the answer is A, C"),
])
def test_choice_grading_by_the_key(question: QuizQuestion, text: str, points: int, correct: bool,
                                   comment: str | None) -> None:
    graded = grade_choice(question, text)
    assert (graded.points, graded.correct, graded.graded_by) == (points, correct, "key")
    assert graded.max_points == question.points
    assert graded.comment == comment if comment is None else comment in (graded.comment or "")


def grader(*replies: str | ScriptedReply) -> ScriptedLLM:
    return ScriptedLLM(list(replies))


def test_a_short_answer_is_graded_by_the_model_against_the_rubric() -> None:
    llm = grader('{"points": 3, "comment": "Right: light is the energy."}')
    graded = asyncio.run(grade_short(SHORT, "It gives energy", llm, language="French"))
    assert (graded.points, graded.correct, graded.graded_by, graded.comment) == (
        3, True, "model", "Right: light is the energy.")
    call = llm.calls[0]
    assert call.purpose == "grade" and call.facts is not None and call.facts.learner_text == "It gives energy"
    assert call.response_schema is not None and call.response_schema["properties"]["points"]["maximum"] == 3
    assert "Energy." in call.messages[0]["content"] and "in French" in call.messages[0]["content"]
    assert call.messages[-1] == {"role": "user", "content": "It gives energy"}


@pytest.mark.parametrize("raw", [
    'Sure! {"points": 2, "comment": "Mostly right",}',  # trailing comma
    "```json\n{'points': 2, 'comment': 'Mostly right'}\n```",  # single quotes in a fence
    '{"points": 2, "comment": "Mostly right"',  # cut off
])
def test_a_broken_grade_reply_is_repaired(raw: str) -> None:
    graded = asyncio.run(grade_short(SHORT, "energy?", grader(raw)))
    assert (graded.points, graded.graded_by, graded.comment) == (2, "model", "Mostly right")


def test_a_placeholder_copied_from_the_prompt_is_not_shown_as_a_comment() -> None:
    """The offline model copied ``"<your comment>"`` from an example: the grade stays, the comment goes."""
    graded = asyncio.run(grade_short(SHORT, "energy", grader('{"points": 1, "comment": "<your comment>"}')))
    assert (graded.points, graded.graded_by, graded.comment) == (1, "model", None)


def test_points_are_clamped_to_the_question() -> None:
    assert asyncio.run(grade_short(SHORT, "x", grader('{"points": 9, "comment": "!"}'))).points == 3
    assert asyncio.run(grade_short(SHORT, "x", grader('{"points": -2, "comment": "!"}'))).points == 0


@pytest.mark.parametrize(("reply", "says"), [
    (ScriptedReply(error="server_error"), "not graded: the model could not be reached"),
    (ScriptedReply(reply="I think it is a fine answer."), "not graded: the model's reply was not a grade"),
    (ScriptedReply(reply='{"score": "good"}'), "not graded: the model's reply was not a grade"),
])
def test_a_provider_error_or_an_unusable_reply_leaves_the_answer_ungraded(reply: ScriptedReply, says: str) -> None:
    graded = asyncio.run(grade_short(SHORT, "energy", grader(reply)))
    assert (graded.points, graded.graded_by, graded.correct) == (0, "none", False)
    assert graded.comment is not None and graded.comment.startswith(says)
    assert graded.answer == "energy"  # the learner's words are kept


def test_parse_grade_ignores_prose_without_a_grade() -> None:
    assert parse_grade("no json here") is None
    assert parse_grade('[1, 2]') is None
    found = parse_grade('The grade: {"points": 1, "comment": "ok"} and more {')
    assert found is not None and found.points == 1


# -- the lesson in the prompts -------------------------------------------------------------------------
def lesson_request(task: Literal["question", "lecture", "discuss"], compact: bool) -> tuple[TurnRequest, str]:
    """A request as the player makes it for the sample lesson's first slide (a question or a lecture)."""
    lesson = load_lesson(Path(__file__).parent.parent / "lessons" / "photosynthesis.yaml")
    settings = ClassSettings(agent_ids=list(CLASS))
    runner = ClassRunner(Classroom(), settings, FunctionLLM(lambda r: ""), agents=CLASS, profile=PROFILE)
    player = LessonPlayer(runner, LessonPlay(lesson=lesson))
    player.start()
    request_config = TurnConfig.for_round(settings, RoundContext(compact_prompts=compact, lesson=player.context(task)))
    messages = list(runner.classroom.messages)
    if task == "question":
        runner.classroom.add_learner_message("Why does the soil not shrink?")
        messages = list(runner.classroom.messages)
    return TurnRequest(messages=messages, store_state=runner.classroom.store, config=request_config,
                       user_profile=PROFILE, director_state=DirectorState()), "teacher"


@pytest.mark.parametrize("compact", [False, True], ids=["full", "compact"])
@pytest.mark.parametrize("task", ["lecture", "question"])
def test_lesson_prompts_match_golden(task: Literal["question", "lecture", "discuss"], compact: bool) -> None:
    request, speaker = lesson_request(task, compact)
    variant = "compact" if compact else "full"
    messages = agent_call_messages(request, CLASS[speaker])
    check_golden(f"agent/teacher-lesson-{task}.{variant}.txt", as_text(f"agent: teacher, lesson {task}, {variant}",
                                                                       messages))
    tail = messages[-1]["content"]
    assert "slide 1 of 3" in tail and "Light from the sun" in tail  # a bullet list's items, not its empty content
    if task == "question":
        director = director_call_messages(request, CLASS)
        check_golden(f"director/lesson-question.{variant}.txt", as_text(f"director: lesson question, {variant}",
                                                                        director))
        assert "How plants make food" in director[0]["content"]


def test_grading_prompt_is_a_template_a_user_can_override() -> None:
    from maic_cli.engine.prompt_set import PromptSet, TemplateSource
    from maic_cli.lessons.quiz import grade_messages

    custom = PromptSet.builtin().with_overrides(
        {"snippets/grade_short.j2": TemplateSource("Grade {{ question }} out of {{ points }}.", "x.j2")}, "mine")
    messages = grade_messages(SHORT, "energy", prompts=custom)
    assert messages[0]["content"] == "Grade Why do plants need light? out of 3."


def test_requests_a_fake_can_act_on() -> None:
    """Fakes act on purpose and facts, not on prompt wording: a function of the call grades."""
    def respond(request: LLMRequest) -> str:
        assert request.purpose == "grade" and request.facts is not None
        return '{"points": 3, "comment": "ok"}' if "energy" in (request.facts.learner_text or "") else \
            '{"points": 0, "comment": "no"}'

    llm = FunctionLLM(respond)
    assert asyncio.run(grade_short(SHORT, "it is energy", llm)).points == 3
    assert asyncio.run(grade_short(SHORT, "it is water", llm)).points == 0
