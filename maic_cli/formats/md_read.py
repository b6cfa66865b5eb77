"""Teacher's notes in Markdown as a lesson (read with markdown-it-py; raw HTML is never used).

* ``# Title`` (or a ``title:`` in YAML front matter, where ``agents: [ids]`` names the class) is the
  lesson's title; a paragraph before
  the first slide its description (more
  before the first slide makes a slide of its own, under the lesson's title).
* ``## Heading`` starts a slide.  On it: lists are ``bullets`` (a nested item is indented by
  two spaces), tables ``table``, fenced or indented code ``code``, a paragraph that is only
  an image ``![alt](file)`` an ``image`` described by its alt text, a paragraph between
  ``$$`` a ``formula``, a quote (``> …``) or a ``### heading`` a ``text`` element.  Every
  other paragraph is what the teacher says: the script, sentence by sentence, with the
  spotlight on the element a sentence talks about.
* ``## Quiz`` (or ``## Quiz: title``) starts a quiz; its numbered items are questions::

      1. What does a plant take from the air?
         - [ ] Oxygen
         - [x] Carbon dioxide
         Explanation: Plants take in carbon dioxide and give off oxygen.
      2. Why are leaves green?
         Rubric: chlorophyll reflects green light
         Points: 2

  Options marked ``[x]`` are the right ones (one: single choice; several: multiple); a
  question without options needs ``Rubric:`` (or ``Answer:``), what a good short answer
  says.  ``Explanation:`` (one sentence, shown after grading) and ``Points:`` are optional.
* ``## Discussion: the question`` starts a discussion; its paragraphs are the prompt, then
  its opening script (``md_sections``).
* In a slide's paragraphs, ``Name: …`` (a classmate of the class) is a line that classmate says.

``maic lesson export`` writes the same format with what a viewer hides: an ``<!-- id: ID -->``
line after a heading (the scene's id), ``<!-- KIND: ID -->`` before each element (its kind and
id; alone, an empty element), and ``[script]`` before a script read line by line (see
``notes_script``).  Everything else it escapes, so the notes come back as the same scenes.

The file is untrusted and bounded before markdown-it sees it: 2 MB, table rows cut to the
cells a lesson keeps and tables to the rows it keeps (``md_bounds``).  A quiz that
breaks these rules is refused as ``path:line: question N: problem`` (exit 2).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..files import read_bounded
from .common import MAX_CELL, MAX_ITEMS, MAX_ROWS, Draft, DraftSlide, line, text
from .md_bounds import bound_source
from .md_sections import ID_COMMENT, read_discussion, read_quiz

MAX_NOTES_BYTES = 2 * 2**20
_SECTION = re.compile(r"^\s*(quiz|discussion)\s*(?:[:.–—-]\s*(.*))?$", re.IGNORECASE | re.DOTALL)
_FRONT_MATTER = re.compile(r"\A---[ \t]*\n(.{0,20000}?\n)?---[ \t]*(?:\n|\Z)", re.DOTALL)
_FRONT_TITLE = re.compile(r"^title\s*:\s*[\"']?(.*?)[\"']?\s*$", re.MULTILINE)
_FRONT_AGENTS = re.compile(r"^agents\s*:\s*\[?([^\]\n]*)\]?\s*$", re.MULTILINE)
_AGENT_ID = re.compile(r"^[a-z0-9][a-z0-9_-]{0,39}$")
_FORMULA = re.compile(r"^\s*\$\$(.+)\$\$\s*$", re.DOTALL)
KINDS = ("text", "bullets", "table", "code", "image", "formula", "chart", "video", "shape")
_HINT = re.compile(rf"^\s*<!--\s*({'|'.join(KINDS)})\s*:\s*(.+?)\s*-->\s*$", re.DOTALL)
_TEXT_KINDS = ("text", "formula", "chart", "video", "shape")  # kinds a quote may hold
MAX_HEADING = 600  # characters of a heading read (a discussion's topic may hold 500)


def _parser() -> Any:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": False}).enable("table")


def _alt(image: Any) -> str:
    """An image's alt text: its label's text (the token's content is the label as written)."""
    return _inline_text(image) if image.children else str(image.content)


def _inline_text(token: Any) -> str:
    """An inline token's text without markup (an image counts as its alt text)."""
    parts: list[str] = []
    for child in token.children or []:
        if child.type in ("text", "code_inline", "text_special"):
            parts.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            parts.append("\n")
        elif child.type == "image":
            parts.append(_alt(child))
    return "".join(parts)


def _only_images(token: Any) -> list[str] | None:
    """The alt texts, if the paragraph holds images and nothing else."""
    children = [c for c in token.children or [] if not (c.type in ("softbreak", "hardbreak")
                                                        or (c.type == "text" and not c.content.strip()))]
    if children and all(c.type == "image" for c in children):
        return [_alt(c) for c in children]
    return None


class _Reader:
    def __init__(self, path: Path, source: str, speakers: dict[str, str]) -> None:
        self.path, self.lines = path, source.splitlines()
        self.draft = Draft(path, speakers=speakers)
        self.notes: list[str] = []
        self.slide: DraftSlide | None = None
        self.fresh = False  # the slide was just started: an id comment names it
        self.hint: tuple[str, str] | None = None  # (kind, id) of the next element

    def run(self, tokens: list[Any]) -> Draft:
        index = 0
        while index < len(tokens):
            index = self.block(tokens, index)
        self.close_slide()
        return self.draft

    def close_slide(self) -> None:
        self.flush_hint()
        if self.slide is not None:
            self.slide.notes = text("\n\n".join(self.notes), 100_000)
        self.slide, self.notes = None, []

    def flush_hint(self) -> None:
        """A hint no element followed: the element it names, empty."""
        if self.hint is not None and self.slide is not None:
            kind, element_id = self.hint
            self.slide.add(kind, preferred=element_id, exact=True)
        self.hint = None

    def add(self, kind: str, **parts: Any) -> None:
        """An element of ``kind`` (or of the hint's kind, where its block may hold that kind) on the slide."""
        assert self.slide is not None
        hint, self.hint = self.hint, None
        if hint is not None and (hint[0] == kind or (kind == "text" and hint[0] in _TEXT_KINDS)):
            kind = hint[0]
        self.slide.add(kind, preferred=hint[1] if hint else None, exact=hint is not None, **parts)

    def block(self, tokens: list[Any], index: int) -> int:
        token = tokens[index]
        end = _closing(tokens, index)
        fresh, self.fresh = self.fresh, False
        if token.type == "heading_open" and token.tag in ("h1", "h2"):
            raw = tokens[index + 1].content
            heading = line(_inline_text(tokens[index + 1]), MAX_HEADING)
            if token.tag == "h1" and not self.draft.title:
                self.draft.title = line(heading)
                return end + 1
            self.close_slide()
            section = _SECTION.match(raw)  # as written: an escaped "Quiz\\:" is a slide's title
            stop = _next_h2(tokens, end + 1)
            if section is not None:
                named = _SECTION.match(heading)
                rest = (named.group(2) if named is not None else None) or ""
                start_line = token.map[1] if token.map else 0
                stop_line = tokens[stop].map[0] if stop < len(tokens) and tokens[stop].map else len(self.lines)
                if section.group(1).lower() == "quiz":
                    read_quiz(self.draft, self.lines, rest or "Quiz", start_line, stop_line)
                else:
                    read_discussion(self.draft, rest, [(tokens[i + 1].content, _inline_text(tokens[i + 1]))
                                                       for i in range(end + 1, stop)
                                                       if tokens[i].type == "paragraph_open"])
                return stop
            self.slide = self.draft.slide(line(heading))
            self.fresh = True
            return end + 1
        if self.slide is None:  # before the first slide: the description, then a slide of its own
            if token.type == "paragraph_open" and self.draft.description is None and not self.draft.scenes:
                self.draft.description = line(_inline_text(tokens[index + 1]), 2000) or None
                return end + 1
            self.slide = self.draft.slide(self.draft.title or "Introduction")
        if token.type == "paragraph_open":
            self.paragraph(tokens[index + 1], fresh)
        elif token.type in ("bullet_list_open", "ordered_list_open"):
            items = _list_items(tokens[index:end + 1])
            if items:
                self.add("bullets", items=items[:MAX_ITEMS])
        elif token.type == "table_open":
            rows = _table_rows(tokens[index:end + 1])
            if rows:
                self.add("table", rows=rows)
        elif token.type in ("fence", "code_block"):
            language = line(token.info.split()[0], 30) if token.info.strip() else None
            code = token.content[:-1] if token.content.endswith("\n") else token.content  # the line break before ```
            self.add("code", content=text(code, keep_ends=True), language=language or None)
        elif token.type == "blockquote_open" or (token.type == "heading_open"):
            said = "\n\n".join(_inline_text(t) for t in tokens[index:end + 1] if t.type == "inline")
            if said.strip() or self.hint is not None:
                self.add("text", content=text(said))
        return end + 1

    def paragraph(self, inline: Any, fresh: bool) -> None:
        assert self.slide is not None
        raw = inline.content
        named = ID_COMMENT.match(raw) if fresh else None
        if named is not None:
            self.slide.preferred_id, self.slide.exact_id = named.group(1), True
            return
        hint = _HINT.match(raw)
        if hint is not None:
            self.flush_hint()
            self.hint = (hint.group(1), " ".join(hint.group(2).split()))
            return
        images, formula = _only_images(inline), _FORMULA.match(raw)
        if images is not None:
            for alt in images:
                self.add("image", content=line(alt, 1000) or "A picture (it has no alt text)")
        elif formula is not None:
            self.add("formula", content=text(formula.group(1).strip()))
        else:
            self.flush_hint()
            self.notes.append(_inline_text(inline))


def _closing(tokens: list[Any], index: int) -> int:
    """The index of the token that closes the block opened at ``index`` (itself for a leaf)."""
    if tokens[index].nesting != 1:
        return index
    depth = 0
    for position in range(index, len(tokens)):
        depth += tokens[position].nesting
        if depth == 0:
            return position
    return len(tokens) - 1


def _next_h2(tokens: list[Any], index: int) -> int:
    for position in range(index, len(tokens)):
        if tokens[position].type == "heading_open" and tokens[position].tag in ("h1", "h2") \
                and tokens[position].level == 0:
            return position
    return len(tokens)


def _list_items(tokens: list[Any]) -> list[str]:
    items: list[str] = []
    depth = 0
    for token in tokens:
        if token.type in ("bullet_list_open", "ordered_list_open"):
            depth += 1
        elif token.type in ("bullet_list_close", "ordered_list_close"):
            depth -= 1
        elif token.type == "inline" and len(items) < MAX_ITEMS:
            said = line(_inline_text(token), 500)
            if said:
                items.append("  " * min(max(depth - 1, 0), 4) + said)
    return items


def _table_rows(tokens: list[Any]) -> list[list[str]]:
    rows: list[list[str]] = []
    for token in tokens:
        if token.type == "tr_open":
            rows.append([])
        elif token.type == "inline" and rows and len(rows[-1]) < MAX_ROWS:
            rows[-1].append(line(_inline_text(token), MAX_CELL))
    return [row for row in rows if any(row)][:MAX_ROWS]


def read_markdown(path: Path, speakers: Callable[[list[str] | None], dict[str, str]] | None = None) -> Draft:
    """The notes at ``path`` as a lesson draft (raises :class:`InputError` naming the file); a paragraph
    ``Name: …`` naming one of the class (``speakers`` of the front matter's ``agents:``, or of the default
    class for ``None``: lower-case name → agent id) is that agent's line."""
    data = read_bounded(path, MAX_NOTES_BYTES, "Markdown file")
    try:
        source = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    title, agents = "", None
    front = _FRONT_MATTER.match(source)
    if front is not None:  # YAML front matter (Jekyll, Obsidian …): its title and class, blank lines in its place
        found = _FRONT_TITLE.search(front.group(1) or "")
        title = line(found.group(1)) if found else ""
        named = _FRONT_AGENTS.search(front.group(1) or "")
        ids = [part.strip().strip("\"'") for part in named.group(1).split(",")] if named else []
        agents = [agent_id for agent_id in ids if _AGENT_ID.match(agent_id)][:20] or None
        source = "\n" * front.group(0).count("\n") + source[front.end():]
    source = bound_source(path, source)
    try:
        tokens = _parser().parse(source)
    except RecursionError:
        raise InputError(f"{path}: nested too deeply to read") from None
    reader = _Reader(path, source, speakers(agents) if speakers is not None else {})
    reader.draft.title = title  # then a first-level heading is a slide of its own
    reader.draft.agents = agents
    return reader.run(tokens)
