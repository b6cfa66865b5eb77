"""The interactive class: read learner lines, run rounds, save at every boundary.

:class:`ChatApp` is independent of where lines come from (prompt-toolkit on a
terminal, stdin in a pipe) and of how events are shown (live layout or plain
lines); ``maic chat`` wires those in.  Ctrl-C during a round cancels it (the
partial message is kept, marked interrupted, and saved); the session file is
written atomically after every learner message, round and lesson step, when it changed
(store/session.py ``SessionFile``).  Slash commands are one registry (chat/slash.py, ``COMMANDS``).  A save
that fails (unwritable folder, full disk) is said once; the class stays in
memory, the next turn tries again, and the file keeps its last good version.
A transcript that cannot be written is said once and recording stops; the
class goes on.  A lesson (``--lesson``, ``/lesson FILE`` or a resumed session that
holds one) is played by :class:`~.lesson.LessonChat` (chat/lesson.py), which takes the lines
that are its own (Enter, lesson commands, quiz answers).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..engine.events import Event, QuizAnswerEvent
from ..engine.models import AgentConfig, RoundOverrides
from ..engine.policies import DirectorPolicy
from ..engine.prompt_set import PromptSet
from ..engine.round import RoundResult, TurnClient
from ..engine.runner import ClassRunner, RunnerHooks, mentioned
from ..errors import MaicError
from ..lessons.lesson import LessonPlay
from ..llm.port import LLMClient
from ..llm.spec import ModelSpec
from ..signals import on_sigint
from ..store.lessons import load_lesson, resolve_lesson
from ..store.paths import open_private
from ..store.session import Session, SessionFile, save_session
from ..ui.export import classroom_to_markdown
from ..ui.lesson_notes import LessonNotes
from ..ui.view import View
from .lesson import KeyWatch, LessonChat, typed_text
from .line_input import MAX_LEARNER_CHARS, too_long
from .recording import GuardedRecorder
from .slash import SlashCommands

if TYPE_CHECKING:
    from .speaking import ClassVoice


@dataclass(frozen=True)
class Said:
    """A simulated learner's line (chat/watch.py): learner text for the class, never a command."""

    text: str


class ChatApp:
    def __init__(self, *, session: Session, path: Path, llm: LLMClient,
                 make_client: Callable[[ModelSpec], LLMClient], view: View, spec: ModelSpec | None = None,
                 recorder: GuardedRecorder | None = None, show_whiteboard: Callable[[], None] | None = None,
                 show_class: Callable[[], None] | None = None,
                 on_model_change: Callable[[ModelSpec], None] | None = None, prompts: PromptSet | None = None,
                 director: DirectorPolicy | None = None, pace: float | None = None,
                 keys: KeyWatch | None = None, voice: ClassVoice | None = None,
                 turns: TurnClient | None = None) -> None:
        """``llm`` serves the session's model (``spec``, as parsed where it was chosen; ``None``: parsed
        from ``llm.model``); ``make_client`` builds another after ``/model`` (so a
        switch keeps the chat's --api-base, --temperature and --structured).  ``pace`` (seconds per
        word of a scripted lecture) and ``keys`` (any key pauses a lecture) are for a lesson.  ``voice``: the class
        aloud (chat/speaking.py); with it a round lasts until it has been said, and a key stops it too."""
        self.session = session
        self.path = path
        self.file = SessionFile()  # what the file holds: a save with nothing new is skipped
        self.view = view
        self.recorder = recorder
        if recorder is not None:
            recorder.report = view.error
        self._make_client = make_client
        self.agents: dict[str, AgentConfig] = {a.id: a for a in session.agents}
        self.voice = voice  # after the view in the hooks: a sentence is shown, then said
        self.runner = ClassRunner(session.classroom, session.config, self._wrap(llm), agents=self.agents,
                                  profile=session.profile, spec=spec, prompts=prompts,
                                  hooks=[_ChatHooks(self), *([voice] if voice is not None else [])],
                                  director=director, turns=turns)
        self._show_whiteboard = show_whiteboard
        self._show_class = show_class
        self._on_model_change = on_model_change
        self.save_error: str | None = None  # why the last save failed; None once a save works
        self.last_result: RoundResult | None = None
        self.pace, self.keys = pace, keys
        self.typed = ""  # what a key that stopped a spoken round typed, for the next prompt
        self.lesson: LessonChat | None = None
        self.notes = LessonNotes()  # the lesson's scenes, pointers and answers seen in this chat, for /export

    def _wrap(self, llm: LLMClient) -> LLMClient:
        return self.recorder.wrap(llm) if self.recorder is not None else llm

    # -- persistence ------------------------------------------------------------------
    def save(self) -> None:
        """Save the session if it changed; a failure is reported once and retried at the next save."""
        content = self.file.unsaved(self.session)
        if content is None:
            return
        try:
            save_session(self.session, self.path)
        except OSError as exc:
            if self.save_error is None:
                self.view.error(f"{self.path}: cannot save the session ({exc.strerror or exc}); the class "
                                "stays in memory and saving is tried again after the next turn")
            self.save_error = exc.strerror or str(exc)
            return
        self.file.saved(content)
        if self.save_error is not None:
            self.save_error = None
            self.view.info(f"Session saved again to {self.path}")

    # -- rounds -------------------------------------------------------------------------
    async def _interruptible(self, play: Awaitable[RoundResult]) -> RoundResult:
        if self.voice is not None:
            from .speaking import then_spoken

            play = then_spoken(play, self.voice)  # the round, then until it has been said
        task = asyncio.ensure_future(play)
        with contextlib.ExitStack() as stack:
            stack.enter_context(on_sigint(task.cancel))  # Ctrl-C stops the round, not the program
            keys = stack.enter_context(self.keys(task.cancel)) \
                if self.voice is not None and self.keys is not None else []  # a key stops a spoken round too
            self.last_result = await task
        self.typed = typed_text(keys)
        return self.last_result

    async def play_round(self, trigger: str | None = None) -> RoundResult:
        return await self._interruptible(self.runner.play_round(trigger))

    # -- input ----------------------------------------------------------------------------
    async def handle_line(self, line: str) -> bool:
        """Act on one line of input; ``False`` means leave.  A line too long is refused, nothing of it run."""
        if (refusal := too_long(line)) is not None:
            self.view.error(refusal)
            return True
        text = line.strip()
        found = COMMANDS.find(text.partition(" ")[0]) if text.startswith("/") else None
        if found is not None and not found.lesson:  # the chat's own commands, also during a lesson
            return await COMMANDS.run(self, text) is not False
        if self.lesson is not None and await self.lesson.handle(text):
            return True
        if not text:
            return True
        if text.startswith("/"):
            if await COMMANDS.run(self, text) is None:
                self.view.error(f"unknown command {text.partition(' ')[0]}; /help lists the commands")
            return True
        mention = mentioned(text)
        if mention is not None and mention not in self.agents and self.lesson is not None \
                and self.lesson.element(mention):  # @ID: an element of the slide, not an agent
            await self.ask_about(text.strip()[1:])
            return True
        if mention is not None and mention not in self.agents:
            self.view.error(f"no agent '{mention}' in this class (try: {', '.join(self.agents)})")
            return True
        if self.lesson is not None:
            await self.lesson.ask(line.rstrip("\r\n"))
        else:
            await self._interruptible(self.runner.play(line.rstrip("\r\n")))
        return True

    async def say(self, text: str) -> None:
        """A simulated learner's line, as the batch runner hands it to the class: in a lesson, the answer to
        the quiz question that waits, else a question; else a round.  Never a slash command, a lesson step or
        a slide element's question, whatever it starts with.  Cut at :data:`MAX_LEARNER_CHARS`, with a note."""
        if len(text) > MAX_LEARNER_CHARS:
            self.view.info(f"the simulated learner's line was cut to {MAX_LEARNER_CHARS:,} characters")
            text = text[:MAX_LEARNER_CHARS]
        if self.lesson is not None:
            await self.lesson.say(text)
        else:
            await self._interruptible(self.runner.play(text))

    # -- lessons ----------------------------------------------------------------------------------
    async def ask_about(self, argument: str) -> None:
        """``/ask ID question`` (``@ID question``): a question about one element of the slide."""
        element, _, question = argument.partition(" ")
        if self.lesson is None:
            self.view.error("/ask: no lesson in this class; /lesson NAME opens one (maic lesson list)")
        elif not element:
            self.view.error("usage: /ask ID QUESTION (ID: an element of the slide, shown in [brackets])")
        else:
            await self.lesson.ask(question.strip(), about=element)

    def _lesson_result(self, result: RoundResult) -> None:
        self.last_result = result

    def take_typed(self) -> str:
        """What the key that paused a lecture typed (once), to start the next prompt with."""
        typed, self.typed = self.typed, ""
        if self.lesson is not None:
            typed, self.lesson.typed = typed + self.lesson.typed, ""
        return typed

    async def start_lesson(self) -> None:
        """Open the session's lesson (``--lesson``, ``/lesson`` or a resumed session) where it stopped."""
        if self.session.lesson is not None:
            self.lesson = LessonChat(self.runner, self.view, self.session.lesson, pace=self.pace, keys=self.keys,
                                     on_result=self._lesson_result, voice=self.voice)
            seen = {(n.scene_id, n.question_id) for _, n in self.notes.notes if isinstance(n, QuizAnswerEvent)}
            for event in self.lesson.player.answered():  # given before this chat began: /export keeps them
                if (event.scene_id, event.question_id) not in seen:
                    self.notes.record(self.session.classroom, event)
            await self.lesson.open()

    async def open_lesson_file(self, argument: str) -> None:
        """``/lesson FILE``: a file that cannot be used is one line, and the class goes on."""
        if not argument:
            self.view.error("usage: /lesson NAME or /lesson FILE (maic lesson list names them)")
            return
        play = self._load_lesson(argument)
        if play is None:
            return
        current = self.session.lesson
        if current is not None and current.lesson == play.lesson:
            self.view.info("This lesson is already open: it goes on where it stopped.")
        else:
            if current is not None:
                self.view.info(f"The lesson {current.lesson.title!r} is replaced (its answers stay in the "
                               "transcript); the class stays as it is.")
            self.session.lesson = play
        await self.start_lesson()

    def _load_lesson(self, argument: str) -> LessonPlay | None:
        try:
            return LessonPlay(lesson=load_lesson(resolve_lesson(argument)), source=argument)
        except MaicError as exc:
            self.view.error(str(exc))
            return None

    def _save_as(self, target: Path) -> None:
        try:
            if target != self.path:
                save_session(self.session, target)
            elif (content := self.file.unsaved(self.session)) is not None:  # else the file is current
                save_session(self.session, target)
                self.file.saved(content)
        except OSError as exc:
            self.view.error(f"{target}: cannot save: {exc.strerror or exc}")
            return
        self.view.info(f"Saved to {target}")

    def _export(self, argument: str) -> None:
        if not argument:
            self.view.error("usage: /export FILE.md")
            return
        target = Path(argument).expanduser()
        markdown = classroom_to_markdown(self.session.classroom, self.agents,
                                         learner=self.session.profile.nickname,
                                         meta={"model": self.session.model, "session": str(self.path)},
                                         notes=self.notes)
        try:
            with open_private(target, "w") as handle:
                handle.write(markdown)
        except OSError as exc:
            self.view.error(f"{target}: cannot write: {exc.strerror or exc}")
            return
        self.view.info(f"Exported to {target}")

    def _model(self, argument: str) -> None:
        if not argument:
            self.view.info(f"Model: {self.session.model}")
            return
        spec = ModelSpec.parse(argument)  # the one parse of a /model switch
        try:
            self.runner.set_llm(self._wrap(self._make_client(spec)), spec)
        except MaicError as exc:
            self.view.error(str(exc))
            return
        self.session.model = argument
        self.save()
        if self._on_model_change is not None:
            self._on_model_change(spec)
        self.view.info(f"Model switched to {argument}")

    async def run(self, read_line: Callable[[], Awaitable[str | Said | None]]) -> None:
        """The main loop; returns when input ends or the learner quits.  A typed line may be a command; a
        simulated learner's (:class:`Said`) is learner text only (:meth:`say`)."""
        if self.session.lesson is not None:
            await self.start_lesson()
        elif self.runner.opens_discussion:
            await self.play_round(self.session.config.initiator_id)  # the initiator opens the discussion
        while True:
            try:
                line = await read_line()
            except (EOFError, KeyboardInterrupt):
                line = None
            if isinstance(line, Said):
                await self.say(line.text)
            elif line is None or not await self.handle_line(line):
                break
        self.save()


# -- the slash commands (chat/slash.py): /help lists them in this order ---------------------------------
COMMANDS = SlashCommands()


@COMMANDS.command("/help", "show the commands")
def _help(app: ChatApp, argument: str) -> None:
    app.view.info(COMMANDS.help_text() + "\n  @id message  let that agent answer first (or open with a name: Sam, …)")


@COMMANDS.command("/class", "list the agents in this class")
def _class(app: ChatApp, argument: str) -> None:
    if app._show_class is not None:
        app._show_class()
    else:
        app.view.info("\n".join(f"  {a.id:<16} {a.name} ({a.role})" for a in app.agents.values()))


@COMMANDS.command("/whiteboard", "show the whole whiteboard")
def _whiteboard(app: ChatApp, argument: str) -> None:
    if app._show_whiteboard is not None:
        app._show_whiteboard()


@COMMANDS.command("/save", "/save [FILE] — save the session now (or a copy to FILE)")
def _save(app: ChatApp, argument: str) -> None:
    app._save_as(Path(argument).expanduser() if argument else app.path)


@COMMANDS.command("/export", "/export FILE.md — write the class as Markdown")
def _export(app: ChatApp, argument: str) -> None:
    app._export(argument)


@COMMANDS.command("/model", "/model [NAME] — show or switch the model")
def _model(app: ChatApp, argument: str) -> None:
    app._model(argument)


@COMMANDS.command("/lesson", "/lesson NAME|FILE — open a lesson and play it (maic lesson list names them)")
async def _lesson(app: ChatApp, argument: str) -> None:
    await app.open_lesson_file(argument)


@COMMANDS.command("/ask", "/ask ID QUESTION — ask about one element of the slide (@ID QUESTION too)")
async def _ask(app: ChatApp, argument: str) -> None:
    await app.ask_about(argument)


def _no_lesson(name: str) -> Callable[[ChatApp, str], None]:
    def answer(app: ChatApp, argument: str) -> None:
        app.view.error(f"{name}: no lesson in this class; /lesson NAME opens one (maic lesson list)")
    return answer


for _name, _help_line in (("/continue", "go on with the lesson (Enter does it too)"),
                          ("/next", "the lesson's next scene"), ("/prev", "the lesson's previous scene"),
                          ("/slide", "/slide N — go to slide N of the lesson"),
                          ("/outline", "list the lesson's scenes")):  # an open lesson takes these first
    COMMANDS.command(_name, _help_line, lesson=True)(_no_lesson(_name))


@COMMANDS.command("/quit", "save and leave", aliases=("/exit", "/q"))
def _quit(app: ChatApp, argument: str) -> bool:
    return False


class _ChatHooks(RunnerHooks):
    """The chat's view, transcript and session file, as the runner's hooks."""

    def __init__(self, app: ChatApp) -> None:
        self.app = app

    def learner(self, text: str) -> None:
        if self.app.recorder is not None:
            self.app.recorder.learner(text)

    def round_started(self, trigger: str | None, overrides: RoundOverrides | None = None) -> None:
        self.app.view.round_started()
        if self.app.recorder is not None:
            self.app.recorder.round_started(trigger, overrides)

    def lecture_started(self, trigger: str | None) -> None:
        self.app.view.round_started()
        if self.app.recorder is not None:
            self.app.recorder.lecture_started(trigger)

    def event(self, event: Event) -> None:
        self.app.view.on_event(event)
        self.app.notes.record(self.app.session.classroom, event)  # for /export
        if self.app.recorder is not None:
            self.app.recorder.event(event)

    def round_finished(self, result: RoundResult) -> None:
        self.app.view.round_finished(result)  # always, also when the round raised: the terminal comes back
        if self.app.recorder is not None:
            self.app.recorder.round_finished(result.reason, result.error)

    def save(self) -> None:
        self.app.save()
