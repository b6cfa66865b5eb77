"""What a turn in a lesson checks its reply against, and the answer it owes (pure).

* :func:`pointable` — the ids a spotlight or laser may point at: the elements of the slide on screen,
  none at a quiz or a discussion (the scene has no slide), for every model;
* :func:`lesson_ground` — on a small model (compact prompts) in a lesson, the ground of the lesson's
  gate (replies/gate.py): the lesson's sentences, the round's grounding and the learner's last words;
* :func:`owed_answer` — on a small model, a question's grounded answer (``LessonContext.answer``, set by
  lessons/ask.py) is owed by the first agent who answers: the lesson's lines it holds that no reply of
  this round has said yet (one of them said is the answer said);
* :func:`answer_text` — what that agent adds to its message when its own (gated) reply does not carry
  them: the teacher's whole grounded line when nothing of its own was left, else the lines, as prose
  (replies/prose.py: none of them said again).
"""

from __future__ import annotations

import re

from ..replies.gate import Ground, build_ground, carried
from ..replies.prose import compose
from .models import AgentConfig, TurnRequest

LEARNER_LINES = 3  # the learner's last messages whose numbers and words speech may take up
STUDENT_OPENING = "From the lesson:"  # a classmate who owes the answer and said nothing of their own


def pointable(request: TurnRequest) -> frozenset[str]:
    """The slide elements a pointer may land on now."""
    lesson = request.config.lesson
    if lesson is not None and lesson.kind != "slide":
        return frozenset()
    slide = request.store_state.slide
    return frozenset(e.id for e in slide.elements) if slide is not None else frozenset()


def language_of(request: TurnRequest) -> str:
    return (request.config.language or "english").lower()


def lesson_ground(request: TurnRequest, agents: list[AgentConfig]) -> Ground | None:
    """The gate's ground for this turn (``None``: not a lesson on a small model)."""
    lesson = request.config.lesson
    if not request.config.compact_prompts or lesson is None or not lesson.sources:
        return None
    learner = [m.text for m in request.messages if m.role == "user"][-LEARNER_LINES:]
    names = [request.user_profile.nickname, *(a.name for a in agents)]  # "Good point, Sam": names say nothing
    own = [*lesson.quiz, *lesson.grounding, *([lesson.focus] if lesson.focus else [])]
    titles = [lesson.title, lesson.scene]  # words and numbers to take up, not sentences to copy
    return build_ground([*lesson.sources, *own], [*learner, *titles], language_of(request), names=names)


def owed_answer(request: TurnRequest) -> list[str]:
    """The lesson lines this turn owes the learner's question (empty: none, or already said this round)."""
    lesson = request.config.lesson
    if not request.config.compact_prompts or lesson is None or not lesson.answer:
        return []
    answer = lesson.answer
    # The answer's own lines: each as a whole sentence of it (after "Good question." or "…comes to that:").
    lines = [line for line in lesson.grounding if re.search(r"(^|[.!?:]\s)" + re.escape(line) + r"(\s|$)", answer)]
    language = language_of(request)
    for message in reversed(request.messages):
        if message.role == "user":
            break
        if any(carried(message.text, line, language) for line in lines):
            return []
    return lines


def answer_text(request: TurnRequest, agent: AgentConfig, said: str, owed: list[str]) -> str | None:
    """What ``agent`` adds after saying ``said`` (gated) so its message carries ``owed`` (``None``: nothing;
    saying one of the lines is carrying the answer, as lessons/grounding.py's ``carries`` has it)."""
    lesson = request.config.lesson
    if lesson is None or lesson.answer is None or any(carried(said, line, language_of(request)) for line in owed):
        return None
    if said.strip():
        return compose(owed, [said]) or None  # as prose, nothing said again
    return lesson.answer if agent.role == "teacher" else f"{STUDENT_OPENING} {compose(owed)}"
