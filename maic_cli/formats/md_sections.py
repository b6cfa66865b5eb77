"""The quiz and discussion sections of Markdown notes (``## Quiz: …``, ``## Discussion: …``).

A quiz is read line by line (see ``md_read``): numbered questions, ``- [x]`` options,
``Answer:``/``Rubric:``, ``Explanation:`` and ``Points:`` lines, and (as ``maic lesson export``
writes them, hidden in a viewer) ``<!-- id: ID -->`` after the heading for the quiz's id and
``<!-- question: ID TYPE -->`` after a question for its id and type.

A discussion is its heading's question (the topic), then paragraphs: ``<!-- id: ID -->``,
``Title: …`` and ``Opened by: agent`` lines, the prompt, and its opening script: from a
``[script]`` line or the first paragraph that names a classmate (``Mia: …``), each line is a
step (``notes_script.line_step``).  A line starting with ``\\`` is read as it is.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..authoring.notes_script import line_step
from ..errors import InputError
from ..lessons.lesson import LETTERS, DiscussionScene, QuizQuestion, QuizScene, ScriptStep
from .common import Draft, DraftSlide, line, slug, text

MAX_QUESTIONS = 50
MAX_DISCUSSION_STEPS = 60  # = DiscussionScene.script's limit
_QUESTION = re.compile(r"^\s{0,3}([0-9]{1,3})[.)]\s+(.*)$")
_OPTION = re.compile(r"^\s*[-*+]\s+\[( |x|X)\]\s*(.*)$")
_FIELD = re.compile(r"^\s*(answer|rubric|explanation|points)\s*:\s*(.*)$", re.IGNORECASE)
_ESCAPED = re.compile(r"\\([!-/:-@\[-`{-~])")  # a Markdown backslash escape: the character itself
ID_COMMENT = re.compile(r"^\s*<!--\s*id\s*:\s*([A-Za-z0-9][A-Za-z0-9_.-]{0,63})\s*-->\s*$")
_QUESTION_COMMENT = re.compile(r"^\s*<!--\s*question\s*:\s*([A-Za-z0-9][A-Za-z0-9_.-]{0,63})\s+"
                               r"(single|multiple|short)\s*-->\s*$")
DISCUSSION_FIELD = re.compile(r"^\s*(title|opened by)\s*:\s*(.*)$", re.IGNORECASE | re.DOTALL)
_SCRIPT = re.compile(r"^\s*\[\s*script\s*\]\s*$", re.IGNORECASE)
_POINTS = re.compile(r"^[0-9]{1,3}$")


def _unescape(raw: str) -> str:
    return _ESCAPED.sub(r"\1", raw)


def read_quiz(draft: Draft, lines: list[str], title: str, start: int, stop: int) -> None:
    """The quiz in ``lines[start:stop]`` (0-based line numbers) added to ``draft``."""
    path = draft.path
    drafts: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    quiz_id: str | None = None
    for number in range(start, min(stop, len(lines))):
        raw = lines[number]
        question, option, field = _QUESTION.match(raw), _OPTION.match(raw), _FIELD.match(raw)
        if question is not None:
            if len(drafts) >= MAX_QUESTIONS:
                raise InputError(f"{path}:{number + 1}: a quiz holds at most {MAX_QUESTIONS} questions")
            current = {"line": number + 1, "question": _unescape(question.group(2).strip()),
                       "options": [], "answer": []}
            drafts.append(current)
        elif current is None:
            found = ID_COMMENT.match(raw)
            if found is not None and quiz_id is None:
                quiz_id = found.group(1)
            continue  # an introduction before the first question
        elif (comment := _QUESTION_COMMENT.match(raw)) is not None:
            current["id"], current["type"] = comment.group(1), comment.group(2)
        elif option is not None:
            if len(current["options"]) >= len(LETTERS):
                raise InputError(f"{path}:{number + 1}: question {len(drafts)}: at most {len(LETTERS)} options")
            if option.group(1).lower() == "x":
                current["answer"].append(LETTERS[len(current["options"])])
            current["options"].append(line(_unescape(option.group(2)), 500))
        elif field is not None:
            name = field.group(1).lower()
            current["rubric" if name == "answer" else name] = _unescape(field.group(2).strip())
            current["fields"] = True
        elif raw.strip() and not current["options"] and "fields" not in current:
            current["question"] += " " + _unescape(raw.strip())  # the question goes on
    if not drafts:
        raise InputError(f"{path}:{start}: the quiz has no numbered questions (1. …); "
                         "see docs/lessons-import-export.md")
    questions = [_question(path, n, d) for n, d in enumerate(drafts, 1)]
    twice = {q.id for q in questions if sum(o.id == q.id for o in questions) > 1}
    if twice:  # ids as a file gave them, but twice: numbered instead
        questions = [q.model_copy(update={"id": f"q{n}"}) for n, q in enumerate(questions, 1)]
    taken = {s.id if not isinstance(s, DraftSlide) else "" for s in draft.scenes}
    quiz_id = quiz_id if quiz_id is not None and quiz_id not in taken else slug(title, "quiz")
    while quiz_id in taken:
        quiz_id += "_2"
    draft.add_scene(QuizScene(type="quiz", id=quiz_id, title=line(title) or "Quiz", questions=questions))


def _question(path: Path, number: int, draft: dict[str, Any]) -> QuizQuestion:
    where = f"{path}:{draft['line']}: question {number}"
    options, answer = draft["options"], draft["answer"]
    rubric = draft.get("rubric")
    points_text = str(draft.get("points") or "1").strip()
    if not _POINTS.match(points_text) or not 1 <= int(points_text) <= 100:
        raise InputError(f"{where}: Points: a whole number from 1 to 100 (not {line(points_text, 20)!r})")
    if options and not answer:
        raise InputError(f"{where}: mark the right option(s) with [x], e.g. '- [x] Carbon dioxide'")
    if not options and not rubric:
        raise InputError(f"{where}: give options ('- [x] right', '- [ ] wrong') or a 'Rubric:' line")
    kind = "short" if not options else ("single" if len(answer) == 1 else "multiple")
    if kind == "single" and draft.get("type") == "multiple":
        kind = "multiple"  # several may be right; this one has one
    explanation = draft.get("explanation")
    try:
        return QuizQuestion(id=draft.get("id") or f"q{number}", type=kind,  # type: ignore[arg-type]
                            question=line(draft["question"], 2000) or "?", options=options, answer=answer,
                            points=int(points_text), rubric=line(rubric, 2000) if kind == "short" and rubric else None,
                            explanation=line(explanation, 1000) if explanation else None)
    except ValidationError as exc:
        error = exc.errors()[0]
        raise InputError(f"{where}: {'.'.join(map(str, error['loc'])) or 'question'}: {error['msg']}") from None


def read_discussion(draft: Draft, topic: str, paragraphs: list[tuple[str, str]]) -> None:
    """A discussion from its heading's ``topic`` and its ``(raw, text)`` paragraphs, added to ``draft``."""
    scene_id: str | None = None
    title: str | None = None
    initiator: str | None = None
    prompt: list[str] = []
    script: list[ScriptStep] = []
    in_script = False
    for raw, written in paragraphs:
        said = text(written, 20_000)  # cleaned, as every text a file gives
        if not in_script and scene_id is None and (found := ID_COMMENT.match(raw)) is not None:
            scene_id = found.group(1)
            continue
        if not in_script and _SCRIPT.match(said):
            in_script = True
            continue
        if not in_script:
            field = DISCUSSION_FIELD.match(said)
            if field is not None and field.group(1).lower() == "title":
                title = line(field.group(2)) or None
                continue
            if field is not None:
                chosen = " ".join(field.group(2).lower().split())
                initiator = draft.speakers.get(chosen) or line(field.group(2), 40) or None
                continue
            first = line_step(" ".join(said.split()), set(), draft.speakers)
            if first is None or first.by is None or said.lstrip().startswith("\\"):
                prompt.append(said.strip()[1:] if said.strip().startswith("\\") else said)
                continue
            in_script = True
        for text_line in said.splitlines():
            step = line_step(text_line, set(), draft.speakers)
            if step is not None and len(script) < MAX_DISCUSSION_STEPS:
                script.append(step)
    if not topic and prompt:
        topic = prompt.pop(0)
    if not line(topic):
        raise InputError(f"{draft.path}: a discussion section needs its question: '## Discussion: …'")
    taken = {s.id for s in draft.scenes if not isinstance(s, DraftSlide)}
    if scene_id is None or scene_id in taken:
        scene_id = "discussion" if "discussion" not in taken else f"discussion_{len(taken) + 1}"
        while scene_id in taken:
            scene_id += "_2"
    draft.add_scene(DiscussionScene(type="discussion", id=scene_id, title=title, topic=line(topic, 500),
                                    prompt=line(" ".join(prompt), 2000) or None, initiator=initiator,
                                    script=script))
