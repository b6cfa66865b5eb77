"""What a class or a lesson says and shows, in order: the one list every export is made from.

An export is made of :class:`Said` items (one sentence, by one speaker) and :class:`Shown` items (the board as
it now looks: the slide, what is spotlit or under the laser, the whiteboard).  A recorded class gives them from
its events (:func:`from_class`: the events fold into a :class:`~maic_cli.engine.classroom.Classroom`, the one
reducer, so an action whose target does not exist changes nothing and shows nothing); a lesson gives them from
its scenes and lecture scripts (:func:`from_lesson`).  A board change lands after the sentence it follows,
where the speaker made it.  Everything is untrusted: text is cleaned and cut, sentences and board changes are
bounded in number.
"""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, field

from ..engine.classroom import Classroom
from ..engine.events import Event
from ..engine.models import AgentConfig, Slide, SlideElement, StoreState, WhiteboardElement
from ..lessons.lesson import LETTERS, DiscussionScene, Lesson, QuizScene, SlideScene
from ..replies.sanitize import replace_surrogates
from ..replies.speech import split_sentences
from ..untrusted import clean

MAX_SENTENCES = 4000  # said in one export: a transcript cannot make an export without end
MAX_SENTENCE_CHARS = 500  # a longer run without a full stop is cut at a word
MAX_SHOWN = 1000  # board changes in one export
MAX_BOARD_ELEMENTS = 40  # whiteboard elements kept in one picture of the board
LEARNER = "learner"  # the speaker id of the learner's own lines
POINTERS = ("spotlight", "laser")  # actions that move a pointer and change nothing on the whiteboard


@dataclass(frozen=True)
class Board:
    """The board as one picture shows it: the current slide (and its place), what is pointed at, the whiteboard.

    A board shares its slide with the store it was made from (a slide is never changed in place: a ``lesson``
    event replaces the slides), and holds copies of the whiteboard's elements (a code edit changes one in place).
    ``content`` is a digest of the slide and the whiteboard, made once, so telling boards apart costs nothing per
    action even when a slide holds a 20,000-row table."""

    title: str = ""
    slide: Slide | None = None
    number: int = 0  # 1-based place of the slide among the slides
    total: int = 0
    spotlight: str | None = None
    laser: str | None = None
    whiteboard: tuple[WhiteboardElement, ...] = ()
    content: str = field(default="", compare=False)

    def key(self) -> str:
        """What tells two boards apart (two equal keys draw the same picture)."""
        content = self.content or _digest(self.slide, self.whiteboard)
        return json.dumps([self.title, content, self.number, self.total, self.spotlight, self.laser])


_SLIDE_DIGESTS: OrderedDict[int, tuple[Slide, str]] = OrderedDict()  # id → (the slide, kept alive; its digest)


def _slide_digest(slide: Slide | None) -> str:
    if slide is None:
        return ""
    known = _SLIDE_DIGESTS.get(id(slide))
    if known is not None and known[0] is slide:
        _SLIDE_DIGESTS.move_to_end(id(slide))
        return known[1]
    digest = hashlib.sha256(slide.model_dump_json().encode("utf-8", "surrogatepass")).hexdigest()
    _SLIDE_DIGESTS[id(slide)] = (slide, digest)
    while len(_SLIDE_DIGESTS) > 256:
        _SLIDE_DIGESTS.popitem(last=False)
    return digest


def _digest(slide: Slide | None, whiteboard: tuple[WhiteboardElement, ...]) -> str:
    board = hashlib.sha256(json.dumps([e.model_dump() for e in whiteboard], sort_keys=True, default=str)
                           .encode("utf-8", "surrogatepass")).hexdigest() if whiteboard else ""
    return f"{_slide_digest(slide)}:{board}"


@dataclass(frozen=True)
class Said:
    """One sentence said by one speaker (``turn`` counts the turns: a new number is a new speaker's turn)."""

    speaker: str  # an agent id, or LEARNER
    name: str
    text: str  # cleaned, one line
    turn: int
    color: str = ""  # the agent's colour (a persona's), for the speaker's band in a video


@dataclass(frozen=True)
class Shown:
    board: Board


Item = Said | Shown


def one_sentence(text: str) -> str:
    """``text`` as one cleaned line (no control characters, no broken surrogates, single spaces)."""
    return " ".join(clean(replace_surrogates(text)).split())


def sentences(text: str) -> list[str]:
    """``text`` in cleaned sentences, none longer than :data:`MAX_SENTENCE_CHARS` (cut at a word)."""
    out: list[str] = []
    for piece in split_sentences(text):
        rest = one_sentence(piece)
        while len(rest) > MAX_SENTENCE_CHARS:
            cut = rest.rfind(" ", 0, MAX_SENTENCE_CHARS)
            cut = cut if cut > MAX_SENTENCE_CHARS // 2 else MAX_SENTENCE_CHARS
            out.append(rest[:cut].strip())
            rest = rest[cut:].strip()
        if rest:
            out.append(rest)
    return out


def board_of(store: StoreState, title: str = "", *, card: bool = False, like: Board | None = None) -> Board:
    """What ``store`` shows (the pointers only where they point at an element of the slide shown); a ``card`` (a
    quiz's questions, a discussion's topic) is no slide of the lesson: it has no number.  ``like``: a board whose
    whiteboard is still the store's (only a pointer moved), whose copies are kept instead of made again."""
    slide = store.slide
    ids = {element.id for element in slide.elements} if slide else set()
    number = min(max(store.current_slide, 0), len(store.slides) - 1) + 1 if slide and not card else 0
    if like is not None:
        whiteboard = like.whiteboard
    else:
        whiteboard = tuple(e.model_copy(deep=True) for e in store.whiteboard[-MAX_BOARD_ELEMENTS:]) \
            if store.whiteboard_open or store.whiteboard else ()
    content = _digest(slide, whiteboard) if like is None or like.slide is not slide \
        else like.content or _digest(slide, whiteboard)
    return Board(title=title, slide=slide, number=number, total=0 if card else len(store.slides),
                 spotlight=store.spotlight if store.spotlight in ids else None,
                 laser=store.laser if store.laser in ids else None, whiteboard=whiteboard, content=content)


@dataclass
class _Builder:
    items: list[Item] = field(default_factory=list)
    said: int = 0
    shown: int = 0
    turn: int = 0
    last_key: str | None = None
    last_board: Board | None = None
    last_speaker: str | None = None

    def say(self, speaker: str, name: str, text: str, *, new_turn: bool = False, color: str = "") -> None:
        if new_turn or speaker != self.last_speaker:
            self.turn += 1
            self.last_speaker = speaker
        name = one_sentence(name)[:60] or speaker
        for sentence in sentences(text):
            if self.said >= MAX_SENTENCES:
                return
            self.items.append(Said(speaker=speaker, name=name, text=sentence, turn=self.turn, color=color[:40]))
            self.said += 1

    def show(self, board: Board) -> None:
        key = board.key()
        self.last_board = board
        if key == self.last_key or self.shown >= MAX_SHOWN:
            return
        self.last_key = key
        self.items.append(Shown(board))
        self.shown += 1


@dataclass(frozen=True)
class LearnerSaid:
    """The learner's own line in a recorded class (a transcript's ``learner`` entry)."""

    text: str


def from_class(store: StoreState, steps: Iterable[Event | LearnerSaid], *, learner: str = "Learner",
               title: str = "") -> list[Item]:
    """The items of a recorded class: ``store`` is the board it began with, ``steps`` its events and learner lines.

    An agent's text is said sentence by sentence; an action in its reply shows the board after the text before
    it.  Text streamed in pieces is joined first, so a sentence split across deltas is one sentence.
    """
    classroom = Classroom(store=store.model_copy(deep=True))
    build = _Builder()
    build.show(board_of(classroom.store, title))
    speaking: dict[str, tuple[str, str, str]] = {}  # message id → (agent id, name, colour)
    pending: dict[str, list[str]] = {}

    def flush(message_id: str, *, new_turn: bool = False) -> None:
        text = "".join(pending.pop(message_id, []))
        who = speaking.get(message_id)
        if who is not None and text.strip():
            build.say(who[0], who[1], text, new_turn=new_turn, color=who[2])

    for step in steps:
        if isinstance(step, LearnerSaid):
            for message_id in list(pending):
                flush(message_id)
            classroom.add_learner_message(step.text)
            build.say(LEARNER, learner, step.text, new_turn=True)
            continue
        if step.type == "agent_start":
            speaking[step.message_id] = (step.agent_id, step.agent_name, step.color)
            pending[step.message_id] = []
            build.last_speaker = None  # a new message is a new turn, even by the same agent
        elif step.type == "text_delta" and step.message_id in pending:
            if sum(map(len, pending[step.message_id])) < MAX_SENTENCE_CHARS * 40:
                pending[step.message_id].append(step.content)
        elif step.type in ("action", "agent_end") and getattr(step, "message_id", None) in pending:
            flush(step.message_id)
            if step.type == "action":
                pending[step.message_id] = []
        classroom.apply(step)
        if step.type in ("action", "lesson", "scene") and build.shown < MAX_SHOWN:
            pointer = step.type == "action" and step.action_name in POINTERS  # moves a pointer, draws nothing
            build.show(board_of(classroom.store, title, like=build.last_board if pointer else None))
    for message_id in list(pending):
        flush(message_id)
    if len(build.items) > 1 and isinstance(build.items[1], Shown):
        del build.items[0]  # the board the class began with, replaced before anything was said over it
    return build.items


def _quiz_slide(scene: QuizScene, number: int) -> Slide:
    """The card of one question: the question, its options lettered."""
    questions = scene.questions[:20]
    question = questions[number]
    elements = [SlideElement(id=question.id, content=question.question)]
    if question.options:
        elements.append(SlideElement(id=f"{question.id[:50]}-options", content="\n".join(
            f"{LETTERS[i]}) {option}" for i, option in enumerate(question.options))))
    place = f" · question {number + 1} of {len(questions)}" if len(questions) > 1 else ""
    return Slide(id=scene.id, title=f"Quiz: {scene.title}{place}", elements=elements)


def _quiz_lines(scene: QuizScene) -> list[str]:
    """What the teacher says of each question (the first also opens the quiz)."""
    lines = []
    for number, question in enumerate(scene.questions[:20], 1):
        options = "; ".join(f"{LETTERS[i]}, {option}" for i, option in enumerate(question.options))
        lines.append(f"Question {number}: {question.question}" + (f" {options}." if options else ""))
    return lines


def from_lesson(lesson: Lesson, agents: list[AgentConfig]) -> list[Item]:
    """The items of a lesson played as its scripts say: each slide shown, its lecture said (a step ``by:`` a
    classmate in that agent's voice, an unknown one in the teacher's), spotlight and laser moved where the script
    moves them; a quiz's questions read out, each on its card; a discussion's topic and opening lines."""
    teacher = next((a for a in agents if a.role == "teacher"), agents[0] if agents else None)
    teacher_id, teacher_name = (teacher.id, teacher.name) if teacher else ("teacher", "Teacher")
    names = {a.id: a.name for a in agents}
    colors = {a.id: a.color for a in agents}
    slides = lesson.slides()
    store = StoreState(slides=slides)
    title = one_sentence(lesson.title)[:200]
    build = _Builder()
    for index, scene in enumerate(lesson.scenes):
        build.last_speaker = None  # a scene's first line opens a turn of its own
        if isinstance(scene, SlideScene):
            store.current_slide = lesson.slide_number(index) or 0
            store.spotlight = store.laser = None
            build.show(board_of(store, title))
            if not scene.script:
                build.say(teacher_id, teacher_name, f"{scene.title}.", new_turn=True, color=colors.get(teacher_id, ""))
            for step in scene.script:
                if step.say is not None:
                    speaker = step.by if step.by in names else teacher_id
                    build.say(speaker, names.get(speaker, teacher_name), step.say, color=colors.get(speaker, ""))
                elif step.spotlight is not None:
                    store.spotlight = step.spotlight
                elif step.laser is not None:
                    store.laser = step.laser
                build.show(board_of(store, title))
        elif isinstance(scene, QuizScene):
            for number, line in enumerate(_quiz_lines(scene)):
                build.show(board_of(StoreState(slides=[_quiz_slide(scene, number)]), title, card=True))
                opening = f"Time for a quiz: {scene.title}. " if number == 0 else ""
                build.say(teacher_id, teacher_name, opening + line, color=colors.get(teacher_id, ""))
        elif isinstance(scene, DiscussionScene):
            card = Slide(id=scene.id, title=f"Discussion: {scene.topic}",
                         elements=[SlideElement(id="prompt", content=scene.prompt or scene.topic)])
            build.show(board_of(StoreState(slides=[card]), title, card=True))
            if not scene.script:
                build.say(teacher_id, teacher_name, f"Let's discuss: {scene.topic}", new_turn=True,
                          color=colors.get(teacher_id, ""))
            for step in scene.script:
                if step.say is not None:
                    speaker = step.by if step.by in names else teacher_id
                    build.say(speaker, names.get(speaker, teacher_name), step.say, color=colors.get(speaker, ""))
    return build.items
