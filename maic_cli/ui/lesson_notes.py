"""What a lesson adds to a conversation, as plain lines every view shows its own way.

The lesson's events (engine/events.py: ``lesson``, ``scene``, ``quiz_answer``,
``quiz_score``) and a spotlight or laser moved outside any message (a lecture
script's step) are not messages, so the class does not keep them.
:class:`LessonNotes` remembers each one with its place among the messages, so
the live conversation, ``maic replay`` and the exports show it where it happened.

Everything here is untrusted (a lesson file, a transcript someone sent, model
text): each string is cut, rid of broken surrogates and control sequences
before it becomes a line.  Views still build Rich ``Text`` from these lines,
never markup; exports escape them for their format.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..engine.classroom import Classroom
from ..engine.events import ActionEvent, Event, LessonEvent, QuizAnswerEvent, QuizScoreEvent, SceneEvent
from ..engine.models import Slide, SlideElement
from ..lessons.lesson import LETTERS
from ..replies.sanitize import replace_surrogates
from ..untrusted import clean

Note = LessonEvent | SceneEvent | QuizAnswerEvent | QuizScoreEvent | ActionEvent
POINTERS = ("spotlight", "laser")
MAX_NOTES = 5000  # a transcript cannot grow the notes without end
MAX_ITEMS = 60  # bullets, table rows, code lines shown of one element
MAX_COLUMNS = 12
MAX_CHARS = 2000  # of one string


def shown(value: object, limit: int = MAX_CHARS) -> str:
    """A string from a file or a model, safe to show: cut, no broken surrogates, no control sequences."""
    text = value if isinstance(value, str) else str(value)
    cut = len(text) > limit
    return clean(replace_surrogates(text[:limit])) + ("…" if cut else "")


def points(value: float) -> str:
    return f"{value:g}"


def pointer_line(name: str, params: object) -> str:
    """``→ spotlight: formula``: where the teacher pointed."""
    target = params.get("elementId", "") if isinstance(params, dict) else ""
    return f"→ {shown(name, 20)}: {shown(target, 64)}"


def _excerpt(element: SlideElement) -> str:
    if element.type == "bullets":
        text = (element.items[0] + (", …" if len(element.items) > 1 else "")) if element.items else "the list"
    elif element.type == "table":
        text = " · ".join(element.rows[0][:3]) if element.rows else "the table"
    elif element.type == "code":
        text = next((line for line in element.content.splitlines() if line.strip()), "the code")
    else:
        text = element.content
    text = " ".join(shown(text, 200).split())
    return text if len(text) <= 60 else text[:59].rstrip() + "…"


_WHAT = {"bullets": "the list ", "image": "the picture ", "video": "the video ", "chart": "the chart ",
         "table": "the table ", "code": "the code ", "formula": "the formula ", "shape": "the shape "}


def pointer_text(name: str, target: object, slides: list[Slide]) -> str:
    """Where the teacher pointed, in words a reader knows (``spotlight on “3/4”``): the element's own text, never
    its id (an id not on any slide is ``the slide``)."""
    verb = "laser on" if name == "laser" else "spotlight on"
    for slide in reversed(slides):
        for element in slide.elements[:200]:
            if element.id == target:
                what = _WHAT.get(element.type, "")
                return f"→ {verb} {what}“{_excerpt(element)}”"
    return f"→ {verb} the slide"


def scene_line(event: SceneEvent, scenes: int) -> str:
    """``Scene 2/5 · slide · The overall reaction``."""
    number = f"{event.index + 1}/{scenes}" if scenes > event.index else f"{event.index + 1}"
    title = shown(event.title or event.scene_id, 200)
    return f"Scene {number} · {event.kind} · {title}"


def option_lines(event: QuizAnswerEvent) -> list[str]:
    """``A) The soil``, one per option (none for a short-answer question)."""
    return [f"{LETTERS[i]}) {shown(option, 400)}" for i, option in enumerate(event.options[:len(LETTERS)])]


def verdict_lines(event: QuizAnswerEvent) -> list[str]:
    """The learner's answer, right or wrong (with the key when wrong), the points, the comment."""
    answer = " ".join(shown(c, 4) for c in event.chosen[:len(LETTERS)]) or shown(event.answer) or "(no answer)"
    if event.graded_by == "none":
        verdict = "not graded"
    else:
        verdict = "right" if event.correct else "partly right" if event.points > 0 else "wrong"
    if not event.correct and event.key:
        verdict += f" (the answer: {' '.join(shown(k, 4) for k in event.key[:len(LETTERS)])})"
    lines = [f"Answer: {answer} · {verdict} · {points(event.points)}/{event.max_points} points"]
    typed = event.answer.strip()
    if event.chosen and typed and typed.upper().replace(" ", "") != "".join(event.chosen).upper():
        lines.append(f"(typed: {shown(typed, 200)})")
    if event.comment:
        lines.append(f"Comment: {shown(event.comment)}")
    if event.explanation:
        lines.append(f"Why: {shown(event.explanation)}")
    return lines


def answer_lines(event: QuizAnswerEvent) -> list[str]:
    """The question, its options, the learner's answer, right or wrong, the points and the comment."""
    options = [f"  {line}" for line in option_lines(event)]
    return [f"Question: {shown(event.question)}", *options, *verdict_lines(event)]


def score_line(event: QuizScoreEvent) -> str:
    line = f"Quiz score: {points(event.points)}/{event.max_points}"
    if event.lesson_max_points:
        line += f" · lesson total {points(event.lesson_points)}/{event.lesson_max_points}"
    return line


def slide_heading(slide: Slide, number: int, total: int) -> str:
    return f"Slide {number}/{total}: {shown(slide.title, 200)}"


def element_kind(element: SlideElement) -> str:
    if element.type == "code" and element.language:
        return f"code, {shown(element.language, 20)}"
    return element.type


def table_lines(rows: list[list[str]]) -> list[str]:
    """A table as aligned columns (the first row is the header, underlined)."""
    cells = [[shown(cell, 80) for cell in row[:MAX_COLUMNS]] for row in rows[:MAX_ITEMS]]
    if not cells:
        return ["(empty table)"]
    count = max(len(row) for row in cells)
    widths = [max((len(row[i]) for row in cells if i < len(row)), default=0) for i in range(count)]
    lines = [" | ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip() for row in cells]
    lines.insert(1, "-+-".join("-" * width for width in widths))
    return lines


def element_lines(element: SlideElement) -> list[str]:
    """The element's body as plain lines (bullets one per item, tables aligned, code as it is)."""
    if element.type == "bullets":
        return [f"• {shown(item, 400)}" for item in element.items[:MAX_ITEMS]]
    if element.type == "table":
        return table_lines(element.rows)
    if element.type == "code":
        return [shown(line, 240) for line in element.content.splitlines()[:MAX_ITEMS]]
    return shown(element.content).splitlines() or [""]


def slide_lines(slide: Slide, number: int, total: int) -> list[str]:
    """A whole slide as plain lines: its heading, then each element by id and type."""
    lines = [slide_heading(slide, number, total)]
    for element in slide.elements:
        body = element_lines(element)
        head = f"[{shown(element.id, 64)}] ({element_kind(element)})"
        if len(body) == 1 and element.type not in ("table", "code", "bullets"):
            lines.append(f"{head} {body[0]}")
        else:
            lines.append(head)
            lines += [f"    {line}" for line in body]
    return lines


def note_lines(note: Note, scenes: int, echo_questions: bool = True) -> list[str]:
    """One note as the plain lines every view shows (``echo_questions``: a quiz answer repeats its
    question and options — not in a chat, which has just asked it)."""
    if isinstance(note, LessonEvent):
        return [f"Lesson: {shown(note.title, 200)}"]
    if isinstance(note, SceneEvent):
        return [scene_line(note, scenes)]
    if isinstance(note, QuizAnswerEvent):
        return answer_lines(note) if echo_questions else verdict_lines(note)
    if isinstance(note, QuizScoreEvent):
        return [score_line(note)]
    return [pointer_line(note.action_name, note.params)]


@dataclass
class LessonNotes:
    """The lesson's notes, each at its place among the class's messages (the number of messages
    before it), and what they need to be shown: the lesson's scene count and slides."""

    notes: list[tuple[int, Note]] = field(default_factory=list)
    scenes: int = 0
    slides: list[Slide] = field(default_factory=list)
    title: str | None = None
    echo_questions: bool = True  # False in a chat, where the question was just asked

    def record(self, classroom: Classroom, event: Event) -> Note | None:
        """Keep ``event`` if it is a note (call it after the class folded it in); the note kept."""
        note: Note
        if isinstance(event, LessonEvent):
            self.scenes, self.slides, self.title = event.scenes, list(event.slides), event.title
            note = event
        elif isinstance(event, ActionEvent):
            if event.action_name not in POINTERS or classroom.message(event.message_id) is not None:
                return None  # a pointer inside a message is shown with the message
            note = event
        elif isinstance(event, SceneEvent | QuizAnswerEvent | QuizScoreEvent):
            note = event
        else:
            return None
        if len(self.notes) < MAX_NOTES:
            self.notes.append((len(classroom.messages), note))
        return note

    def lines(self, note: Note) -> list[str]:
        return note_lines(note, self.scenes, self.echo_questions)

    def slide_of(self, note: SceneEvent) -> tuple[Slide, int] | None:
        """The slide a slide scene shows, and its 1-based number."""
        if note.slide is None or note.slide >= len(self.slides):
            return None
        return self.slides[note.slide], note.slide + 1

    def by_place(self) -> dict[int, list[Note]]:
        """The notes grouped by their place (the number of messages before them), in order."""
        grouped: dict[int, list[Note]] = {}
        for place, note in self.notes:
            grouped.setdefault(place, []).append(note)
        return grouped
