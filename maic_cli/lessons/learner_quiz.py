"""A simulated learner in a lesson: its questions after a slide, and its quiz answers.

* After a slide's lecture (or a discussion) the learner may ask something: its model
  is told the scene is over and answers ``<pass>`` when it has nothing to ask.
* It answers a quiz question itself, as the learner it plays would (its
  misconceptions included): letters for a choice question (read leniently and
  only ever as letters of the question's options), a sentence or two for a short one.
* A quiz taken before the lesson (``pre``) is answered without the lesson's context,
  and one taken after it (``post``) with the class so far; neither attempt sees the
  other's grading (the attempts are not part of the class).  :func:`take_quiz`
  grades an attempt: choice answers by the key, short answers by the class's grader.

Pure: it builds prompts and reads replies through the LLM port.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import BaseModel

from ..engine.learner import MAX_REPLY_CHARS, LearnerMove, SimulatedLearner, history, read_move, system_prompt
from ..engine.models import Message
from ..engine.prompt_set import PromptSet
from ..llm.port import LLMClient, LLMRequest, read_reply
from ..untrusted import clean
from .lesson import Lesson, QuizQuestion, QuizScene
from .quiz import AnswerNotUnderstood, grade, option_letters

PASS = re.compile(r"<\s*pass\s*>", re.IGNORECASE)
MAX_ANSWER_CHARS = 600
QUIZ_MAX_TOKENS = 120


def _ask(learner: SimulatedLearner, messages: Sequence[Message], instruction: str, max_tokens: int) -> LLMRequest:
    chat = [{"role": "system", "content": system_prompt(learner.profile)}, *history(messages)]
    if chat[-1]["role"] == "user":
        chat[-1] = {"role": "user", "content": chat[-1]["content"] + "\n\n" + instruction}
    else:
        chat.append({"role": "user", "content": instruction})
    return LLMRequest(messages=chat, purpose="learner", temperature=learner.temperature, max_tokens=max_tokens)


async def question_after(learner: SimulatedLearner, messages: Sequence[Message], what: str) -> LearnerMove:
    """What the learner asks after ``what`` (a slide, a discussion); ``""`` when it passes.  It counts
    as one of its turns only when it asks."""
    if not learner.may_speak:
        return LearnerMove("", True)
    instruction = (f"({what} is over. If something is unclear to you, ask the class one short question now; "
                   "otherwise reply only <pass>.)")
    reply = await read_reply(learner.llm, _ask(learner, messages, instruction, 200), MAX_REPLY_CHARS)
    if PASS.search(reply):
        return LearnerMove("", False)
    move = read_move(reply, learner.profile.name)
    if move.text:
        learner.spoken += 1
        learner.done = learner.done or move.done or learner.spoken >= learner.turns
    return LearnerMove(move.text, False)


def quiz_instruction(question: QuizQuestion) -> str:
    lines = [f"(Quiz question: {question.question}"]
    if question.type == "short":
        lines.append("Answer it as you would, in one or two sentences, with no name in front.)")
        return "\n".join(lines)
    lines += [f"{letter}) {option}" for letter, option in zip(option_letters(question), question.options, strict=False)]
    many = "the letters of every option you think is right, separated by commas" if question.type == "multiple" \
        else "the letter of the one option you think is right"
    lines.append(f"Answer as you really would, with {many}, and nothing else.)")
    return "\n".join(lines)


def read_answer(question: QuizQuestion, reply: str) -> str:
    """A reply as what the learner types: for a choice question the option letters it names (standing
    alone), in order, else the first line as it is (the grader then says it is not understood)."""
    text = clean(reply).strip()
    if question.type == "short":
        return text[:MAX_ANSWER_CHARS]
    letters = option_letters(question)
    named = [m.upper() for m in re.findall(r"(?<![A-Za-z])([A-Za-z])(?![A-Za-z])", text[:MAX_ANSWER_CHARS])]
    chosen = list(dict.fromkeys(letter for letter in named if letter in letters))
    if question.type == "single":
        chosen = chosen[:1]
    first = text.splitlines()[0] if text else ""
    return ", ".join(chosen) if chosen else first[:80]


async def answer_question(learner: SimulatedLearner, question: QuizQuestion, messages: Sequence[Message]) -> str:
    """The learner's answer to one quiz question, as typed (quiz answers are not counted as turns)."""
    reply = await read_reply(learner.llm, _ask(learner, messages, quiz_instruction(question), QUIZ_MAX_TOKENS),
                             MAX_REPLY_CHARS)
    return read_answer(question, reply)


@dataclass(frozen=True)
class QuizAttempt:
    points: float
    max_points: int
    answers: dict[str, str]  # "scene/question" → what was typed

    @property
    def score(self) -> float | None:
        return self.points / self.max_points if self.max_points else None


async def take_quiz(learner: SimulatedLearner, lesson: Lesson, messages: Sequence[Message], grader: LLMClient, *,
                    language: str | None = None, prompts: PromptSet | None = None,
                    small: bool | None = None) -> QuizAttempt:
    """Every quiz question of ``lesson``, answered with ``messages`` as context and graded (a choice answer
    that names no option earns nothing; ``small``: the grader's model is a small one, see lessons/quiz.py)."""
    points, possible, typed = 0.0, 0, {}
    for scene in lesson.scenes:
        if not isinstance(scene, QuizScene):
            continue
        for question in scene.questions:
            text = await answer_question(learner, question, messages)
            typed[f"{scene.id}/{question.id}"] = text
            possible += question.points
            try:
                graded = await grade(question, text, grader, language=language, prompts=prompts, small=small)
            except AnswerNotUnderstood:
                continue
            points += graded.points
    return QuizAttempt(points, possible, typed)


class LearningGain(BaseModel):
    """A lesson's quiz taken before and after the lesson: the shares of points, and post − pre."""

    pre: float
    post: float
    gain: float

    @classmethod
    def of(cls, pre: float, post: float) -> LearningGain:
        return cls(pre=round(pre, 4), post=round(post, 4), gain=round(post - pre, 4))
