"""Markdown notes bounded before markdown-it reads them: what a lesson cannot keep is never parsed.

markdown-it-py's time and memory grow with the tokens a file makes (about 350 bytes and tens
of microseconds each), not with its bytes, so a file of a million table cells or a
million one-letter paragraphs would take minutes and gigabytes to be thrown away.  Here,
line by line and outside code fences: a table row is cut to the cells a lesson keeps
(``MAX_ROWS``) and a table to the rows it keeps (the lines cut become blank, so line
numbers in errors stay true); then a file that still holds more lines or more marks
(the characters that make inline tokens: ``*_`[]<>!&|\\``) than notes for a lesson need is
refused in one line.
"""

from __future__ import annotations

import re
from pathlib import Path

from ..errors import InputError
from .common import MAX_ROWS

MAX_LINES = 20_000  # non-blank lines
MAX_MARKS = 60_000
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_DELIMITER_ROW = re.compile(r"^\s*\|?\s*:?-+:?\s*(?:\|\s*:?-+:?\s*)*\|?\s*$")
_CELL_SPLIT = re.compile(r"(?<!\\)((?:\\\\)*)\|")  # an unescaped pipe (after an even run of backslashes)
_MARKS = re.compile(r"[*_`\[\]<>!&|\\]")


def _cells(row: str) -> list[str]:
    """The cells of a table row as written (a leading and a trailing pipe are not cells)."""
    body = row.strip()
    parts = _CELL_SPLIT.split(body)
    cells, current = [], ""
    for number, part in enumerate(parts):  # split keeps each pipe's backslashes as its own group
        if number % 2 == 0:
            current += part
        else:
            cells.append(current + part)
            current = ""
    cells.append(current)
    if body.startswith("|"):
        cells = cells[1:]
    if body.endswith("|") and not body.endswith("\\|") and cells:
        cells = cells[:-1]
    return cells


def _cut_row(row: str) -> str:
    if row.count("|") <= MAX_ROWS + 1:
        return row
    cells = _cells(row)
    return row if len(cells) <= MAX_ROWS else "|" + "|".join(cells[:MAX_ROWS]) + "|"


def bound_source(path: Path, source: str) -> str:
    """``source`` with tables cut to what a lesson keeps; refused if it is still more than notes hold."""
    lines = source.replace("\r\n", "\n").replace("\r", "\n").split("\n")  # as markdown-it reads them
    fence: str | None = None
    table_rows = -1  # rows kept of the table being read; -1: not in a table
    for number, raw in enumerate(lines):
        opening = _FENCE.match(raw)
        if fence is not None:
            if opening is not None and opening.group(1)[0] == fence[0] and len(opening.group(1)) >= len(fence):
                fence = None
            continue
        if opening is not None:
            fence, table_rows = opening.group(1), -1
            continue
        if table_rows >= 0:
            if not raw.strip() or "|" not in raw:
                table_rows = -1
            elif table_rows >= MAX_ROWS + 1:  # header, delimiter and the rows a lesson keeps
                lines[number] = ""
                continue
            else:
                lines[number] = _cut_row(raw)
                table_rows += 1
                continue
        if "|" in raw and number + 1 < len(lines) and _DELIMITER_ROW.match(lines[number + 1]) \
                and "-" in lines[number + 1]:
            lines[number] = _cut_row(raw)
            table_rows = 0
    bounded = "\n".join(lines)
    filled = sum(1 for text in lines if text.strip())
    if filled > MAX_LINES:
        raise InputError(f"{path}: {filled:,} lines, more than notes for a lesson hold ({MAX_LINES:,}); "
                         "split it into several lessons")
    marks = len(_MARKS.findall(bounded))
    if marks > MAX_MARKS:
        raise InputError(f"{path}: {marks:,} Markdown marks (*, _, `, [, |, …), more than notes for a lesson hold "
                         f"({MAX_MARKS:,}); split it into several lessons")
    return bounded
