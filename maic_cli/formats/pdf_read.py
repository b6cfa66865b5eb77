"""A PDF (slides or a handout) as a lesson: one slide per page, from its text, with no script.

pypdf extracts each page's text; the first line is the slide's title, runs of lines that
start with a bullet mark (``•``, ``-``, ``*``, ``1.`` …) are ``bullets``, and the other
lines, joined until a blank line or a bullet, ``text`` elements.  A page with no text (a
scan) becomes a slide titled by its number that says so.  Nothing is invented: the
lecture is left to the teacher agent (or to ``--model``).  The file is untrusted:
bounded in size and pages, encrypted files refused, pypdf's own complaints kept quiet
(a broken file is one line ``path: problem``).

Text extraction costs time in proportion to the content a page draws, and pages may share
one huge content stream, so before a page's text is extracted its content streams are
decoded once each (pypdf's decompression limits lowered) and counted, and extraction counts
the operators it visits: a page drawing more than ``MAX_PAGE_CONTENT`` bytes or
``MAX_PAGE_ITEMS`` operators and operands, and the pages after ``MAX_CONTENT`` bytes or
``MAX_OPERATORS`` operators in all, keep their slide but not their text (a note says so).
"""

from __future__ import annotations

import io
import logging
import re
import warnings
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..files import read_bounded
from ..lessons.lesson import MAX_SCENES
from .common import MAX_ITEMS, Draft, DraftSlide, line, text

MAX_PDF_BYTES = 50 * 2**20
MAX_PAGE_CHARS = 20_000
MAX_PAGE_CONTENT = 512 * 2**10  # decoded content stream bytes one page may draw
MAX_CONTENT = 4 * 2**20  # … and all pages together (a stream drawn by two pages counts twice)
MAX_PAGE_ITEMS = 60_000  # operators and operands pypdf may parse in one content stream
MAX_OPERATORS = 100_000  # operators text extraction may visit in the whole PDF
MAX_STREAMS = 200  # content streams of one page
_LIMITS = {  # pypdf's own bounds (pypdf.apply_configuration), far below its defaults
    "zlib_maximum_output_length": MAX_PAGE_CONTENT * 4, "lzw_maximum_output_length": MAX_PAGE_CONTENT * 4,
    "run_length_maximum_output_length": MAX_PAGE_CONTENT * 4,
    "array_based_stream_maximum_output_length": MAX_PAGE_CONTENT * 4, "maximum_declared_stream_length": MAX_PDF_BYTES,
    "stream_parsing_work_maximum_count": MAX_PAGE_ITEMS, "xform_maximum_invocations_per_extraction": 50,
    "page_tree_maximum_entries": 10_000, "page_tree_maximum_page_entries": 10_000, "outline_maximum_entries": 1_000,
    "array_maximum_element_count": 20_000, "dictionary_maximum_element_count": 20_000,
}
_BULLET = re.compile(r"^\s*(?:[•◦▪▫■□●○‣⁃∙·*–—-]|\d{1,2}[.)])\s+(.*)$")


def page_slide(slide: DraftSlide, lines: list[str]) -> None:
    """The elements of one page from its text lines (the title already taken)."""
    bullets: list[str] = []
    paragraph: list[str] = []

    def flush() -> None:
        if bullets:
            slide.add("bullets", items=bullets[:MAX_ITEMS])
            bullets.clear()
        if paragraph:
            slide.add("text", content=text(" ".join(paragraph)))
            paragraph.clear()

    for raw in lines:
        bullet = _BULLET.match(raw)
        if bullet is not None:
            if paragraph:
                flush()
            if bullet.group(1).strip():
                bullets.append(line(bullet.group(1), 500))
        elif not raw.strip():
            flush()
        elif bullets and raw[:1].isspace():  # a bullet that goes on to the next line
            bullets[-1] = line(bullets[-1] + " " + raw, 500)
        else:
            if bullets:
                flush()
            paragraph.append(raw.strip())
    flush()


def _content_size(page: Any, sizes: dict[object, int]) -> int | None:
    """The decoded bytes of the content streams ``page`` draws (each stream decoded once, ``sizes`` keeping
    what was found); ``None`` if one is more than pypdf may decode."""
    from pypdf.errors import LimitReachedError
    from pypdf.generic import ArrayObject, IndirectObject

    contents = page.get("/Contents")
    if contents is None:
        return 0
    resolved = contents.get_object()
    items = list(resolved) if isinstance(resolved, ArrayObject) else [contents]
    if len(items) > MAX_STREAMS:
        return None
    total = 0
    for item in items:
        key: object = (item.idnum, item.generation) if isinstance(item, IndirectObject) else id(item)
        if key not in sizes:
            stream = item.get_object()
            try:
                sizes[key] = len(stream.get_data()) if hasattr(stream, "get_data") else 0
            except LimitReachedError:
                sizes[key] = -1  # more than pypdf may decode: never tried again
        if sizes[key] < 0:
            return None
        total += sizes[key]
    return total


class _OutOfOperators(Exception):
    pass


class _Operators:
    """What text extraction may still visit (pypdf calls it once an operator)."""

    def __init__(self) -> None:
        self.left = MAX_OPERATORS

    def __call__(self, *_: Any) -> None:
        self.left -= 1
        if self.left < 0:
            raise _OutOfOperators


def _page_text(page: Any, operators: _Operators) -> str | None:
    """The page's text, or ``None`` if extracting it would take more than is left."""
    from pypdf.errors import LimitReachedError

    try:
        return str(page.extract_text(visitor_operand_before=operators) or "")
    except (_OutOfOperators, LimitReachedError):
        return None


def read_pdf(path: Path) -> Draft:
    """The PDF at ``path`` as a lesson draft (raises :class:`InputError` naming the file)."""
    data = read_bounded(path, MAX_PDF_BYTES, "PDF")
    if not data.lstrip()[:5].startswith(b"%PDF"):
        raise InputError(f"{path}: not a PDF (it does not start with %PDF)")
    from pypdf import PdfReader, apply_configuration

    draft = Draft(path)
    quiet = logging.getLogger("pypdf")
    level = quiet.level
    quiet.setLevel(logging.CRITICAL)
    try:
        with warnings.catch_warnings(), apply_configuration(None, **_LIMITS):
            warnings.simplefilter("ignore")
            reader = PdfReader(io.BytesIO(data))
            if reader.is_encrypted:
                raise InputError(f"{path}: the PDF is encrypted; save an unprotected copy to import it")
            if len(reader.pages) > MAX_SCENES:
                raise InputError(f"{path}: {len(reader.pages)} pages, more than a lesson holds ({MAX_SCENES}); "
                                 "split it into several lessons")
            metadata = reader.metadata
            metadata_title = line(str(metadata.get("/Title") or "")) if metadata is not None else ""
            sizes: dict[object, int] = {}
            budget, operators = MAX_CONTENT, _Operators()
            for number, page in enumerate(reader.pages, 1):
                drawn = _content_size(page, sizes)
                extracted = None
                if drawn is not None and drawn <= min(MAX_PAGE_CONTENT, budget) and operators.left > 0:
                    budget -= drawn
                    extracted = _page_text(page, operators)
                if extracted is None:
                    slide = draft.slide(f"Page {number}")
                    slide.add("text", content="This page's text was not read (it draws more than a lesson's "
                                              "import reads).")
                    draft.notes.append(f"page {number}: its text was not read (its content is too large)")
                    continue
                page_text = text(extracted, MAX_PAGE_CHARS)
                lines = page_text.splitlines()
                while lines and not lines[0].strip():
                    lines.pop(0)
                if not lines:
                    slide = draft.slide(f"Page {number}")
                    slide.add("text", content="This page has no text (a picture or a scan).")
                    continue
                page_slide(draft.slide(lines[0]), lines[1:])
    except InputError:
        raise
    except Exception as exc:  # noqa: BLE001 - whatever a broken PDF makes pypdf raise is the file's fault
        raise InputError(f"{path}: not a readable PDF ({line(str(exc), 160) or type(exc).__name__})") from None
    finally:
        quiet.setLevel(level)
    first = draft.scenes[0] if draft.scenes else None
    draft.title = metadata_title or (first.title if isinstance(first, DraftSlide) else "")
    return draft
