"""Quiz and discussion slides in a deck, read back as quiz and discussion scenes.

``maic lesson export`` writes each quiz question as a slide (its text, its options lettered
``A. …``) whose notes hold the answer and a marker line, and a discussion as a slide whose
notes hold its prompt and a marker::

    Answer: B                      Rubric: what a good answer says      Use what you know about light.
    Explanation: Because …         Points: 2                             Opened by: curious_student
    [quiz: check q1 single]        [quiz: check q3 short]                [discussion: talk]

A discussion's notes may go on with its opening script: after a ``[script]`` line (or from the
first line that names a classmate, ``Mia: …``), a line a step (``notes_script.line_step``).
A teacher may write slides the same way.  Consecutive question slides of the same quiz id
become one quiz scene (titled by the slide title before ``: question``); a marked slide that
does not make a valid question (no options where the answer names letters, say) stays a
slide, and a note says so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from pydantic import ValidationError

from ..authoring.notes_script import line_step
from ..lessons.lesson import DiscussionScene, QuizQuestion, QuizScene, Scene, ScriptStep
from .common import Draft, DraftSlide, line

_ID = r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}"
_QUIZ = re.compile(rf"^\s*\[quiz:\s*({_ID})\s+({_ID})\s+(single|multiple|short)\s*\]\s*$", re.MULTILINE)
_DISCUSSION = re.compile(rf"^\s*\[discussion:\s*({_ID})\s*\]\s*$", re.MULTILINE)
_FIELD = re.compile(r"^\s*(answer|rubric|explanation|points|opened by)\s*:\s*(.*?)\s*$", re.IGNORECASE | re.MULTILINE)
_LETTERED = re.compile(r"^\s*[A-J][.)]\s+")
_SCRIPT = re.compile(r"^\s*\[\s*script\s*\]\s*$", re.IGNORECASE)
_POINTS = re.compile(r"^[0-9]{1,3}$")  # ASCII digits: "²" is a digit to str.isdigit, not to int
MAX_QUESTIONS = 50  # = QuizScene.questions' limit
MAX_DISCUSSION_STEPS = 60  # = DiscussionScene.script's limit


@dataclass
class _Quiz:
    id: str
    title: str
    questions: list[QuizQuestion] = field(default_factory=list)


def _fields(notes: str) -> dict[str, str]:
    return {m.group(1).lower(): m.group(2) for m in _FIELD.finditer(notes)}


def _question(slide: DraftSlide, question_id: str, kind: str) -> QuizQuestion:
    found = _fields(slide.notes)
    texts = [e for e in slide.elements if e.type == "text"]
    asked = next((e for e in texts if e.id == "question"), texts[0] if texts else None)
    lists = [e for e in slide.elements if e.type == "bullets"]
    options = next((e for e in lists if e.id == "options"), lists[0] if lists else None)
    points = found.get("points", "1")
    return QuizQuestion(
        id=question_id, type=kind,  # type: ignore[arg-type]
        question=asked.content if asked is not None else slide.title,
        options=[_LETTERED.sub("", item).strip() for item in options.items] if options and kind != "short" else [],
        answer=found.get("answer", "").replace(",", " ").split() if kind != "short" else [],
        rubric=line(found["rubric"], 2000) if kind == "short" and found.get("rubric") else None,
        explanation=line(found["explanation"], 1000) if found.get("explanation") else None,
        points=int(points) if _POINTS.match(points.strip()) else 1)


def _discussion(slide: DraftSlide, scene_id: str, speakers: dict[str, str]) -> DiscussionScene:
    head: list[str] = []
    script: list[ScriptStep] = []
    in_script = False
    for text in slide.notes.splitlines():
        if not in_script and _SCRIPT.match(text):
            in_script = True
            continue
        step = line_step(text, set(), speakers)
        if not in_script and (step is None or step.by is None or text.lstrip().startswith("\\")):
            head.append(text)
            continue
        in_script = True
        if step is not None and len(script) < MAX_DISCUSSION_STEPS:
            script.append(step)
    notes = "\n".join(head)
    found = _fields(notes)
    topic = next((e.content for e in slide.elements if e.type == "text"), slide.title)
    title = slide.title.removeprefix("Discussion:").strip() or None
    said = [text.strip() for text in _FIELD.sub("", _DISCUSSION.sub("", notes)).splitlines() if text.strip()]
    prompt = " ".join(" ".join((text[1:] if text.startswith("\\") else text).split()) for text in said)
    initiator = line(found.get("opened by", ""), 40) or None
    return DiscussionScene(type="discussion", id=scene_id, title=None if title == topic else title, topic=topic,
                           prompt=prompt or None, initiator=initiator, script=script)


def fold_marked(draft: Draft) -> None:
    """Turn ``draft``'s marked question and discussion slides into quiz and discussion scenes, in place."""
    scenes: list[Scene | DraftSlide | _Quiz] = []
    for scene in draft.scenes:
        if not isinstance(scene, DraftSlide):
            scenes.append(scene)
            continue
        quiz, talk = _QUIZ.search(scene.notes), _DISCUSSION.search(scene.notes)
        try:
            if quiz is not None:
                question = _question(scene, quiz.group(2), quiz.group(3))
                last = scenes[-1] if scenes else None
                if isinstance(last, _Quiz) and last.id == quiz.group(1) and len(last.questions) < MAX_QUESTIONS \
                        and question.id not in {q.id for q in last.questions}:
                    last.questions.append(question)
                else:
                    title = scene.title.rsplit(": question ", 1)[0] or "Quiz"
                    scenes.append(_Quiz(quiz.group(1), title, [question]))
                continue
            if talk is not None:
                scenes.append(_discussion(scene, talk.group(1), draft.speakers))
                continue
        except ValidationError as exc:
            problem = exc.errors()[0]["msg"]
            draft.notes.append(f"the slide {scene.title!r} is marked as a quiz or discussion but stays a slide: "
                               f"{problem}")
        scenes.append(scene)
    draft.scenes = [QuizScene(type="quiz", id=s.id, title=s.title, questions=s.questions) if isinstance(s, _Quiz)
                    else s for s in scenes]
