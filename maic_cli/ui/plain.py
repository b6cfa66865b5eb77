"""Plain, line-oriented output for pipes and scripts: ``Name: speech [action]``.

A lesson shows as lines too: ``== Lesson: … ==``, a rule per scene (with the slide
and its elements by id when a slide scene opens), a spotlight or laser as a badge like
any action (``[spotlight on formula]``), each quiz answer (question, options, answer,
right or wrong, points, comment) and the score.

``with view.round(): …`` ends an open line whatever happens inside;
``round_finished`` may be called any number of times.
"""

from __future__ import annotations

from typing import TextIO

from ..engine.classroom import Classroom
from ..engine.events import Event
from ..engine.models import AgentConfig
from ..engine.round import RoundResult
from ..untrusted import StreamCleaner, clean
from .lesson_notes import LessonNotes, slide_lines
from .view import View
from .views import action_badge


class PlainView(View):
    def __init__(self, out: TextIO, err: TextIO, agents: dict[str, AgentConfig], *,
                 echo_questions: bool = True) -> None:
        self.out = out
        self.err = err
        self.agents = agents
        self._open = False
        self._last = "\n"
        self._space_pending = False
        self._cleaner = StreamCleaner()
        self._notes = LessonNotes(echo_questions=echo_questions)
        self._classroom = Classroom()  # notes need a class to be placed in; plain output prints them at once

    def _write(self, text: str) -> None:
        if text:
            if self._space_pending and not text[0].isspace():
                self.out.write(" ")
            self._space_pending = False
            self.out.write(text)
            self._last = text[-1]

    def round_started(self) -> None:
        return None

    def on_event(self, event: Event) -> None:
        if event.type == "agent_start":
            self._write(f"{clean(event.agent_name)}: ")
            self._open = True
        elif event.type == "text_delta":
            self._write(self._cleaner.feed(event.content))
        elif event.type == "action" and not self._open:  # a lecture script's pointer: a line of its own
            self._write(f"[{action_badge(event.action_name, event.params)}]\n")
        elif event.type == "action":
            space = "" if self._last.isspace() else " "
            self._write(f"{space}[{action_badge(event.action_name, event.params)}]")
            self._space_pending = True
        elif event.type == "agent_end":
            self._write(self._cleaner.flush())
            self._space_pending = False
            self._write("\n")
            self._open = False
        elif event.type == "error":
            self.error(event.message)
        elif event.type in ("lesson", "scene", "quiz_answer", "quiz_score"):
            self._note(event)
        self.out.flush()

    def _note(self, event: Event) -> None:
        note = self._notes.record(self._classroom, event)
        if note is None:
            return
        if self._open:  # a note never lands inside an agent's line
            self._write(self._cleaner.flush())
            self._write("\n")
            self._open = False
        lines = self._notes.lines(note)
        if note.type == "lesson":
            lines = [f"== {lines[0]} =="]
        elif note.type == "scene":
            lines = [f"-- {lines[0]} --"]
            slide = self._notes.slide_of(note)
            if slide is not None:
                lines += slide_lines(slide[0], slide[1], len(self._notes.slides))
        self._write("".join(f"{line}\n" for line in lines))

    def round_finished(self, result: RoundResult | None = None) -> None:
        if self._open:
            self._write(self._cleaner.flush())
            self._write(" [interrupted]\n" if result is not None and result.reason == "aborted" else "\n")
            self._open = False
        self.out.flush()

    def info(self, text: str) -> None:
        self.out.write(clean(text) + "\n")
        self.out.flush()

    def error(self, text: str) -> None:
        self.err.write(f"maic: error: {clean(text)}\n")
        self.err.flush()

    def block(self, title: str, lines: list[str]) -> None:
        self.out.write("".join(f"{clean(line)}\n" for line in [f"== {title} ==", *lines]))
        self.out.flush()
