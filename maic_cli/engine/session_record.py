"""What one class did for its learner, read from what happened in it (pure: no I/O).

A class is recorded as *happenings*: what the learner typed and the engine's events, each at a
wall-clock time.  The chat collects them as they happen; a transcript holds them too (its
learner lines and event lines).  Two things are built from them: the learner's memory
(``store/learner_profile.py``: questions asked, lessons taken, quiz results, misconceptions)
and the learning records (``engine/xapi.py``).

Extraction is deterministic and simple, with no model call: a misconception is a quiz answer
graded wrong (the question, the answer, the key) or a sentence of the teacher's, in reply to a
learner's message, that says the learner was not right ("not quite", "a common
misconception", "actually, …").  Everything kept is cut to a bounded length.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from .events import AgentStartEvent, Event, LessonEvent, QuizAnswerEvent, QuizScoreEvent, SceneEvent, TextDeltaEvent

MAX_QUESTION = 300  # characters of a learner's question kept
MAX_NOTE = 300  # characters of a misconception kept
MAX_AGENT_TEXT = 4000  # characters of one agent message read for corrections
_CORRECTION = re.compile(
    r"\b(?:not quite|not exactly|common (?:misconception|mistake|confusion)|misconception|"
    r"that(?:'s| is) not (?:right|correct|true)|isn't (?:right|correct|true)|is incorrect|"
    r"is a myth|actually,|in fact,|careful[:,])", re.IGNORECASE)
_SENTENCE = re.compile(r"[^.!?\n]*[.!?]?")


@dataclass(frozen=True)
class Happening:
    """One thing that happened: the learner's line (``learner``) or an engine event, at ``at``
    (seconds since the epoch)."""

    at: float
    learner: str | None = None
    event: Event | None = None


@dataclass
class LessonFacts:
    """One lesson as this class saw it."""

    title: str
    scenes: int = 0
    started: float = 0.0
    seen: set[int] = field(default_factory=set)  # scene indexes viewed
    quizzes: set[str] = field(default_factory=set)  # quiz scene ids viewed
    scored: dict[str, tuple[float, int]] = field(default_factory=dict)  # quiz scene id → points, max
    ended: float = 0.0  # when the last thing of it happened

    @property
    def completed(self) -> bool:
        """Every scene seen and every quiz seen finished."""
        return self.scenes > 0 and self.seen >= set(range(self.scenes)) and self.quizzes <= set(self.scored)

    @property
    def score(self) -> tuple[float, int] | None:
        if not self.scored:
            return None
        return (sum(p for p, _ in self.scored.values()), sum(m for _, m in self.scored.values()))


@dataclass
class SessionRecord:
    questions: list[str] = field(default_factory=list)
    lessons: list[LessonFacts] = field(default_factory=list)
    answers: list[QuizAnswerEvent] = field(default_factory=list)
    misconceptions: list[str] = field(default_factory=list)


def cut(text: str, limit: int) -> str:
    """``text`` on one line, at most ``limit`` characters (an ellipsis says it was cut)."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def is_question(text: str) -> bool:
    """A learner line that says something to the class (not empty, not a command)."""
    stripped = text.strip()
    return bool(stripped) and not stripped.startswith("/")


def answer_note(event: QuizAnswerEvent) -> str:
    """A wrong quiz answer, as one misconception line."""
    key = ", ".join(f"{letter} ({_option(event, letter)})" if _option(event, letter) else letter
                    for letter in event.key)
    note = f'quiz "{cut(event.question, 120)}": answered "{cut(event.answer, 80)}"'
    if key:
        note += f"; the key is {cut(key, 100)}"
    if event.comment:
        note += f"; {cut(event.comment, 100)}"
    return cut(note, MAX_NOTE)


def _option(event: QuizAnswerEvent, letter: str) -> str:
    index = ord(letter.upper()[:1] or "?") - ord("A")
    return cut(event.options[index], 60) if 0 <= index < len(event.options) else ""


def correction(question: str, reply: str) -> str | None:
    """The teacher's sentence that corrects the learner's ``question``, as a misconception line."""
    for sentence in _SENTENCE.findall(reply[:MAX_AGENT_TEXT]):
        if _CORRECTION.search(sentence):
            return cut(f'asked "{cut(question, 100)}"; the teacher corrected: "{cut(sentence, 180)}"', MAX_NOTE)
    return None


def collect(happenings: Iterable[Happening], roles: Mapping[str, str]) -> SessionRecord:
    """The session's record; ``roles`` maps agent ids to roles (only a teacher's replies correct)."""
    record = SessionRecord()
    lesson: LessonFacts | None = None
    last_question: str | None = None
    texts: dict[str, list[str]] = {}  # a teacher's message id → its text so far
    for item in happenings:
        if item.learner is not None:
            _flush(record, texts, last_question)
            texts = {}
            last_question = item.learner if is_question(item.learner) else None
            if last_question is not None:
                record.questions.append(cut(last_question, MAX_QUESTION))
            continue
        event = item.event
        if isinstance(event, AgentStartEvent):
            if roles.get(event.agent_id) == "teacher":
                texts[event.message_id] = []
        elif isinstance(event, TextDeltaEvent) and event.message_id in texts:
            if sum(map(len, texts[event.message_id])) < MAX_AGENT_TEXT:
                texts[event.message_id].append(event.content)
        elif isinstance(event, LessonEvent):
            lesson = next((known for known in record.lessons if known.title == event.title), None)
            if lesson is None:
                lesson = LessonFacts(title=event.title, scenes=event.scenes, started=item.at)
                record.lessons.append(lesson)
            lesson.scenes = event.scenes
        elif isinstance(event, SceneEvent) and lesson is not None:
            _flush(record, texts, last_question)
            texts, last_question = {}, None  # a new scene: a lecture is no reply to the last question
            lesson.seen.add(event.index)
            if event.kind == "quiz":
                lesson.quizzes.add(event.scene_id)
        elif isinstance(event, QuizAnswerEvent):
            record.answers.append(event)
            if not event.correct and event.graded_by != "none":
                record.misconceptions.append(answer_note(event))
        elif isinstance(event, QuizScoreEvent) and lesson is not None:
            lesson.scored[event.scene_id] = (event.points, event.max_points)
        if lesson is not None:
            lesson.ended = item.at
    _flush(record, texts, last_question)
    return record


def _flush(record: SessionRecord, texts: dict[str, list[str]], question: str | None) -> None:
    """The teacher's replies to ``question``: the first correction among them is kept."""
    if question is None:
        return
    for parts in texts.values():
        note = correction(question, "".join(parts))
        if note is not None:
            record.misconceptions.append(note)
            return
