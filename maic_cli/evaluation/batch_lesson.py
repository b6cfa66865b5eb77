"""A ``maic run`` scenario that plays a lesson, scene by scene, as a learner would in a chat.

The scenario's ``lesson:`` names the file, the learner's questions (each interrupts the
lecture of a scene after some of its script steps, exactly as a key press does in a chat:
the lecture is cancelled between steps, the question is a round, the lecture resumes)
and the quiz answers.  Every real round — a question, a discussion scene's opening, a
slide lectured live — is a round of the run's report with its expectations; a scripted
lecture is not (no director chose anyone).  At the end the lesson's own expectations
(the scene it reached, the quiz score, who spoke in a discussion) are checked off the
event stream.

With a simulated learner in the seat (evaluation/batch_learner.py) the learner plays its own part:
after each slide it may ask a question (a round), it joins each discussion, and it answers
the quizzes itself (lessons/learner_quiz.py).  With ``lesson.pre_post`` it also takes every
quiz of the lesson before the lesson and again after it (neither attempt sees the other's
grading): the run's ``learning`` holds the two scores and the gain.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from ..engine.events import Event
from ..engine.learner import SimulatedLearner
from ..engine.round import RoundResult
from ..engine.runner import ClassRunner, RunnerHooks
from ..lessons.learner_quiz import LearningGain, answer_question, question_after, take_quiz
from ..lessons.lesson import Lesson, LessonPlay, QuizQuestion, QuizScene, SlideScene
from ..lessons.player import LessonPlayer
from ..lessons.quiz import AnswerNotUnderstood
from .expectations import Expectations, check_round
from .lesson_expect import LessonLog, check_lesson
from .metrics import RoundLog
from .run_results import RunResult
from .scenarios import LessonQuestion, LessonRun

Round = Callable[[], Awaitable[RoundResult]]


class _LessonWatch(RunnerHooks):
    """Feeds the lesson's events to its log; stops a lecture after a given step (a question)."""

    def __init__(self, player: LessonPlayer) -> None:
        self.player = player
        self.log = LessonLog()
        self.stop_at: int | None = None
        self.lecture: asyncio.Task[RoundResult] | None = None
        self.stopped = False  # the watch (not a Ctrl-C) stopped the lecture

    def event(self, event: Event) -> None:
        self.log.observe(event)

    def step_done(self, step: int) -> None:  # the player calls it right after each script step
        if self.lecture is not None and self.stop_at is not None and step >= self.stop_at:
            self.lecture.cancel()  # lands before the next step: the lecture ends "aborted"
            self.stop_at, self.stopped = None, True


class LessonRunner:
    """Plays ``lesson`` with the scenario's learner part; rounds and failures go into ``result``."""

    def __init__(self, runner: ClassRunner, lesson: Lesson, learner: LessonRun, result: RunResult,
                 round_log: Callable[[RoundLog], None], expect: Expectations,
                 simulated: SimulatedLearner | None = None) -> None:
        self.player = LessonPlayer(runner, LessonPlay(lesson=lesson))
        self.runner = runner
        self.simulated = simulated  # a simulated learner plays the learner's part (questions, quizzes)
        self.learner = learner
        self.result = result
        self.set_log = round_log  # where the run's hooks record the next round
        self.expect = expect  # the scenario's expectations for the learner's questions
        self.watch = _LessonWatch(self.player)
        runner.add_hook(self.watch)
        self.player.on_step = self.watch.step_done

    async def play(self) -> bool:
        """The whole lesson; ``False`` if a round failed with an error (the run stops there)."""
        player = self.player
        pre = await self._quiz_attempt(before=True)
        player.start()
        while True:
            if not await self._scene():
                return False
            if not player.next():
                break
        failures = check_lesson(self.learner.expect, self.watch.log, player.lesson)
        self.result.failures.extend(f"lesson: {failure}" for failure in failures)
        post = await self._quiz_attempt(before=False)
        if pre is not None and post is not None:
            self.result.learning = LearningGain.of(pre, post)
        return True

    async def _quiz_attempt(self, *, before: bool) -> float | None:
        """``lesson.pre_post``: the simulated learner takes every quiz of the lesson (before it: without
        its context); the share of points it earns (``None``: no attempt, or no quiz)."""
        if self.simulated is None or not self.learner.pre_post:
            return None
        messages = [] if before else self.runner.classroom.messages
        attempt = await take_quiz(self.simulated, self.player.lesson, messages, self.runner.llm,
                                  language=self.player.lesson.language or self.runner.config.language,
                                  prompts=self.runner.prompts, small=self.runner.spec.compact_prompts)
        return attempt.score

    async def _scene(self) -> bool:
        scene = self.player.scene
        questions = sorted((q for q in self.learner.questions if q.scene == scene.id), key=lambda q: q.after_step)
        if isinstance(scene, SlideScene):
            for question in questions:
                if question.after_step > self.player.progress.step and not self.player.lecture_done:
                    if not await self._lecture(until=question.after_step):
                        return False
                if not await self._question(question):
                    return False
            return await self._lecture() and await self._simulated_question(f"The slide {scene.title!r}")
        if isinstance(scene, QuizScene):
            if not await self._quiz(scene):
                return False
        elif not await self._round(None, Expectations(), self.player.discuss):
            return False
        elif not await self._simulated_question("The discussion's opening"):
            return False
        for question in questions:  # a quiz's or a discussion's questions come after it
            if not await self._question(question):
                return False
        return True

    async def _lecture(self, until: int | None = None) -> bool:
        if self.player.lecture_done:
            return True
        scene = self.player.scene
        if not (isinstance(scene, SlideScene) and scene.script):  # lectured live: a real round, in the report
            return await self._round(None, Expectations(), self.player.lecture)
        self.set_log(RoundLog(-1, None))  # a scripted lecture is not a round of the report
        if until is not None and until >= len(scene.script):
            until = None  # after the last step: the lecture ends by itself, there is nothing to stop
        self.watch.stop_at, self.watch.stopped = until, False
        self.watch.lecture = asyncio.ensure_future(self.player.lecture())
        try:
            played = await self.watch.lecture
        finally:
            self.watch.lecture, self.watch.stop_at = None, None
        if played.reason == "aborted" and not self.watch.stopped:
            raise asyncio.CancelledError  # a Ctrl-C stopped the lecture: stop this run too
        return played.reason != "error"

    async def _question(self, question: LessonQuestion) -> bool:
        return await self._round(question.text, self.expect.merged(question.expect),
                                 lambda: self.player.ask(question.text))

    async def _simulated_question(self, what: str) -> bool:
        """The simulated learner's question after a slide or in a discussion (none: nothing to do)."""
        if self.simulated is None:
            return True
        move = await question_after(self.simulated, self.runner.classroom.messages, what)
        if not move.text:
            return True
        text = move.text
        return await self._round(text, self.expect, lambda: self.player.ask(text))

    async def _quiz(self, scene: QuizScene) -> bool:
        learner = self.simulated
        if learner is not None:
            async def simulated(question: QuizQuestion) -> str:
                return await answer_question(learner, question, self.runner.classroom.messages)

            return await self._answer_quiz(scene, simulated, "the simulated learner's answer")
        if all(self.learner.answer(scene.id, q.id) is None for q in scene.questions):
            return True  # the scenario skips this quiz

        async def scripted(question: QuizQuestion) -> str:
            return self.learner.answer(scene.id, question.id) or ""

        return await self._answer_quiz(scene, scripted, "the answer")

    async def _answer_quiz(self, scene: QuizScene, answer: Callable[[QuizQuestion], Awaitable[str]],
                           whose: str) -> bool:
        """Every question of the quiz on screen, answered by ``answer``; an answer the quiz cannot
        read is a failure of the run, and the quiz is left there."""
        while (question := self.player.current_question()) is not None:
            text = await answer(question)
            try:
                await self.player.answer(question, text)
            except AnswerNotUnderstood as exc:
                self.result.failures.append(f"lesson: quiz {scene.id}: {whose} {text!r} to {question.id} "
                                            f"was not understood ({exc}); the quiz was left there")
                return True
        return True

    async def _round(self, text: str | None, expect: Expectations, play: Round) -> bool:
        index = len(self.result.rounds)
        log = RoundLog(index, text)
        self.set_log(log)
        played = await play()
        if played.reason == "aborted":  # the round absorbed a Ctrl-C: stop this run too
            raise asyncio.CancelledError
        failures = check_round(expect, log)
        self.result.failures.extend(f"round {index + 1}: {failure}" for failure in failures)
        self.result.rounds.append(log.summary(failures))
        if log.reason == "error":
            self.result.status, self.result.error = "error", log.error
            return False
        return True
