"""``maic lesson import``: a teacher's deck (.pptx), notes (.md), handout (.pdf) or an OpenMAIC classroom
(.maic.zip, :mod:`.openmaic_read`) read as a lesson.

The kind is told by the file's suffix; each reader (``pptx_read``, ``md_read``,
``pdf_read``) returns a draft that :mod:`.common` turns into a validated
:class:`~maic_cli.lessons.lesson.Lesson`.  A notes line ``Name: …`` naming one of the default
class (``speakers``) is that agent's line.  No model is called here: nothing is invented.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InputError
from ..lessons.lesson import Lesson

SUFFIXES = (".pptx", ".md", ".markdown", ".pdf", ".zip")


@dataclass
class Imported:
    lesson: Lesson
    notes: list[str] = field(default_factory=list)  # what was left out


def import_lesson(path: Path) -> Imported:
    """The lesson in ``path`` (raises :class:`InputError`, ``path: problem``, for anything unusable)."""
    from .speakers import class_speakers

    suffix = path.suffix.lower()
    if suffix == ".zip":  # a classroom exported by OpenMAIC (*.maic.zip)
        from .openmaic_read import read_classroom

        lesson, notes = read_classroom(path)
        return Imported(lesson, notes)
    if suffix == ".pptx":
        from .pptx_read import read_pptx

        draft = read_pptx(path, class_speakers().names)
    elif suffix in (".md", ".markdown"):
        from .md_read import read_markdown

        draft = read_markdown(path, lambda agents: class_speakers(agents).names)
    elif suffix == ".pdf":
        from .pdf_read import read_pdf

        draft = read_pdf(path)
    else:
        raise InputError(f"{path}: cannot import a {suffix or 'suffix-less'} file; give a PowerPoint deck (.pptx), "
                         "Markdown notes (.md), a PDF (.pdf) or an OpenMAIC classroom (.maic.zip) "
                         "(an old .ppt: save it as .pptx first)")
    lesson = draft.lesson()
    return Imported(lesson, draft.notes)
