"""A lesson inside ``maic chat``: the lecture, the learner's questions, quizzes, navigation.

:class:`LessonChat` drives the engine's :class:`~maic_cli.lessons.player.LessonPlayer` from
the learner's lines.  An empty line (or ``/continue``) goes on: it resumes a paused lecture,
or moves to the next scene and plays it (a slide is lectured, a discussion opened, a quiz
asked); ``/next``, ``/prev``, ``/slide N`` move; ``/outline`` lists the scenes; ``/ask ID question``
(or ``@ID question``) asks about one element of the slide.  While a quiz
question waits, a line is its answer.  Any other line is a question to the class (a normal
round, with the slide in the prompts), handled by the chat as usual.

A lecture can be interrupted: Ctrl-C, and on a terminal any key (``watch_keys``), cancel it;
the player keeps the half-said step for ``/continue`` and the prompt comes back (the key
typed is handed to it, so the question can go on from there).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import Awaitable, Callable, Iterator
from typing import IO, TYPE_CHECKING, TypeVar

from ..engine.round import RoundResult
from ..engine.runner import ClassRunner
from ..lessons.ask import ElementNotOnSlide, element_ids
from ..lessons.lesson import LessonPlay, QuizQuestion, QuizScene
from ..lessons.player import LessonNavigationError, LessonPlayer
from ..lessons.quiz import AnswerNotUnderstood
from ..signals import on_sigint
from ..ui.lesson_view import hint_after, outline_lines, question_block, scene_heading
from ..ui.view import View

if TYPE_CHECKING:
    from .speaking import ClassVoice

try:
    import termios
    import tty
except ImportError:  # Windows: Ctrl-C only
    termios = None  # type: ignore[assignment]

T = TypeVar("T")
KeyWatch = Callable[[Callable[[], object]], contextlib.AbstractContextManager[list[str]]]


@contextlib.contextmanager
def watch_keys(on_key: Callable[[], object], stream: IO[str] | None = None) -> Iterator[list[str]]:
    """While inside, a key pressed on the terminal calls ``on_key`` (keys one by one, no echo);
    the list it yields collects what was typed.  Not a terminal (or no termios): nothing happens."""
    typed: list[str] = []
    source = stream or sys.stdin
    isatty = getattr(source, "isatty", None)
    if termios is None or isatty is None or not isatty():
        yield typed
        return
    fd = source.fileno()
    loop = asyncio.get_running_loop()
    saved = termios.tcgetattr(fd)

    def ready() -> None:
        with contextlib.suppress(OSError):
            typed.append(os.read(fd, 64).decode("utf-8", errors="ignore"))
        on_key()

    tty.setcbreak(fd, termios.TCSANOW)
    loop.add_reader(fd, ready)
    try:
        yield typed
    finally:
        loop.remove_reader(fd)
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)


def typed_text(keys: list[str]) -> str:
    """What a key press typed, if it is text (not Enter, an arrow or a control key)."""
    text = "".join(keys)
    return text if text.isprintable() else ""


class LessonChat:
    def __init__(self, runner: ClassRunner, view: View, play: LessonPlay, *, pace: float | None = None,
                 keys: KeyWatch | None = None, on_result: Callable[[RoundResult], None] = lambda result: None,
                 voice: ClassVoice | None = None) -> None:
        """``on_result`` is told how each round and lecture ended (the chat's exit code follows it).  ``voice``:
        the class aloud; a scripted lecture is paced by it, and everything run here lasts until it is said."""
        self.view = view
        self.on_result = on_result
        self.player = LessonPlayer(runner, play, pace=pace)
        self.voice = voice
        if voice is not None:
            self.player.wait_spoken = voice.wait_spoken  # a spotlight waits for the sentence before it
        self.keys = keys  # None: only Ctrl-C interrupts a lecture
        self.typed = ""  # what a key that paused the lecture typed, for the next prompt

    # -- running things that can be interrupted ----------------------------------------------------------
    async def _run(self, work: Awaitable[T], *, lecture: bool = False) -> T | None:
        """``work`` as a task that Ctrl-C (and, for a lecture, any key) cancels; ``None`` if it was."""
        if self.voice is not None:
            from .speaking import then_spoken

            work = then_spoken(work, self.voice)
        task = asyncio.ensure_future(work)
        with contextlib.ExitStack() as stack:
            stack.enter_context(on_sigint(task.cancel))
            watched = lecture or self.voice is not None  # a key stops a lecture, and anything said aloud
            keys = stack.enter_context(self.keys(task.cancel)) if watched and self.keys is not None else []
            try:
                result = await task
            except asyncio.CancelledError:
                if not task.cancelled():
                    raise
                result = None
        self.typed = typed_text(keys)
        if isinstance(result, RoundResult):
            self.on_result(result)
        return result

    # -- what the learner sees -------------------------------------------------------------------------
    def heading(self) -> None:
        """A quiz says how long it is; a slide or discussion is announced by the view (its scene event)."""
        if isinstance(self.player.scene, QuizScene):
            self.view.info(scene_heading(self.player))

    def hint(self) -> None:
        text = hint_after(self.player)
        if text:
            self.view.info(text)

    def show_question(self) -> None:
        scene, question = self.player.scene, self.player.current_question()
        if not isinstance(scene, QuizScene):
            return
        if question is None:
            self.show_score()
            return
        number = scene.questions.index(question) + 1
        self.view.block(*question_block(question, number, len(scene.questions)))

    def show_score(self) -> None:
        """The score itself is shown by the view (the quiz_score event); say what comes next."""
        self.view.info("Ask the class about any answer, or press Enter to go on.")

    # -- the lesson -------------------------------------------------------------------------------------
    async def open(self) -> None:
        """Open (or resume) the lesson at its saved place; a lecture under way goes on."""
        self.player.start()
        source = self.player.play.source
        self.view.info(f"Lesson: {self.player.lesson.title}" + (f" ({source})" if source else "")
                       + f" — {len(self.player.lesson.scenes)} scenes. /outline lists them; Enter goes on.")
        self.heading()
        if self.player.progress.state in ("paused", "finished"):
            self.hint()
            return
        await self.play_scene()

    async def play_scene(self) -> None:
        if isinstance(self.player.scene, QuizScene):
            self.show_question()
            return
        await self._run(self.player.play_scene(), lecture=True)
        self.hint()

    async def go_on(self) -> None:
        """Enter or ``/continue``: finish this scene, else on to the next one."""
        player = self.player
        if player.current_question() is not None:
            self.show_question()
            return
        before = player.progress.scene
        await self._run(player.advance(), lecture=True)  # the player decides: finish this scene, or the next
        if isinstance(player.scene, QuizScene) and not player.finished:
            if player.progress.scene != before:
                self.heading()
            self.show_question()
        else:
            self.hint()

    async def move(self, moved: bool, refused: str) -> None:
        if not moved:
            self.view.info(refused)
            return
        self.heading()
        await self.play_scene()

    async def answer(self, question: QuizQuestion, text: str) -> None:
        try:
            graded = await self._run(self.player.answer(question, text))
        except AnswerNotUnderstood as exc:
            self.view.info(str(exc))
            return
        if graded is None:
            self.view.info("Grading was stopped; answer the question again.")
            return
        self.show_question()  # the grade itself is shown by the view, as the quiz_answer event

    async def ask(self, text: str, about: str | None = None) -> None:
        """A question to the class, with the lesson in the prompts (``about``: a slide element's id)."""
        try:
            await self._run(self.player.ask(text, about=about))
        except ElementNotOnSlide as exc:
            self.view.error(str(exc))
            return
        if self.player.progress.state == "paused":
            self.hint()

    async def say(self, text: str) -> None:
        """A simulated learner's line: the answer to the question that waits, else a question to the class
        (never a lesson command, whatever it starts with)."""
        question = self.player.current_question()
        if question is not None:
            await self.answer(question, text)
        else:
            await self.ask(text)

    def element(self, name: str) -> bool:
        """``name`` is an element of the slide on screen (``@ID question`` asks about it)."""
        return name in element_ids(self.player)

    async def handle(self, text: str) -> bool:
        """Act on a line if it is the lesson's (Enter, a lesson command, a quiz answer); ``False``
        leaves it to the chat (a question, another command)."""
        name, _, argument = text.partition(" ")
        if not text or name == "/continue":
            await self.go_on()
        elif name == "/outline":
            self.view.block(f"Outline: {self.player.lesson.title}", outline_lines(self.player.outline()))
        elif name == "/next":
            await self.move(self.player.next(), "That was the last scene: the lesson is finished.")
        elif name == "/prev":
            await self.move(self.player.prev(), "This is the first scene of the lesson.")
        elif name == "/slide":
            await self.goto(argument.strip())
        elif not text.startswith("/") and (question := self.player.current_question()) is not None:
            await self.answer(question, text)
        else:
            return False
        return True

    async def goto(self, argument: str) -> None:
        if not (argument.isascii() and argument.isdigit()):
            self.view.error("usage: /slide N (N counts the slides from 1; /outline lists them)")
            return
        if len(argument.lstrip("0")) > 9:  # thousands of digits: out of range (int() would refuse it)
            self.view.error(f"no slide {argument[:12]}…: out of range (/outline lists the scenes)")
            return
        try:
            self.player.goto_slide(int(argument))
        except LessonNavigationError as exc:
            self.view.error(str(exc))
            return
        await self.move(True, "")
