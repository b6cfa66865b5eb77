"""``maic lesson export --out class.maic.zip``: a lesson as a classroom OpenMAIC imports.

Each slide becomes a slide scene on OpenMAIC's 1000 × 562.5 canvas: the title as a title text box, then the
elements top to bottom (text and bullets as HTML text boxes, formulas as LaTeX, tables as table cells, code as
OpenMAIC's code elements, a picture's description as a text box); element ids are kept, so the script's spotlight
and laser actions point at them.  The script becomes ``speech``, ``spotlight`` and ``laser`` actions.  A quiz
becomes a quiz scene (choices keep their letters as values; a short answer's rubric is its grading guidance).
OpenMAIC has no discussion scene: a discussion is a ``discussion`` action at the end of the scene before it
(or at the start of the first scene), its scripted lines ``speech`` actions just before it.

What OpenMAIC cannot hold is said, one line each, in the notes :func:`classroom_zip` returns: a classmate's line
is spoken by OpenMAIC's teacher (its speech has no speaker; maic keeps the speaker in the action's description, as
``said by Name (agent_id)``, and reads it back), a picture has no image, a discussion has no scene of its own.
Every element carries its maic kind in its ``name`` (``maic:bullets``, ``maic:formula``), so a classroom maic
wrote comes back as it was.
"""

from __future__ import annotations

import io
import json
import time
import zipfile
from html import escape
from pathlib import Path
from typing import Any

from .. import __version__
from ..engine.models import AgentConfig, SlideElement
from ..lessons.lesson import LETTERS, DiscussionScene, Lesson, QuizQuestion, QuizScene, ScriptStep, SlideScene
from ..store.paths import write_atomic
from ..untrusted import clean
from .openmaic_format import BEFORE, CANVAS_RATIO, CANVAS_WIDTH, FORMAT_VERSION, HOLDER, MANIFEST

_FONT = "Microsoft YaHei"
_COLOR = "#333333"
_LEFT, _WIDTH = 60, 880
_TOP, _BOTTOM = 110, 540  # below the title, above the canvas' bottom edge


def _html_paragraphs(lines: list[str], style: str = "") -> str:
    attr = f' style="{style}"' if style else ""
    return "".join(f"<p{attr}>{escape(clean(line))}</p>" for line in lines) or "<p></p>"


def _lines(element: SlideElement) -> int:
    if element.type == "bullets":
        return max(1, len(element.items))
    if element.type == "table":
        return max(1, len(element.rows))
    return max(1, element.content.count("\n") + 1 + len(element.content) // 90)


def _base(element_id: str, top: float, height: float, name: str) -> dict[str, Any]:
    return {"id": element_id, "left": _LEFT, "top": round(top, 1), "width": _WIDTH, "height": round(height, 1),
            "rotate": 0, "name": name}


def _text_box(element_id: str, top: float, height: float, name: str, content: str, **extra: Any) -> dict[str, Any]:
    return {**_base(element_id, top, height, name), "type": "text", "content": content, "defaultFontName": _FONT,
            "defaultColor": _COLOR, "lineHeight": 1.4, **extra}


def _element(element: SlideElement, top: float, height: float) -> dict[str, Any]:
    if element.type == "formula":  # OpenMAIC's renderer shows ``html`` (KaTeX's, made when it generates a slide)
        latex = clean(element.content)
        return {**_base(element.id, top, height, "maic:formula"), "type": "latex", "latex": latex,
                "html": f'<span class="maic-latex" style="font-family: serif;">{escape(latex)}</span>',
                "color": _COLOR, "align": "left", "fixedRatio": False}
    if element.type == "table":
        width = max((len(row) for row in element.rows), default=1)
        data = [[{"id": f"{element.id}_{r}_{c}", "colspan": 1, "rowspan": 1,
                  "text": clean(row[c]) if c < len(row) else ""} for c in range(width)]
                for r, row in enumerate(element.rows)]
        return {**_base(element.id, top, height, "maic:table"), "type": "table",
                "outline": {"width": 2, "style": "solid", "color": "#eeece1"},
                "theme": {"color": "#4472c4", "rowHeader": True, "rowFooter": False, "colHeader": False,
                          "colFooter": False},
                "colWidths": [round(1 / width, 4)] * width, "cellMinHeight": 36, "data": data}
    if element.type == "bullets":
        items = "".join(f"<li><p>{escape(clean(item))}</p></li>" for item in element.items)
        return _text_box(element.id, top, height, "maic:bullets", f"<ul>{items}</ul>", textType="content")
    if element.type == "code":  # OpenMAIC's own code element (lib/types/slides.ts: PPTCodeElement)
        lines = clean(element.content).rstrip("\n").split("\n")
        return {**_base(element.id, top, height, f"maic:code:{element.language}" if element.language else "maic:code"),
                "type": "code", "language": element.language or "text",
                "lines": [{"id": f"L{n}", "content": text} for n, text in enumerate(lines, 1)],
                "showLineNumbers": True, "fontSize": 14}
    kind = "maic:image" if element.type == "image" else f"maic:{element.type}"
    return _text_box(element.id, top, height, kind, _html_paragraphs(element.content.split("\n")), textType="content")


def _canvas(scene: SlideScene) -> dict[str, Any]:
    elements: list[dict[str, Any]] = [
        _text_box(f"{scene.id}_title", 30, 60, "maic:title",
                  f'<p><strong><span style="font-size: 32px;">{escape(clean(scene.title))}</span></strong></p>',
                  textType="title")]
    lines = [_lines(element) for element in scene.elements]
    unit = (_BOTTOM - _TOP) / max(sum(lines) + len(lines), 1)  # each element its lines and a gap's share
    top = float(_TOP)
    for element, count in zip(scene.elements, lines, strict=True):
        height = max(unit * count, 24.0)
        elements.append(_element(element, top, height))
        top += height + unit
    return {"id": scene.id, "viewportSize": CANVAS_WIDTH, "viewportRatio": CANVAS_RATIO,
            "theme": {"backgroundColor": "#ffffff", "themeColors": ["#4472c4", "#ed7d31", "#a5a5a5", "#ffc000"],
                      "fontColor": _COLOR, "fontName": _FONT},
            "elements": elements, "background": {"type": "solid", "color": "#ffffff"}, "type": "content"}


class _Actions:
    """Numbers the actions of the whole classroom (OpenMAIC wants every action to have an id)."""

    def __init__(self, names: dict[str, str]) -> None:
        self.count = 0
        self.names = names  # agent id -> name, for a classmate's line
        self.by_lines = 0

    def _id(self, kind: str) -> str:
        self.count += 1
        return f"{kind}_{self.count}"

    def step(self, step: ScriptStep, prefix: str = "") -> dict[str, Any]:
        if step.say is not None:
            action: dict[str, Any] = {"id": self._id("speech"), "type": "speech", "text": clean(step.say)}
            if step.by is not None:
                self.by_lines += 1
                action["description"] = f"{prefix}said by {self.names.get(step.by, step.by)} ({step.by})"
            elif prefix:
                action["description"] = f"{prefix}said by the teacher"
            return action
        kind = "spotlight" if step.spotlight else "laser"
        return {"id": self._id(kind), "type": kind, "elementId": step.target}

    def discussion(self, scene: DiscussionScene, before: bool = False) -> list[dict[str, Any]]:
        """``before``: it opens the lesson, so it comes before the scene that holds it (said in its
        description, which maic reads back)."""
        out = [self.step(step, "discussion: ") for step in scene.script]
        self.count += 1  # the id names the scene, so maic reads the same id back
        action: dict[str, Any] = {"id": f"discussion-{scene.id}", "type": "discussion", "topic": clean(scene.topic)}
        if scene.prompt:
            action["prompt"] = clean(scene.prompt)
        if scene.title:
            action["title"] = clean(scene.title)
        if scene.initiator in self.names:  # (OpenMAIC's agentId names an agent of its registry: none here)
            action["description"] = f"opened by {self.names[scene.initiator]} ({scene.initiator})"
        if before:
            action["description"] = f"{BEFORE}; {action.get('description', 'opened by the class')}"
        return [*out, action]


def _question(question: QuizQuestion) -> dict[str, Any]:
    if question.type == "short":
        return {"id": question.id, "type": "short_answer", "question": clean(question.question),
                "commentPrompt": clean(question.rubric or ""), "hasAnswer": False, "points": question.points,
                **({"analysis": clean(question.explanation)} if question.explanation else {})}
    return {"id": question.id, "type": question.type, "question": clean(question.question),
            "options": [{"label": clean(option), "value": LETTERS[i]} for i, option in enumerate(question.options)],
            "answer": list(question.answer), "hasAnswer": True, "points": question.points,
            **({"analysis": clean(question.explanation)} if question.explanation else {})}


def _agent(agent: AgentConfig) -> dict[str, Any]:
    return {"name": clean(agent.name), "role": agent.role, "persona": clean(agent.persona).strip() or agent.name,
            "avatar": agent.avatar or "🙂", "color": agent.color or "#4f9dde", "priority": agent.priority}


def classroom_manifest(lesson: Lesson, agents: list[AgentConfig]) -> tuple[dict[str, Any], list[str]]:
    """The manifest of ``lesson`` held by ``agents``, and what OpenMAIC cannot carry (one line each)."""
    names = {agent.id: agent.name for agent in agents}
    actions = _Actions(names)
    scenes: list[dict[str, Any]] = []
    waiting: list[dict[str, Any]] = []  # a discussion before any scene: opens the next one
    pictures = 0
    for scene in lesson.scenes:
        if isinstance(scene, DiscussionScene):
            (scenes[-1]["actions"] if scenes else waiting).extend(actions.discussion(scene, before=not scenes))
            continue
        if isinstance(scene, SlideScene):
            pictures += sum(1 for element in scene.elements if element.type == "image")
            entry: dict[str, Any] = {"type": "slide", "title": clean(scene.title), "order": len(scenes) + 1,
                                     "content": {"type": "slide", "canvas": _canvas(scene)},
                                     "actions": [actions.step(step) for step in scene.script]}
        else:
            assert isinstance(scene, QuizScene)
            entry = {"type": "quiz", "title": clean(scene.title), "order": len(scenes) + 1,
                     "content": {"type": "quiz", "questions": [_question(q) for q in scene.questions]}, "actions": []}
        entry["actions"] = [*waiting, *entry["actions"]]
        waiting = []
        scenes.append(entry)
    if waiting:  # a lesson of discussions only: one empty slide to hold them
        scenes.append({"type": "slide", "title": clean(lesson.title), "order": 1,
                       "content": {"type": "slide", "canvas": {"id": HOLDER, "viewportSize": CANVAS_WIDTH,
                                                               "viewportRatio": CANVAS_RATIO, "elements": [],
                                                               "theme": {"backgroundColor": "#ffffff",
                                                                         "themeColors": ["#4472c4"],
                                                                         "fontColor": _COLOR, "fontName": _FONT}}},
                       "actions": waiting})
    now = int(time.time() * 1000)
    manifest = {"formatVersion": FORMAT_VERSION,
                "exportedAt": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(now / 1000)),
                "appVersion": f"maic {__version__}",
                "stage": {"name": clean(lesson.title), "createdAt": now, "updatedAt": now,
                          **({"description": clean(lesson.description)} if lesson.description else {}),
                          **({"language": clean(lesson.language)} if lesson.language else {})},
                "agents": [_agent(agent) for agent in agents], "scenes": scenes, "mediaIndex": {}}
    notes = []
    if actions.by_lines:
        notes.append(f"{actions.by_lines} line(s) said by classmates are spoken by OpenMAIC's teacher (its speech "
                     "has no speaker; the speaker is kept in each action's description, and maic reads it back)")
    formulas = sum(1 for scene in lesson.scenes if isinstance(scene, SlideScene)
                   for element in scene.elements if element.type == "formula")
    if formulas:
        notes.append(f"{formulas} formula(s) show their LaTeX source in OpenMAIC (its renderer draws the KaTeX it "
                     "makes when it generates a slide; maic makes none)")
    if pictures:
        notes.append(f"{pictures} picture(s) are descriptions in maic: written as text boxes, with no image")
    discussions = sum(1 for scene in lesson.scenes if isinstance(scene, DiscussionScene))
    if discussions:
        notes.append(f"{discussions} discussion(s) become discussion actions at the end of the scene before them "
                     "(OpenMAIC has no discussion scene)")
    return manifest, notes


def classroom_zip(lesson: Lesson, agents: list[AgentConfig]) -> tuple[bytes, list[str]]:
    """The ``.maic.zip`` bytes of ``lesson`` held by ``agents``, and the notes of what did not carry across."""
    manifest, notes = classroom_manifest(lesson, agents)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(MANIFEST, json.dumps(manifest, ensure_ascii=False, indent=2))
    return buffer.getvalue(), notes


def export_classroom(lesson: Lesson, out: Path, agents: list[AgentConfig]) -> list[str]:
    """Write ``lesson`` held by ``agents`` to ``out`` (atomically) as a classroom zip; the notes of what did not
    carry across."""
    data, notes = classroom_zip(lesson, agents)
    write_atomic(out, data)
    return notes
