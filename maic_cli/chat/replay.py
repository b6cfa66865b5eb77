"""What ``maic replay`` does with a transcript: play it back through a view, or export it.

Kept apart from the command (:mod:`maic_cli.cli.replay_cmd`) so that ``maic replay --help``
imports none of this: the engine, the transcript store and the views are heavy.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

try:
    import termios
    import tty
except ImportError:  # Windows: Enter advances a step
    termios = None  # type: ignore[assignment]

from rich.console import Console

from ..engine.classroom import Classroom
from ..engine.events import TextDeltaEvent
from ..engine.round import RoundResult
from ..errors import InputError, MaicError
from ..store.paths import open_private
from ..store.transcript import Entry, EventLine, LearnerLine, RoundEndLine, Transcript
from ..ui.export import classroom_to_markdown
from ..ui.export_html import classroom_to_html
from ..ui.lesson_notes import LessonNotes
from ..ui.plain import PlainView
from ..ui.views import ScreenState, render_screen

STEP_EVENTS = frozenset({"agent_end", "scene", "quiz_answer", "quiz_score"})  # --step stops after each
MAX_GAP = 2.0  # seconds: longer pauses (a learner thinking) are shortened to this

# A transcript recorded in less than INSTANT_SPAN (scripted replies without delays: the whole class in a
# tenth of a second) is played at a pace a person can follow instead: streamed text at WORD_SECONDS per
# word, and a pause before each of these steps.  Recorded pauses longer than the floor are kept.  In
# any other transcript, a step recorded in a burst (less than BURST_GAP after the one before: a lesson's
# scripted lecture, emitted at once in a batch) gets the same floor.
INSTANT_SPAN = 1.0
BURST_GAP = 0.005
WORD_SECONDS = 0.12  # the chat's own lecture pace (chat/run.py DEFAULT_PACE)
STEP_SECONDS = {"agent_start": 0.5, "action": 0.6, "scene": 1.2, "quiz_answer": 1.2, "quiz_score": 1.0,
                "cue_user": 0.5}
LEARNER_SECONDS = 1.2  # before a learner's message: as if typed


def instant(transcript: Transcript) -> bool:
    """All of the transcript's times are near zero: it was recorded faster than anyone could watch."""
    times = [entry.t for entry in transcript.entries]
    return len(times) > 1 and max(times) - min(times) < INSTANT_SPAN


def floor_seconds(entry: Entry) -> float:
    """The least pause before ``entry`` in an instant transcript (see :data:`INSTANT_SPAN`)."""
    if isinstance(entry, LearnerLine):
        return LEARNER_SECONDS
    if not isinstance(entry, EventLine):
        return 0.0
    event = entry.event
    if isinstance(event, TextDeltaEvent):
        return WORD_SECONDS * max(1, len(event.content.split())) if event.content.strip() else 0.0
    return STEP_SECONDS.get(event.type, 0.0)


def apply_entry(classroom: Classroom, entry: Entry, notes: LessonNotes | None = None) -> None:
    """What one transcript line does to the class (learner lines and events; the rest is bookkeeping);
    a lesson's events are also kept in ``notes``, where they happened among the messages."""
    if isinstance(entry, LearnerLine):
        classroom.add_learner_message(entry.text)
    elif isinstance(entry, EventLine):
        classroom.apply(entry.event)
        if notes is not None:
            notes.record(classroom, entry.event)


def rebuild_with_notes(transcript: Transcript) -> tuple[Classroom, LessonNotes]:
    classroom = Classroom(store=transcript.header.store.model_copy(deep=True))
    notes = LessonNotes()
    for entry in transcript.entries:
        apply_entry(classroom, entry, notes)
    return classroom, notes


def rebuild(transcript: Transcript) -> Classroom:
    return rebuild_with_notes(transcript)[0]


def export(transcript: Transcript, target: Path) -> None:
    if target.exists() and target.samefile(transcript.path):
        raise InputError(f"{target}: that is the transcript itself; export to another file")
    header = transcript.header
    classroom, notes = rebuild_with_notes(transcript)
    agents = {a.id: a for a in header.agents}
    meta = {"model": header.model, "produced by": header.produced_by,
            "recorded": time.strftime("%Y-%m-%d %H:%M", time.localtime(header.created_at))}
    if header.scenario:
        meta["scenario"] = header.scenario
    if notes.title:
        meta["lesson"] = notes.title
    title = f"maic class: {header.scenario or notes.title or transcript.path.stem}"
    if target.suffix.lower() in (".html", ".htm"):
        render = classroom_to_html
    elif target.suffix.lower() in (".md", ".markdown"):
        render = classroom_to_markdown
    else:
        raise InputError(f"{target}: export to a .md or .html file")
    content = render(classroom, agents, title=title, learner=header.profile.nickname, meta=meta, notes=notes)
    try:
        with open_private(target, "w", make_folder=False) as handle:  # never through a link, into a FIFO or device
            handle.write(content)
    except OSError as exc:
        raise MaicError(f"{target}: cannot write: {exc.strerror or exc}") from None


class Player:
    """Plays the entries back through a view, with the original pacing divided by ``speed``."""

    def __init__(self, transcript: Transcript, *, speed: float | None, step: bool, console: Console | None):
        self.transcript = transcript
        self.speed = speed
        self.paced = instant(transcript)  # recorded at once: played at a reading pace
        self.step = step
        self.console = console
        header = transcript.header
        self.classroom = Classroom(store=header.store.model_copy(deep=True))
        self.agents = {a.id: a for a in header.agents}
        self.state = ScreenState(classroom=self.classroom, agents=self.agents, model=header.model,
                                 mode=f"replay · {header.produced_by}", session_path=str(transcript.path),
                                 learner=header.profile.nickname, max_turns=header.config.max_turns)

    async def play(self) -> None:
        if self.console is None:
            await self._play_plain()
        elif self.step:
            self._play_steps()
        else:
            await self._play_live()

    def pause_before(self, previous: float, entry: Entry) -> float:
        """Seconds to wait before ``entry`` (0 with no speed: ``--instant`` or a pipe)."""
        if not self.speed:
            return 0.0
        gap = min(max(0.0, entry.t - previous), MAX_GAP)
        if self.paced or gap < BURST_GAP:
            gap = max(gap, floor_seconds(entry))
        return gap / self.speed

    async def _pause(self, previous: float, entry: Entry) -> None:
        seconds = self.pause_before(previous, entry)
        if seconds:
            await asyncio.sleep(seconds)

    async def _play_plain(self) -> None:
        view = PlainView(sys.stdout, sys.stderr, self.agents)
        previous = 0.0
        for entry in self.transcript.entries:
            await self._pause(previous, entry)
            previous = entry.t
            if isinstance(entry, LearnerLine):
                view.info(f"{self.transcript.header.profile.nickname} (learner): {entry.text}")
            elif isinstance(entry, EventLine):
                view.on_event(entry.event)
            elif isinstance(entry, RoundEndLine):
                view.round_finished(RoundResult(reason=entry.reason))

    async def _play_live(self) -> None:
        from ..ui.live import LiveView

        assert self.console is not None
        view = LiveView(self.console, self.state)
        view.round_started()
        previous = 0.0
        try:
            for entry in self.transcript.entries:
                await self._pause(previous, entry)
                previous = entry.t
                apply_entry(self.classroom, entry)
                if isinstance(entry, LearnerLine):
                    view.refresh(force=True)
                elif isinstance(entry, EventLine):
                    view.on_event(entry.event)
        finally:
            view.round_finished(RoundResult(reason="end"))

    def _play_steps(self) -> None:
        assert self.console is not None
        height = max(10, self.console.size.height - 2)
        for entry in self.transcript.entries:
            apply_entry(self.classroom, entry, self.state.notes)
            if isinstance(entry, LearnerLine) or (isinstance(entry, EventLine) and entry.event.type in STEP_EVENTS):
                self.console.clear()
                self.console.print(render_screen(self.state, height))
                if not _wait_for_key():
                    return


STOP_KEYS = (b"", b"q", b"Q", b"\x04")  # end of input, q, Ctrl-D


def _wait_for_key() -> bool:
    """Wait for one key press (a whole line if stdin is not a terminal); False to stop."""
    try:
        if termios is None or not sys.stdin.isatty():
            return sys.stdin.readline() not in ("", "q\n", "Q\n")
        fd = sys.stdin.fileno()
        saved = termios.tcgetattr(fd)
        try:
            tty.setcbreak(fd, termios.TCSANOW)  # keys one by one, no Enter, no echo; keeps keys typed ahead
            key = os.read(fd, 32)  # one press, even one that sends several bytes (an arrow key)
        finally:
            termios.tcsetattr(fd, termios.TCSADRAIN, saved)
        return key not in STOP_KEYS
    except KeyboardInterrupt:
        return False
