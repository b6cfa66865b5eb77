"""A lesson in words for ``maic chat``: the outline, a scene heading, a quiz question, hints.

Plain strings only (titles and lines for :meth:`~maic_cli.ui.view.View.block`, lines for
``View.info``): the live and the plain views both show them, and clean them as they do model
text (a lesson file is untrusted).
"""

from __future__ import annotations

from ..lessons.lesson import LETTERS, DiscussionScene, QuizQuestion, QuizScene, SlideScene
from ..lessons.player import LessonPlayer, OutlineEntry


def outline_lines(entries: list[OutlineEntry]) -> list[str]:
    """One line per scene: ``> 2. slide 2  The overall reaction  (done)``; ``>`` marks the current one."""
    lines = []
    for entry in entries:
        label = f"slide {entry.slide}" if entry.slide is not None else entry.kind
        mark = ">" if entry.current else " "
        done = "  (done)" if entry.done else ""
        lines.append(f"{mark} {entry.number}. {label:<10} {entry.title}{done}")
    return lines


def scene_heading(player: LessonPlayer) -> str:
    """What the class has moved to: ``Slide 2 of 3: The overall reaction``."""
    scene, position = player.scene, player.position()
    if isinstance(scene, SlideScene):
        return f"{position[0].upper()}{position[1:]}: {scene.title}"
    if isinstance(scene, QuizScene):
        count = len(scene.questions)
        return f"Quiz: {scene.title} ({count} question{'s' if count != 1 else ''}, {scene.max_points} points)"
    return f"Discussion: {scene.title or scene.topic}"


def question_block(question: QuizQuestion, number: int, total: int) -> tuple[str, list[str]]:
    """The title and lines of one quiz question, its options lettered A, B, …"""
    points = f"{question.points} point{'s' if question.points != 1 else ''}"
    title = f"Question {number} of {total} ({points})"
    lines = [question.question, ""]
    lines += [f"  {LETTERS[i]}) {option}" for i, option in enumerate(question.options)]
    if question.type == "single":
        hint = "Type the letter of your answer (or its number)."
    elif question.type == "multiple":
        hint = ("Several answers may be right: type all their letters, separated by commas or spaces "
                "(only the exact set scores).")
    else:
        hint = "Answer in a sentence or two."
    return title, [*lines, "", hint] if question.options else [question.question, "", hint]


def hint_after(player: LessonPlayer) -> str | None:
    """What the learner can do now (shown after the lesson stops and waits)."""
    progress = player.progress
    if progress.state == "finished":
        again = ", or /slide N to look again" if player.lesson.slides() else ""
        return f"The lesson is finished. Ask the class anything, /outline{again}."
    discussion = isinstance(player.scene, DiscussionScene)
    if progress.state == "paused":
        what = "Discussion" if discussion else "Lecture"
        return f"{what} paused. Ask your question, or press Enter (/continue) to go on."
    if player.current_question() is not None:
        return None
    last = progress.scene + 1 >= len(player.lesson.scenes)
    then = "finish the lesson" if last else "go on"
    if discussion and player.scene_done(progress.scene):
        return f"Your turn: what do you think? Type it, or press Enter to {then}."
    return f"Press Enter to {then}, or type a question. /outline shows the lesson."
