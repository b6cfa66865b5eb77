"""``maic lesson import class.maic.zip``: a classroom exported by OpenMAIC, read as a maic lesson.

The zip may have come from anyone: before anything is unpacked its members are counted and their declared sizes
and the manifest's compression ratio checked; only ``manifest.json`` is read (bounded), parsed as JSON, checked
as OpenMAIC's importer checks it (:func:`~.openmaic_format.manifest_problems`; a newer ``formatVersion`` is read
all the same, with a note), and every text taken from it is cleaned and cut to what a lesson holds.  Nothing in
it is fetched, run or written anywhere.

Scenes in their ``order``: a slide's canvas elements, top to bottom then left to right, become the slide's
elements (a text box's HTML as text, or bullets when it holds a list or several paragraphs (``openmaic_html``);
LaTeX as a formula; a table's cells; a picture as a described image; a shape's text as text); its ``speech``,
``spotlight`` and ``laser`` actions its script (a pointer at an element that was not kept is dropped); a
``discussion`` action a discussion scene after it, with its opener, closing lines and faqs (``openmaic_talk``); a
quiz's questions a quiz, its speech a slide just before it.  The classroom's agents are the lesson's class
(``openmaic_class``: the personas maic does not have are returned, to be written beside the lesson).  What maic
cannot hold is listed, one line each: interactive pages and projects, whiteboard drawings, videos, audio, lines
and bare shapes, pointers at what was left out, the agents' OpenMAIC voices.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..engine.models import AgentConfig, SlideElement
from ..errors import InputError, MaicError
from ..lessons.lesson import (
    MAX_FAQ,
    MAX_SCENES,
    ExpectedQuestion,
    Lesson,
    QuizScene,
    Scene,
    ScriptStep,
    SlideScene,
)
from ..store.personas import Registry, load_registry
from .common import MAX_CELL, MAX_ELEMENTS, MAX_ITEMS, MAX_ROWS, line, slug, text
from .openmaic_class import ClassroomClass, read_class
from .openmaic_format import (
    FORMAT_VERSION,
    HOLDER,
    MANIFEST,
    MAX_ACTIONS,
    MAX_MEMBERS,
    manifest_problems,
    media_prompts,
    newer_version,
    read_manifest,
    scalar,
    scene_order,
    scene_problems,
)
from .openmaic_html import html_blocks
from .openmaic_quiz import read_question, unique_ids
from .openmaic_talk import FAQ, expected, marked, read_discussions, said

_MAX_STEPS = 200  # = SlideScene.script's limit
_SCENE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


def element_box(element: dict[str, Any]) -> tuple[float, float]:
    def number(key: str) -> float:
        value = element.get(key)
        return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) \
            and abs(value) < 1e9 else 0.0
    return number("top"), number("left")


class SlideReader:
    """One slide being read: its kept elements, the map from OpenMAIC's element ids to maic's, what was left."""

    def __init__(self, notes: Counter[str], prompts: dict[str, str]) -> None:
        self.prompts = prompts  # a generated picture's element id -> the prompt it was drawn from
        self.elements: list[SlideElement] = []
        self.ids: dict[str, str] = {}
        self.notes = notes

    def add(self, source_id: Any, kind: str, *, content: str = "", items: list[str] | None = None,
            rows: list[list[str]] | None = None, language: str | None = None) -> None:
        if len(self.elements) >= MAX_ELEMENTS:
            self.notes["elements beyond the 40 a slide holds"] += 1
            return
        wanted = source_id if isinstance(source_id, str) and re.fullmatch(r"[A-Za-z0-9_.-]{1,40}", source_id) \
            else {"bullets": "points", "image": "picture"}.get(kind, kind)
        taken = {element.id for element in self.elements}
        element_id, number = wanted, 1
        while element_id in taken:
            number += 1
            element_id = f"{wanted}_{number}"
        self.elements.append(SlideElement(id=element_id, type=kind, content=content,  # type: ignore[arg-type]
                                          items=items or [], rows=rows or [], language=language))
        if isinstance(source_id, str):
            self.ids[source_id] = element_id

    def text_box(self, element: dict[str, Any], html: str, title: str) -> None:
        raw_name = element.get("name")
        name = raw_name if isinstance(raw_name, str) else ""
        blocks = html_blocks(html)
        if not blocks:
            return
        if (element.get("textType") == "title" and not name.startswith("maic:")) or name == "maic:title" or \
                (len(blocks) == 1 and line(blocks[0][1]) == title and not name.startswith("maic:")):
            return  # the slide's title, already the scene's
        hint = name[5:] if name.startswith("maic:") else ""
        lines = [text(block) for _, block in blocks]
        if hint.startswith("code"):
            code = "\n".join(block for _, block in html_blocks(html, keep_space=True))
            self.add(element.get("id"), "code", content=text(code, keep_ends=True).strip("\n") + "\n",
                     language=hint[5:] or None)
        elif hint in ("text", "image", "formula"):
            self.add(element.get("id"), hint, content=text("\n".join(lines)))
        elif hint == "bullets" or any(kind == "li" for kind, _ in blocks) or len(blocks) > 1:
            items = [line(block, MAX_CELL * 2) for _, block in blocks]
            if len(items) > MAX_ITEMS:
                self.notes["bullets beyond the 50 a list holds"] += len(items) - MAX_ITEMS
            self.add(element.get("id"), "bullets", items=items[:MAX_ITEMS])
        else:
            self.add(element.get("id"), "text", content=lines[0])

    def element(self, element: Any, title: str) -> None:
        if not isinstance(element, dict):
            return
        kind = element.get("type")
        if kind == "text" and isinstance(element.get("content"), str):
            self.text_box(element, element["content"], title)
        elif kind == "shape" and isinstance(element.get("text"), dict) and \
                isinstance(element["text"].get("content"), str) and html_blocks(element["text"]["content"]):
            self.text_box({**element, "textType": element["text"].get("type")}, element["text"]["content"], title)
        elif kind == "latex" and isinstance(element.get("latex"), str) and element["latex"].strip():
            self.add(element.get("id"), "formula", content=text(element["latex"]))
        elif kind == "table" and isinstance(element.get("data"), list):
            rows = [[line(cell.get("text", ""), MAX_CELL) if isinstance(cell, dict) and
                     isinstance(cell.get("text"), str) else "" for cell in row[:MAX_ROWS]]
                    for row in element["data"][:MAX_ROWS] if isinstance(row, list)]
            if len(element["data"]) > MAX_ROWS:
                self.notes["table rows beyond the 60 a table holds"] += len(element["data"]) - MAX_ROWS
            if rows:
                self.add(element.get("id"), "table", rows=rows)
        elif kind == "code" and isinstance(element.get("lines"), list):
            code = "\n".join(scalar(row.get("content")) for row in element["lines"][:2000] if isinstance(row, dict))
            language = element.get("language")
            language = language if isinstance(language, str) and re.fullmatch(r"[A-Za-z0-9_+#.-]{1,40}", language) \
                and element.get("name") != "maic:code" and (language != "text" or element.get("name") ==
                                                               "maic:code:text") else None
            if code.strip():
                self.add(element.get("id"), "code", content=text(code, keep_ends=True).strip("\n") + "\n",
                         language=language)
        elif kind == "chart" and isinstance(element.get("data"), dict):
            self.chart(element)
        elif kind == "image":
            raw_name = element.get("name")
            name = raw_name if isinstance(raw_name, str) else ""
            source = element.get("src")
            prompt = self.prompts.get(source) if isinstance(source, str) else None
            self.add(element.get("id"), "image",
                     content=line(name) or prompt or "A picture (its image stays in OpenMAIC)")
        else:
            self.notes[f"{_word(kind)} elements (maic has no such element)" if kind != "shape"
                       else "shapes without text"] += 1

    def chart(self, element: dict[str, Any]) -> None:
        """A chart as the table of its data: a row of labels, then a row of each series (its legend first)."""
        data = element["data"]
        labels = [line(scalar(label), MAX_CELL) for label in data["labels"][:MAX_ROWS]] \
            if isinstance(data.get("labels"), list) else []
        legends = data.get("legends") if isinstance(data.get("legends"), list) else []
        series = data.get("series") if isinstance(data.get("series"), list) else []
        rows = [["", *labels][:MAX_ROWS]] + [
            [line(scalar(legends[n]), MAX_CELL) if n < len(legends) else f"Series {n + 1}",
             *(line(scalar(value), 40) for value in values[:MAX_ROWS])][:MAX_ROWS]
            for n, values in enumerate(series[:MAX_ROWS - 1]) if isinstance(values, list)]
        if len(rows) > 1 or labels:
            self.notes["~chart(s) read as the table of their data (labels, then a row a series)"] += 1
            self.add(element.get("id"), "table", rows=rows)


def _word(kind: Any) -> str:
    """An element's or action's type, as said in a note (cleaned, one line, short)."""
    return (line(kind[:20]) or "untyped") if isinstance(kind, str) else "untyped"


@dataclass
class Classroom:
    """What a classroom zip holds for maic: the lesson, the personas of its class maic does not have (to be
    written beside it), and what did not carry across (one line each)."""

    lesson: Lesson
    notes: list[str]
    personas: list[AgentConfig] = field(default_factory=list)


def read_classroom(path: Path) -> tuple[Lesson, list[str]]:
    """The lesson in OpenMAIC's classroom zip ``path``, and what did not carry across (one line each)."""
    classroom = read(path)
    return classroom.lesson, classroom.notes


def _registry() -> Registry:
    try:
        return load_registry()
    except MaicError:  # a persona folder that cannot be read: no persona is recognised, each is written anew
        return Registry()


def read(path: Path) -> Classroom:
    """The classroom zip ``path`` as a :class:`Classroom`."""
    manifest = read_manifest(path)
    if problems := manifest_problems(manifest, strict=False):
        raise InputError(f"{path}: {MANIFEST}: {problems[0]}"
                         + (f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""))
    notes: Counter[str] = Counter()
    cls = read_class(manifest.get("agents"), _registry())
    stage = manifest["stage"]
    title = line(stage.get("name") or "") if isinstance(stage.get("name"), str) else ""
    scenes: list[Scene] = []
    taken: set[str] = set()

    def scene_id(base: str, given: Any = None) -> str:
        if isinstance(given, str) and _SCENE_ID.fullmatch(given) and given not in taken:
            taken.add(given)  # an id maic wrote (a slide's canvas id, a discussion action's)
            return given
        word, number = slug(base, "scene")[:56], 1
        candidate = word
        while candidate in taken:
            number += 1
            candidate = f"{word}-{number}"
        taken.add(candidate)
        return candidate

    prompts = media_prompts(manifest.get("mediaIndex"))
    usable = []
    for index, raw in enumerate(manifest["scenes"]):
        if scene_problems(raw, f"scenes[{index}]"):
            notes["scenes maic cannot read (of an unknown type, or without their content)"] += 1
        else:
            usable.append((scene_order(raw.get("order"), index), index, raw))
    try:
        for _, _, raw in sorted(usable, key=lambda item: (item[0], item[1])):
            read_scene(raw, scenes, scene_id, notes, prompts, cls)
    except ValidationError as exc:  # what the cleaning and the limits above missed: said, not a traceback
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first.get("loc", ()))
        raise InputError(f"{path}: {MANIFEST}: scene {len(scenes) + 1}: {line(where, 80)}: "
                         f"{line(str(first.get('msg', '')), 200)}") from None
    if len(scenes) > MAX_SCENES:
        notes[f"scenes beyond the {MAX_SCENES} a lesson holds"] += len(scenes) - MAX_SCENES
        scenes = scenes[:MAX_SCENES]
    if not scenes:
        raise InputError(f"{path}: the classroom has no slide, quiz or discussion maic can play")
    lines = []
    if (version := newer_version(manifest)) is not None:
        lines.append(f"formatVersion {version} is newer than the {FORMAT_VERSION} maic knows: read as OpenMAIC reads "
                     "it (what maic does not know is left out)")
    lines += cls.notes
    audio = [entry for entry in list(manifest["mediaIndex"].values())[:MAX_MEMBERS]
             if isinstance(entry, dict) and entry.get("type") == "audio" and not entry.get("missing")] \
        if isinstance(manifest.get("mediaIndex"), dict) else []
    if audio:
        lines.append(f"{len(audio)} audio clip(s) of the class's voices: not carried (maic voices the lesson itself, "
                     "each agent in the voice it casts; maic lesson export --voice puts them in a classroom)")
    lines += [f"{count} {what[1:]}" if what.startswith("~") else f"{count} {what}: not carried"
              for what, count in notes.items()]
    description = text(stage["description"], 2000) if isinstance(stage.get("description"), str) \
        and stage["description"].strip() else None
    language = line(stage["language"], 40) if isinstance(stage.get("language"), str) \
        and stage["language"].strip() else None
    try:
        lesson = Lesson(title=title or "Imported classroom", description=description, language=language,
                        agents=cls.ids or None, scenes=scenes)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first.get("loc", ()))
        raise InputError(f"{path}: {MANIFEST}: {where}: {line(str(first.get('msg', '')), 200)}") from None
    return Classroom(lesson, lines, cls.new)


def _speech(actions: list[dict[str, Any]], cls: ClassroomClass) -> list[ScriptStep]:
    """The lines a scene says (not a discussion's, not a faq), as script steps."""
    return [step for action in actions if action.get("type") == "speech" and not marked(action)
            and (step := said(action, cls)) is not None]


def read_scene(raw: dict[str, Any], scenes: list[Scene], scene_id: Any, notes: Counter[str],
           prompts: dict[str, str], cls: ClassroomClass) -> None:
    """One scene of the manifest as maic's scenes (none, a slide or a quiz, and the discussions after it)."""
    scene_title = line(raw.get("title") or "") if isinstance(raw.get("title"), str) else ""
    scene_title = scene_title or f"Scene {len(scenes) + 1}"
    listed: list[Any] = raw["actions"] if isinstance(raw.get("actions"), list) else []
    if len(listed) > MAX_ACTIONS:
        notes[f"actions beyond the {MAX_ACTIONS:,} of a scene maic reads"] += len(listed) - MAX_ACTIONS
    actions = [a for a in listed[:MAX_ACTIONS] if isinstance(a, dict)]
    if raw["type"] in ("interactive", "pbl"):
        notes[f"{raw['type']} scenes (maic has none; their speech is dropped too)"] += 1
        return
    if raw.get("whiteboards"):
        notes["scenes' whiteboards (maic's class draws its own)"] += 1
    if isinstance(raw.get("multiAgent"), dict) and raw["multiAgent"].get("enabled") is True:
        notes["scenes' own choice of agents (multiAgent; maic's class plays every scene)"] += 1
    if raw["type"] == "quiz":
        listed_questions = raw["content"]["questions"]
        if len(listed_questions) > 50:
            notes["quiz questions beyond the 50 a quiz holds"] += len(listed_questions) - 50
        questions = unique_ids([q for i, raw_q in enumerate(listed_questions[:50])
                                 if (q := read_question(raw_q, i, notes)) is not None])
        read_discussions(actions, scenes, scene_id, notes, cls, before=True)
        spoken = _speech(actions, cls)
        if spoken and questions:  # maic's quizzes do not speak: what OpenMAIC says on the quiz opens it, on a slide
            notes["~quiz scene(s)' speech said on a slide of its own just before the quiz"] += 1
            scenes.append(SlideScene(type="slide", id=scene_id(f"{scene_title} intro"), title=scene_title,
                                     script=spoken[:_MAX_STEPS]))
        if questions:
            scenes.append(QuizScene(type="quiz", id=scene_id(scene_title), title=scene_title, questions=questions))
        read_discussions(actions, scenes, scene_id, notes, cls)
        return
    current = SlideReader(notes, prompts)
    canvas = raw["content"]["canvas"]
    listed_elements: list[Any] = canvas["elements"] if isinstance(canvas.get("elements"), list) else []
    elements = [e for e in listed_elements[:2000] if isinstance(e, dict)]
    if len(listed_elements) > 2000:
        notes["elements beyond the 2,000 of a slide maic reads"] += len(listed_elements) - 2000
    for element in sorted(elements, key=element_box):
        current.element(element, scene_title)
    script: list[ScriptStep] = []
    faq: list[ExpectedQuestion] = []
    for action in actions:
        kind = action.get("type")
        if kind == "speech" and marked(action) == FAQ:
            if (entry := expected(action, cls, notes)) is not None and len(faq) < MAX_FAQ:
                faq.append(entry)
        elif kind == "speech" and not marked(action):
            if (step := said(action, cls)) is not None:
                script.append(step)
        elif kind in ("spotlight", "laser"):
            pointed = action.get("elementId")
            target = current.ids.get(pointed) if isinstance(pointed, str) else None
            if target is None:
                notes["pointers at elements that were not kept"] += 1
            else:
                script.append(ScriptStep(**{kind: target}))
        elif isinstance(kind, str) and kind.startswith("wb_"):
            notes["whiteboard drawing actions"] += 1
        elif kind not in ("speech", "discussion"):
            notes[f"{_word(kind)} actions"] += 1
    if len(script) > _MAX_STEPS:
        notes["script steps beyond the 200 a slide holds"] += len(script) - _MAX_STEPS
    read_discussions(actions, scenes, scene_id, notes, cls, before=True)
    if current.elements or script or canvas.get("id") != HOLDER:  # (not the empty slide maic writes to hold them)
        scenes.append(SlideScene(type="slide", id=scene_id(scene_title, canvas.get("id")), title=scene_title,
                                 elements=current.elements, script=script[:_MAX_STEPS], faq=faq))
    read_discussions(actions, scenes, scene_id, notes, cls)
