"""What every importer of a teacher's material shares: limits, ids, cleaned text, the lesson it builds.

A file a teacher imports may have come from anyone, so everything read from it is
untrusted: text is cleaned (no terminal control sequences, invisible characters shown)
and cut to what a lesson holds, counts are bounded, and a problem is one line
``path: problem`` (exit 2).  Importers call :class:`Draft` with what they found; it makes
the element ids (simple words, unique in their slide), turns notes into scripts
(``authoring/notes_script.py``) and builds a :class:`~maic_cli.lessons.lesson.Lesson`.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from ..authoring.notes_script import notes_script
from ..engine.models import SlideElement
from ..errors import InputError
from ..lessons.lesson import MAX_SCENES, Lesson, Scene, SlideScene
from ..untrusted import clean

MAX_ELEMENTS = 40  # = SlideScene.elements' limit
MAX_TITLE = 200
MAX_TEXT = 4000  # an element's text
MAX_ITEMS = 50  # bullets in a list
MAX_ROWS = 60  # rows of a table (and cells in a row)
MAX_CELL = 500
_SIMPLE_ID = re.compile(r"^[a-z][a-z0-9_.-]{0,39}$")
SCENE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")  # = a scene's id pattern


def text(value: str, limit: int = MAX_TEXT, *, keep_ends: bool = False) -> str:
    """Untrusted text as a lesson keeps it: cleaned, surrogates gone, cut to ``limit`` characters (and stripped,
    unless ``keep_ends``: a code block's indentation and last line break are part of it)."""
    cleaned = clean(value.encode("utf-8", "surrogatepass").decode("utf-8", "replace"))
    cleaned = cleaned if keep_ends else cleaned.strip()
    return cleaned if len(cleaned) <= limit else cleaned[:limit - 1].rstrip() + "…"


def line(value: str, limit: int = MAX_TITLE) -> str:
    """Like :func:`text`, on one line."""
    return text(" ".join(value.split()), limit)


def simple_id(name: str) -> str | None:
    """``name`` if it is already a simple lower-case id (as ``maic lesson export`` names shapes)."""
    name = name.strip()
    return name if _SIMPLE_ID.match(name) else None


def slug(value: str, fallback: str) -> str:
    ascii_text = unicodedata.normalize("NFKD", value).encode("ascii", "ignore").decode()
    word = re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")
    if len(word) > 40:  # cut at a word's end
        word = word[:41].rsplit("-", 1)[0] if "-" in word[:41] else word[:40]
    return word.strip("-") or fallback


@dataclass
class DraftSlide:
    title: str
    preferred_id: str | None = None  # a simple id the source gave the slide (an exported deck's title shape)
    exact_id: bool = False  # preferred_id is the scene's id as a lesson wrote it (Markdown notes' id comment)
    elements: list[SlideElement] = field(default_factory=list)
    notes: str = ""
    taken: set[str] = field(default_factory=set)
    dropped: int = 0  # elements beyond the limit

    def add(self, kind: str, *, preferred: str | None = None, content: str = "", items: list[str] | None = None,
            rows: list[list[str]] | None = None, language: str | None = None, exact: bool = False) -> None:
        """One element, its id ``preferred`` (if free and simple; any id of 1 to 64 characters if ``exact``) or
        its kind's word, made unique."""
        if len(self.elements) >= MAX_ELEMENTS:
            self.dropped += 1
            return
        base = {"bullets": "points", "image": "picture"}.get(kind, kind)
        given = preferred if exact and preferred and len(preferred) <= 64 and preferred not in self.taken else None
        wanted = given or simple_id(preferred or "") or base
        element_id, number = wanted, 1
        while element_id in self.taken:
            number += 1
            element_id = f"{wanted}_{number}"
        self.taken.add(element_id)
        self.elements.append(SlideElement(id=element_id, type=kind,  # type: ignore[arg-type]
                                          content=content, items=items or [], rows=rows or [], language=language))


@dataclass
class Draft:
    """A lesson being imported: its title and its scenes in order."""

    path: Path
    title: str = ""
    description: str | None = None
    scenes: list[Scene | DraftSlide] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what the importer left out, for the user
    speakers: dict[str, str] = field(default_factory=dict)  # who a notes line may name (speakers)
    agents: list[str] | None = None  # the class, where the material names it (Markdown front matter)
    max_slides: int = MAX_SCENES  # a deck's quiz slides fold into one scene: it may hold more slides

    def slide(self, title: str) -> DraftSlide:
        if len(self.scenes) >= self.max_slides:
            raise InputError(f"{self.path}: more than {self.max_slides} slides and quizzes, more than a lesson "
                             "holds; split the material into several lessons")
        draft = DraftSlide(title=line(title) or f"Slide {len(self.scenes) + 1}")
        self.scenes.append(draft)
        return draft

    def add_scene(self, scene: Scene) -> None:
        if len(self.scenes) >= MAX_SCENES:
            raise InputError(f"{self.path}: more than {MAX_SCENES} scenes, more than a lesson holds")
        self.scenes.append(scene)

    def lesson(self) -> Lesson:
        try:
            return self._lesson()
        except ValidationError as exc:
            error = exc.errors()[0]
            where = ".".join(str(part) for part in error["loc"])
            raise InputError(f"{self.path}: cannot make a lesson of it: {where}: {error['msg']}") from None

    def _lesson(self) -> Lesson:
        taken: set[str] = set()
        scenes: list[Scene] = []
        dropped = 0
        for number, scene in enumerate(self.scenes, 1):
            if not isinstance(scene, DraftSlide):
                scene_id, extra = scene.id, 1
                while scene_id in taken or any(s is not scene and not isinstance(s, DraftSlide) and s.id == scene_id
                                               for s in self.scenes[number:]):
                    extra += 1
                    scene_id = f"{scene.id[:56]}_{extra}"
                scenes.append(scene if scene_id == scene.id else scene.model_copy(update={"id": scene_id}))
                taken.add(scene_id)
                continue
            dropped += scene.dropped
            reserved = {s.id for s in self.scenes if not isinstance(s, DraftSlide)}
            exact = scene.preferred_id if scene.exact_id and SCENE_ID.match(scene.preferred_id or "") else None
            wanted = exact or simple_id(scene.preferred_id or "") or slug(scene.title, f"slide-{number}")
            scene_id, extra = wanted, 1
            while scene_id in taken or scene_id in reserved:
                extra += 1
                scene_id = f"{wanted[:36]}_{extra}"
            taken.add(scene_id)
            scenes.append(SlideScene(type="slide", id=scene_id, title=scene.title, elements=scene.elements,
                                     script=notes_script(scene.notes, scene.elements, self.speakers)))
        if dropped:
            self.notes.append(f"{dropped} element(s) beyond {MAX_ELEMENTS} on a slide left out")
        if not scenes:
            raise InputError(f"{self.path}: no slides found (nothing to make a lesson from)")
        if len(scenes) > MAX_SCENES:
            raise InputError(f"{self.path}: {len(scenes)} slides, quizzes and discussions, more than a lesson holds "
                             f"({MAX_SCENES}); split the material into several lessons")
        title = line(self.title) or line(self.path.stem.replace("_", " ").replace("-", " ")) or "Imported lesson"
        return Lesson(title=title, description=self.description, agents=self.agents, scenes=scenes)
