"""The lesson player: walks a lesson's scenes through a :class:`~maic_cli.engine.runner.ClassRunner`.

Pure engine (no files, no terminal): every change is an event that goes through the
runner's hooks, so the view, the transcript and the classroom see it as they see a
round, and the progress (``LessonPlay.progress``, kept in the session) is saved when a
scene is entered, a lecture ends or stops, a discussion round ends and a quiz answer is
graded.  The caller (``maic chat``, ``maic run``) decides when to call what:

* :meth:`LessonPlayer.start` opens the lesson (a ``lesson`` event, then a ``scene`` event
  for the current scene) — also when a saved session resumes it.
* :meth:`~LessonPlayer.lecture` plays the current slide.  A slide with a script is said by
  the lesson's teacher (the first agent whose role is teacher, else the first agent), and a step
  with ``by:`` by that classmate, in its own card (lessons/script.py): a
  ``say`` step streams in word-sized chunks (``pace`` seconds apart; none by default), a
  ``spotlight``/``laser`` step is an ``action`` event, and ``progress.step`` moves on after
  each step (saved when the lecture ends or stops).  One lecture is one message per run of one
  speaker's steps (a teacher-only script: one teacher message).  A slide without a script
  is lectured live: one round where the teacher speaks first with the lecture instruction in
  the prompt, capped at one agent turn (a lecture is the teacher's; the students' turn comes
  when the learner asks, and the cap keeps an unattended lecture from running on).
* Interrupting a lecture (cancelling it: Ctrl-C, a key) ends it ``aborted``: the half-said
  message is kept and marked interrupted, ``progress.step`` stays at the step that was not
  finished and the state is ``paused``; resuming says that step again, whole, in a new message.
* :meth:`~LessonPlayer.ask` — the learner's message is a normal round, with the lesson, the
  scene and the slide in the agent and director prompts (the runner's
  :meth:`~maic_cli.engine.runner.ClassRunner.enter_scene`: the round's context, never saved).
* :meth:`~LessonPlayer.next`, :meth:`~LessonPlayer.prev`, :meth:`~LessonPlayer.goto_slide`,
  :meth:`~LessonPlayer.advance` (what Enter does), :meth:`~LessonPlayer.outline`.
* A discussion scene: :meth:`~LessonPlayer.discuss` plays its script first (the classmates'
  opening lines and the teacher's answers, one card per speaker, ``progress.step`` as in a lecture),
  then opens one live round with its topic, prompt and initiator (the config change holds for that
  round only; the class is back to Q&A), and the learner is asked in.  Interrupted in its script, the
  discussion resumes at the step; interrupted in its round, the round is played again.
* A quiz scene: :meth:`~LessonPlayer.current_question`, then :meth:`~LessonPlayer.answer`
  (graded by ``lessons/quiz.py``) for each; the last answer also emits the quiz's score.

``progress.step`` of a slide without a script is 0 before its live lecture and 1 after it; of a
discussion, the next step of its script.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass

from ..engine.events import Event, LessonEvent, QuizAnswerEvent, QuizScoreEvent, SceneEvent
from ..engine.models import AgentConfig, LessonContext, RoundOverrides, default_initiator
from ..engine.round import RoundResult
from ..engine.runner import ClassRunner
from ..errors import InputError
from .context import LessonTask, lesson_context, quiz_lines, scene_kind, scene_position, scene_title
from .lesson import (
    DiscussionScene,
    Lesson,
    LessonPlay,
    LessonProgress,
    QuizAnswer,
    QuizQuestion,
    QuizScene,
    Scene,
    SceneKind,
    ScriptStep,
    SlideScene,
)
from .quiz import grade
from .script import script_events

LIVE_LECTURE_TURNS = 1


class LessonNavigationError(InputError):
    """A move the lesson cannot make (a slide that does not exist, a quiz answer off the quiz)."""


@dataclass(frozen=True)
class OutlineEntry:
    number: int  # 1-based scene number
    kind: SceneKind
    title: str
    slide: int | None  # 1-based slide number (slide scenes)
    current: bool
    done: bool  # lectured, discussed, or every question answered


class LessonPlayer:
    def __init__(self, runner: ClassRunner, play: LessonPlay, *, pace: float | None = None) -> None:
        self.runner = runner
        self.play = play
        self.pace = pace  # seconds between the words of scripted speech
        # Called right after each script step with the new step (``maic run`` stops a lecture there to
        # ask a scenario's question); a cancel it starts lands before the next step.
        self.on_step: Callable[[int], None] | None = None
        # Awaited before a spotlight or laser step and at the script's end (``maic chat --voice``: until the
        # speech before it has been heard), so a lecture read aloud is paced by its audio.
        self.wait_spoken: Callable[[], Awaitable[None]] | None = None

    # -- where we are -----------------------------------------------------------------------------
    @property
    def lesson(self) -> Lesson:
        return self.play.lesson

    @property
    def progress(self) -> LessonProgress:
        return self.play.progress

    @property
    def scene(self) -> Scene:
        return self.lesson.scenes[self.progress.scene]

    @property
    def finished(self) -> bool:
        return self.progress.state == "finished"

    @property
    def teacher(self) -> AgentConfig:
        """Who lectures: the first agent of the class whose role is teacher, else the first agent."""
        agents = self.runner.members()
        if not agents:
            raise LessonNavigationError("the class has no agents to teach the lesson")
        return next((a for a in agents if a.role == "teacher"), agents[0])

    @property
    def lecture_done(self) -> bool:
        """The current slide has been lectured to its end (other scenes: always)."""
        scene = self.scene
        if not isinstance(scene, SlideScene):
            return True
        return self.progress.step >= max(1, len(scene.script))

    def scene_done(self, index: int) -> bool:
        scene = self.lesson.scenes[index]
        if isinstance(scene, SlideScene):
            return scene.id in self.progress.lectured or (index == self.progress.scene and self.lecture_done)
        if isinstance(scene, DiscussionScene):
            return scene.id in self.progress.discussed
        return all(self._answer(scene, q) is not None for q in scene.questions)

    def position(self) -> str:
        return scene_position(self.play)

    def context(self, task: LessonTask = "question") -> LessonContext:
        """The lesson as the prompts see it, for ``task`` (question, lecture, discuss)."""
        return lesson_context(self.play, task)

    def outline(self) -> list[OutlineEntry]:
        return [OutlineEntry(number=i + 1, kind=scene_kind(scene), title=scene_title(scene),
                             slide=None if (n := self.lesson.slide_number(i)) is None else n + 1,
                             current=i == self.progress.scene, done=self.scene_done(i))
                for i, scene in enumerate(self.lesson.scenes)]

    # -- moving -------------------------------------------------------------------------------------
    def start(self) -> None:
        """Open the lesson (its slides replace the class's) at the saved scene and step."""
        self.runner.emit(LessonEvent(title=self.lesson.title, slides=self.lesson.slides(),
                                     scenes=len(self.lesson.scenes)))
        self._enter(self.progress.scene, self.progress.step, keep_state=True)

    def _enter(self, index: int, step: int = 0, keep_state: bool = False) -> None:
        progress = self.progress
        progress.scene, progress.step = index, step
        scene = self.scene
        if not keep_state or progress.state not in ("paused", "finished"):
            progress.state = "quiz" if isinstance(scene, QuizScene) else "lecture"
        self.runner.emit(SceneEvent(index=index, scene_id=scene.id, kind=scene_kind(scene), title=scene_title(scene),
                                    slide=self.lesson.slide_number(index)))
        self.runner.enter_scene(self.context())
        self.runner.save()

    def next(self) -> bool:
        """To the next scene; ``False`` (and the lesson finished) after the last one."""
        if self.progress.scene + 1 >= len(self.lesson.scenes):
            self.progress.state = "finished"
            self.runner.save()
            return False
        self._enter(self.progress.scene + 1)
        return True

    def prev(self) -> bool:
        """To the previous scene; ``False`` at the first one."""
        if self.progress.scene == 0:
            return False
        self._enter(self.progress.scene - 1)
        return True

    def goto_slide(self, number: int) -> None:
        """To the ``number``-th slide (1-based, counting slides only); its lecture starts over."""
        count = len(self.lesson.slides())
        if count == 0:
            raise LessonNavigationError("this lesson has no slides (/outline lists its scenes)")
        index = self.lesson.scene_of_slide(number - 1) if number >= 1 else None
        if index is None:
            raise LessonNavigationError(f"no slide {number}: this lesson has {count} slide"
                                        f"{'s' if count != 1 else ''} (1–{count})")
        self._enter(index)

    async def play_scene(self) -> RoundResult | None:
        """Play what the current scene still has to play: a slide's lecture, a discussion's opening
        round; ``None`` when there is nothing (a quiz: the caller asks its questions)."""
        scene = self.scene
        if isinstance(scene, SlideScene) and not self.lecture_done:
            return await self.lecture()
        if isinstance(scene, DiscussionScene) and scene.id not in self.progress.discussed:
            return await self.discuss()
        return None

    async def advance(self) -> RoundResult | None:
        """What Enter does: finish the current scene if it is not done, else go on to the next one
        and play it (``None`` at the end of the lesson, or at a quiz)."""
        if self.finished:
            return None
        if not self.scene_done(self.progress.scene):
            if isinstance(self.scene, QuizScene):
                return None  # the quiz is answered question by question
            return await self.play_scene()
        if not self.next():
            return None
        return await self.play_scene()

    # -- the lecture -------------------------------------------------------------------------------------
    async def lecture(self) -> RoundResult:
        """Lecture the current slide from ``progress.step`` (see the module for interruption)."""
        scene = self.scene
        if not isinstance(scene, SlideScene):
            raise LessonNavigationError(f"{self.position()} is not a slide: there is no lecture to play")
        if self.lecture_done:
            return RoundResult(reason="end")
        self.progress.state = "lecture"
        teacher = self.teacher
        if scene.script:
            result = await self.runner.play_scripted(self._script_events(scene.script, teacher),
                                                   trigger=teacher.id)
        else:
            if self.runner.spec.compact_prompts:  # a small model reads the slide out (lessons/reading.py)
                from .reading import read_slide

                result = await read_slide(self, scene, teacher)
            else:
                overrides = RoundOverrides(max_turns=LIVE_LECTURE_TURNS, lesson=self.context("lecture"))
                result = await self.runner.play_round(teacher.id, overrides=overrides, fresh=True)
            if result.reason not in ("aborted", "error"):
                self.progress.step = 1
        if result.reason == "aborted":
            self.progress.state = "paused"
        if self.lecture_done and scene.id not in self.progress.lectured:
            self.progress.lectured.append(scene.id)
        self.runner.save()
        return result

    def _script_events(self, script: list[ScriptStep], teacher: AgentConfig) -> AsyncGenerator[Event, None]:
        """The rest of a scene's script from ``progress.step``, each speaker in its own card
        (lessons/script.py); the step moves on right after its last event, with no pause in between,
        so a cancel falls between steps or inside a ``say`` (which is then said again on resume).
        Nothing is saved per step: the lecture (or discussion) is saved when it ends or stops, so a
        file killed mid-script holds the state before it (the script plays again from there, its
        partial message not yet in the classroom)."""
        return script_events(script, self.progress, teacher, self.runner.members(), pace=self.pace,
                             on_step=self.on_step, wait_spoken=self.wait_spoken)

    # -- the learner, discussions -------------------------------------------------------------------------
    async def ask(self, text: str, *, about: str | None = None) -> RoundResult:
        """The learner's message, answered from the lesson (lessons/ask.py); ``about``: a slide element
        id (``/ask ID``), spotlighted and given whole.  A lecture under way pauses."""
        from .ask import ask_about, ask_grounded, slide_element

        if about is not None:
            slide_element(self, about)  # an unknown id is refused before anything changes
        if isinstance(self.scene, SlideScene) and not self.lecture_done and self.progress.state == "lecture":
            self.progress.state = "paused"
        if about is not None:
            return await ask_about(self, about, text)
        return await ask_grounded(self, text)

    async def discuss(self) -> RoundResult:
        """The discussion scene: its script from ``progress.step`` (one card per speaker), then the
        round opened by its initiator (or the class's first student); see the module."""
        scene = self.scene
        if not isinstance(scene, DiscussionScene):
            raise LessonNavigationError(f"{self.position()} is not a discussion")
        self.progress.state = "lecture"  # under way again (a paused discussion goes on)
        said: RoundResult | None = None
        if self.progress.step < len(scene.script):
            teacher = self.teacher
            said = await self.runner.play_scripted(self._script_events(scene.script, teacher), trigger=teacher.id)
            if said.reason == "aborted":
                self.progress.state = "paused"
                self.runner.save()
                return said
        members = self.runner.members()
        initiator = scene.initiator if scene.initiator in {a.id for a in members} else None
        if initiator is None:
            initiator = default_initiator(members)
        if self.runner.spec.compact_prompts:  # a small model: no open-ended live round, the learner is asked in
            return await self._open_small(scene, initiator, said)
        overrides = RoundOverrides(discussion_topic=scene.topic, discussion_prompt=scene.prompt,
                                   initiator_id=initiator, lesson=self.context("discuss"))
        result = await self.runner.play_round(initiator, overrides=overrides, fresh=True)
        if result.reason == "aborted":
            self.progress.state = "paused"
        if result.speakers and result.reason != "aborted" and scene.id not in self.progress.discussed:
            self.progress.discussed.append(scene.id)
        self.runner.save()
        return result

    async def _open_small(self, scene: DiscussionScene, initiator: str | None,
                          said: RoundResult | None) -> RoundResult:
        """A discussion on a small model: its script was its opening; without one, the initiator says its prompt
        (or topic).  The learner's reply then gets one answer and the closing (lessons/expected.py)."""
        if scene.script:
            result = said or RoundResult(reason="cue_user")
        else:
            opening = ScriptStep(say=scene.prompt or scene.topic, by=initiator)
            mark = LessonProgress()
            result = await self.runner.play_scripted(script_events([opening], mark, self.teacher, self.runner.members(),
                                                                   pace=self.pace), trigger=initiator)
        if result.reason != "aborted" and scene.id not in self.progress.discussed:
            self.progress.discussed.append(scene.id)
        self.runner.save()
        return result

    # -- quizzes ------------------------------------------------------------------------------------------
    def _answer(self, scene: QuizScene, question: QuizQuestion) -> QuizAnswer | None:
        return self.progress.answers.get(f"{scene.id}/{question.id}")

    def current_question(self) -> QuizQuestion | None:
        """The current quiz's first question not answered yet (``None``: not a quiz, or all answered)."""
        scene = self.scene
        if not isinstance(scene, QuizScene):
            return None
        return next((q for q in scene.questions if self._answer(scene, q) is None), None)

    def quiz_score(self) -> tuple[float, int]:
        """(points, possible points) of the current quiz's answers."""
        scene = self.scene
        if not isinstance(scene, QuizScene):
            return 0.0, 0
        answers = [a for q in scene.questions if (a := self._answer(scene, q)) is not None]
        return sum(a.points for a in answers), scene.max_points

    def quiz_lines(self) -> list[str]:
        return quiz_lines(self.play)

    async def answer(self, question: QuizQuestion, text: str) -> QuizAnswer:
        """Grade the learner's answer to ``question`` of the current quiz, keep it, emit it (and the
        quiz's score after its last question).  A choice answer that names no option raises
        :class:`~.quiz.AnswerNotUnderstood` (ask again); a short answer the model cannot grade is
        kept ungraded (``graded_by="none"``)."""
        scene = self.scene
        if not isinstance(scene, QuizScene) or question not in scene.questions:
            raise LessonNavigationError("that question is not part of the current quiz")
        language = self.lesson.language or self.runner.config.language
        graded = await grade(question, text, self.runner.llm, language=language, prompts=self.runner.prompts,
                             small=self.runner.spec.compact_prompts)
        self.progress.answers[f"{scene.id}/{question.id}"] = graded
        self.runner.emit(answer_event(scene, question, graded))
        if self.current_question() is None:
            points, possible = self.quiz_score()
            earned, total = self.progress.score()
            self.runner.emit(QuizScoreEvent(scene_id=scene.id, points=points, max_points=possible,
                                            lesson_points=earned, lesson_max_points=total))
        self.runner.enter_scene(self.context())
        self.runner.save()
        return graded

    def answered(self) -> list[QuizAnswerEvent]:
        """The answers given so far, as the events that showed them (for an export after a resume)."""
        return [answer_event(scene, question, answer) for scene in self.lesson.scenes if isinstance(scene, QuizScene)
                for question in scene.questions if (answer := self._answer(scene, question)) is not None]


def answer_event(scene: QuizScene, question: QuizQuestion, graded: QuizAnswer) -> QuizAnswerEvent:
    return QuizAnswerEvent(scene_id=scene.id, question_id=question.id, question=question.question,
                           options=list(question.options), answer=graded.answer, chosen=graded.chosen,
                           key=list(question.answer), points=graded.points, max_points=graded.max_points,
                           correct=graded.correct, comment=graded.comment, graded_by=graded.graded_by,
                           explanation=question.explanation)
