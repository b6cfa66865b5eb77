"""Wiring for one ``maic chat`` run: the model, the transcript, the view, the input, the loop.

A transcript path read from a session file is used only inside maic's folders (beside the
session, or under ``$MAIC_HOME/transcripts``) and only for a ``.jsonl`` file; anything else
is replaced by the default with a note.  ``--transcript`` typed by the user goes anywhere.
"""

from __future__ import annotations

import functools
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..engine.policies import DirectorPolicy, choose_policy
from ..engine.prompt_set import PromptSet
from ..errors import InputError, MaicError, SessionError
from ..llm.factory import make_llm
from ..llm.port import LLMClient
from ..llm.spec import ModelSpec
from ..store.paths import maic_home
from ..store.session import Session, save_session
from ..store.transcript import TranscriptHeader, TranscriptWriter
from ..ui.plain import PlainView
from ..ui.text import color_or_default
from ..ui.view import View
from ..ui.views import ScreenState, render_header
from ..ui.whiteboard_view import render_slide, render_whiteboard
from ..untrusted import clean
from .lesson import watch_keys
from .line_input import MAX_LEARNER_CHARS, LineReader
from .loop import COMMANDS, ChatApp
from .memory import ChatMemory
from .notices import model_notice
from .recording import GuardedRecorder

if TYPE_CHECKING:
    from prompt_toolkit.input import Input
    from prompt_toolkit.output import Output

    from ..engine.learner import LearnerProfile
    from ..engine.round import TurnClient
    from ..speech.port import SpeechEngine, Voice
    from .speaking import ClassVoice
    from .watch import Watcher

EXIT_ROUND_FAILED = 1  # plain mode: the last round ended in a provider error
DEFAULT_PACE = 0.12  # seconds per word of a scripted lecture on a terminal (a brisk reading pace)


def class_table(session: Session) -> Table:
    table = Table(box=None, pad_edge=False)
    for column in ("id", "", "name", "role"):
        table.add_column(column)
    for agent in session.agents:
        table.add_row(agent.id, Text(clean(agent.avatar)), Text(clean(agent.name), style=color_or_default(agent.color)),
                      agent.role)
    return table


def mode_label(session: Session) -> str:
    if session.lesson is not None:
        return f"lesson: {session.lesson.lesson.title}"
    topic = session.config.discussion_topic
    return f"discussion: {topic}" if topic else "Q&A"


async def run_chat(session: Session, path: Path, *, interactive: bool, spec: ModelSpec | None = None,
                   temperature: float | None = None,
                   notice: str | None = None, resumed: bool = False, console: Console | None = None,
                   prompt_input: Input | None = None, prompt_output: Output | None = None, structured: str = "auto",
                   transcript: Path | None = None, prompts: PromptSet | None = None,
                   director: DirectorPolicy | None = None, pace: float | None = None,
                   memory: ChatMemory | None = None,
                   watch: tuple[LearnerProfile, ModelSpec | None] | None = None,
                   speech: tuple[SpeechEngine, dict[str, Voice]] | None = None,
                   turns: TurnClient | None = None) -> int:
    """Hold the class; returns the exit code (:data:`EXIT_ROUND_FAILED` or 0).  ``spec``: the session's
    model as ``maic chat`` parsed it (``None``: parsed here from ``session.model``).  ``pace``: seconds per
    word of a scripted lecture (``None``: :data:`DEFAULT_PACE` on a terminal, at once in plain output).
    ``memory``: the named learner's memory, updated when the class ends.  ``watch``: a simulated learner
    (and its model; ``None``: the class's) takes the learner's seat (chat/watch.py).  ``speech``: the engine
    and each agent's voice, to say the class aloud (chat/speaking.py).  ``turns``: where the class's turns run
    (``None``: here; ``maic chat --server``: on a server, wired by the CLI)."""
    make_client: Callable[[ModelSpec], LLMClient] = functools.partial(
        make_llm, api_base=session.api_base, temperature=temperature, structured=structured)
    spec = spec or ModelSpec.parse(session.model)
    llm = make_client(spec)  # a bad model fails here, before any file is written
    session.transcript = str(transcript_path(session, path, transcript))
    recorder = open_transcript(session, path, spec, typed=transcript is not None, memory=memory, director=director)
    try:
        try:
            save_session(session, path)  # the file exists (and is valid) from the first moment
        except OSError as exc:
            raise SessionError(f"{path}: cannot save the session: {exc.strerror or exc}") from None
        watcher = None
        if watch is not None:
            from ..engine.learner import SimulatedLearner
            from .watch import Watcher

            learner_model = watch[1] or spec
            watcher = Watcher(SimulatedLearner(watch[0], recorder.wrap(make_client(learner_model)),
                                               temperature=temperature), learner_model.raw)
            watcher.mark(recorder)
        app = await _run(session, path, spec, llm, make_client, recorder, interactive=interactive, notice=notice,
                         resumed=resumed, console=console, prompt_input=prompt_input, prompt_output=prompt_output,
                         prompts=prompts, director=director, pace=pace, watcher=watcher, speech=speech,
                         turns=turns)
    finally:
        recorder.close()
    if memory is not None:
        memory.finish()
    if app.save_error is not None:
        raise SessionError(f"{path}: the session could not be saved ({app.save_error}); "
                           "the file holds its last good version")
    failed = app.last_result is not None and app.last_result.reason == "error"
    return EXIT_ROUND_FAILED if failed and not interactive else 0


def transcript_path(session: Session, path: Path, typed: Path | None) -> Path:
    """Where to record: the user's ``--transcript``, else the session's own (if confined), else the default."""
    if typed is not None:
        return typed.expanduser()
    default = maic_home() / "transcripts" / f"{path.stem}.jsonl"
    if session.transcript is None:
        return default
    stored = Path(session.transcript).expanduser().resolve()
    transcripts = (maic_home() / "transcripts").resolve()
    if stored.suffix == ".jsonl" and (stored.parent == path.resolve().parent or stored.is_relative_to(transcripts)):
        return stored
    sys.stderr.write(f"maic: note: the session names a transcript outside maic's folders "
                     f"({clean(session.transcript)[:200]}); recording to {default} instead\n")
    return default


def open_transcript(session: Session, path: Path, spec: ModelSpec, *, typed: bool,
                    memory: ChatMemory | None = None, director: DirectorPolicy | None = None) -> GuardedRecorder:
    target = Path(session.transcript or "")
    policy = choose_policy(director, session.config.director, spec.compact_prompts)  # the policy it plays under
    header = TranscriptHeader(model=spec.raw, produced_by=spec.produced_by, agents=session.agents,
                              config=session.config.model_copy(update={"director": policy.name}),
                              profile=session.profile, store=session.classroom.store,
                              session=str(path))
    try:
        writer = TranscriptWriter(target, header)
        return GuardedRecorder(memory.tee(writer) if memory is not None else writer)
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else "not a maic transcript"
        error = InputError if typed else MaicError
        raise error(f"{'--transcript ' if typed else ''}{target}: cannot record the transcript there: "
                    f"{reason}") from None


async def _run(session: Session, path: Path, spec: ModelSpec, llm: LLMClient,
               make_client: Callable[[ModelSpec], LLMClient], recorder: GuardedRecorder, *,
               interactive: bool, notice: str | None, resumed: bool, console: Console | None,
               prompt_input: Input | None, prompt_output: Output | None, prompts: PromptSet | None = None,
               director: DirectorPolicy | None = None, pace: float | None = None,
               watcher: Watcher | None = None, turns: TurnClient | None = None,
               speech: tuple[SpeechEngine, dict[str, Voice]] | None = None) -> ChatApp:
    view: View  # the live layout on a terminal, plain lines in a pipe: mypy checks every call against the seam
    if interactive:
        from ..ui.input import make_prompt_session
        from ..ui.live import LiveView

        console = console or Console()
        state = ScreenState(classroom=session.classroom, agents={a.id: a for a in session.agents},
                            model=spec.raw, mode=mode_label(session), session_path=str(path),
                            learner=session.profile.nickname, max_turns=session.config.max_turns,
                            notice=notice)
        state.notes.echo_questions = False  # the chat asks each quiz question itself
        view = LiveView(console, state)
        prompt = make_prompt_session(maic_home() / "history", [a.id for a in session.agents],
                                     commands=COMMANDS.helps(), input=prompt_input, output=prompt_output,
                                     max_chars=MAX_LEARNER_CHARS)

        def show_whiteboard() -> None:
            slide = render_slide(session.classroom.store)
            if slide is not None:
                console.print(slide)
            console.print(render_whiteboard(session.classroom.store, limit=1000))

        def model_changed(model: ModelSpec) -> None:  # the header follows /model
            state.model, state.notice = model.raw, model_notice(model, lesson=session.lesson is not None)

        voice_notes: list[str] = []  # said under the header
        voice = _open_voice(speech, session, view, voice_notes.append)
        app = ChatApp(session=session, path=path, llm=llm, spec=spec, make_client=make_client, view=view,
                      recorder=recorder, voice=voice, turns=turns,
                      show_whiteboard=show_whiteboard, show_class=lambda: console.print(class_table(session)),
                      on_model_change=model_changed, prompts=prompts, director=director,
                      pace=DEFAULT_PACE if pace is None else pace, keys=watch_keys)
        console.print(render_header(state))
        console.print(Text("Ask the class anything. @id (or a name: \"Sam, …\") asks one agent first; "
                           "/help lists commands; Ctrl-C stops a speaker, Ctrl-D leaves.", style="dim"))
        if resumed:
            console.print(Text(f"Resumed {path} ({len(session.classroom.messages)} messages).", style="dim"))
        for note in voice_notes:
            console.print(Text(note, style="dim"))

        async def read_line() -> str | None:
            return await prompt.prompt_async("you › ", default=app.take_typed())  # a key that paused a lecture
    else:
        view = PlainView(sys.stdout, sys.stderr, {a.id: a for a in session.agents}, echo_questions=False)
        if notice:
            sys.stderr.write(f"maic: note: {notice}\n")

        def show_whiteboard_plain() -> None:
            from ..engine.whiteboard import whiteboard_summary

            view.info(whiteboard_summary(session.classroom.store))

        voice = _open_voice(speech, session, view, lambda note: sys.stderr.write(f"maic: note: {note}\n"))
        app = ChatApp(session=session, path=path, llm=llm, spec=spec, make_client=make_client, view=view,
                      recorder=recorder, voice=voice, show_whiteboard=show_whiteboard_plain, prompts=prompts,
                      director=director, pace=pace, turns=turns)  # plain output: at once, unless --pace asks

        read_line = LineReader(sys.stdin).next_line

    # A simulated learner (--watch) speaks instead of the keyboard.
    try:
        await app.run(watcher.reader(app) if watcher is not None else read_line)
    finally:
        if voice is not None:
            await voice.aclose()  # the player killed and reaped, its files removed
    if app.save_error is None:
        message = f"Session saved: {path}"
        if not recorder.stopped and session.transcript:  # where the class was recorded, and how to see it again
            message += f"\nTranscript: {session.transcript} (maic replay {shlex.quote(session.transcript)})"
        if interactive and console is not None:
            console.print(Text(message, style="dim"))
        else:
            sys.stderr.write(message + "\n")
    return app


def _open_voice(speech: tuple[SpeechEngine, dict[str, Voice]] | None, session: Session, view: View,
                note: Callable[[str], object]) -> ClassVoice | None:
    if speech is None:
        return None
    from .speaking import open_class_voice

    return open_class_voice(*speech, agents={a.id: a for a in session.agents}, report=view.error, info=note)
