"""Teacher's notes in Markdown as a lesson (read with markdown-it-py; raw HTML is never used).

* ``# Title`` (or a ``title:`` in YAML front matter) is the lesson's title; a paragraph before
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
* ``## Discussion: the question`` starts a discussion; its paragraphs are the prompt.

A quiz that breaks these rules is refused as ``path:line: question N: problem`` (exit 2).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..errors import InputError
from ..files import read_bounded
from ..lessons.lesson import LETTERS, DiscussionScene, QuizQuestion, QuizScene
from .import_common import MAX_CELL, MAX_ITEMS, MAX_ROWS, Draft, DraftSlide, line, slug, text

MAX_NOTES_BYTES = 2 * 2**20
MAX_QUESTIONS = 50
_SECTION = re.compile(r"^\s*(quiz|discussion)\s*(?:[:.–—-]\s*(.*))?$", re.IGNORECASE)
_QUESTION = re.compile(r"^\s{0,3}(\d{1,3})[.)]\s+(.*)$")
_OPTION = re.compile(r"^\s*[-*+]\s+\[( |x|X)\]\s*(.*)$")
_FIELD = re.compile(r"^\s*(answer|rubric|explanation|points)\s*:\s*(.*)$", re.IGNORECASE)
_FRONT_MATTER = re.compile(r"\A---[ \t]*\n(.{0,20000}?\n)?---[ \t]*(?:\n|\Z)", re.DOTALL)
_FRONT_TITLE = re.compile(r"^title\s*:\s*[\"']?(.*?)[\"']?\s*$", re.MULTILINE)
_ESCAPED = re.compile(r"\\([!-/:-@\[-`{-~])")  # a Markdown backslash escape: the character itself
_FORMULA = re.compile(r"^\s*\$\$(.+)\$\$\s*$", re.DOTALL)


def _parser() -> Any:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": False}).enable("table")


def _inline_text(token: Any) -> str:
    """An inline token's text without markup (an image counts as its alt text)."""
    parts: list[str] = []
    for child in token.children or []:
        if child.type in ("text", "code_inline"):
            parts.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            parts.append("\n")
        elif child.type == "image":
            parts.append(child.content)
    return "".join(parts)


def _only_images(token: Any) -> list[str] | None:
    """The alt texts, if the paragraph holds images and nothing else."""
    children = [c for c in token.children or [] if not (c.type in ("softbreak", "hardbreak")
                                                        or (c.type == "text" and not c.content.strip()))]
    if children and all(c.type == "image" for c in children):
        return [c.content for c in children]
    return None


class _Reader:
    def __init__(self, path: Path, source: str) -> None:
        self.path, self.lines = path, source.splitlines()
        self.draft = Draft(path)
        self.notes: list[str] = []
        self.slide: DraftSlide | None = None

    def run(self, tokens: list[Any]) -> Draft:
        index = 0
        while index < len(tokens):
            index = self.block(tokens, index)
        self.close_slide()
        return self.draft

    def close_slide(self) -> None:
        if self.slide is not None:
            self.slide.notes = text("\n\n".join(self.notes), 100_000)
        self.slide, self.notes = None, []

    def block(self, tokens: list[Any], index: int) -> int:
        token = tokens[index]
        end = _closing(tokens, index)
        if token.type == "heading_open" and token.tag in ("h1", "h2"):
            heading = line(_inline_text(tokens[index + 1]))
            if token.tag == "h1" and not self.draft.title:
                self.draft.title = heading
                return end + 1
            self.close_slide()
            section = _SECTION.match(heading)
            stop = _next_h2(tokens, end + 1)
            if section is not None:
                start_line = token.map[1] if token.map else 0
                stop_line = tokens[stop].map[0] if stop < len(tokens) and tokens[stop].map else len(self.lines)
                if section.group(1).lower() == "quiz":
                    self.quiz(section.group(2) or "Quiz", start_line, stop_line)
                else:
                    self.discussion(section.group(2) or "", tokens[end + 1:stop])
                return stop
            self.slide = self.draft.slide(heading)
            return end + 1
        if self.slide is None:  # before the first slide: the description, then a slide of its own
            if token.type == "paragraph_open" and self.draft.description is None and not self.draft.scenes:
                self.draft.description = line(_inline_text(tokens[index + 1]), 2000) or None
                return end + 1
            self.slide = self.draft.slide(self.draft.title or "Introduction")
        slide = self.slide
        if token.type == "paragraph_open":
            inline = tokens[index + 1]
            images, said = _only_images(inline), _inline_text(inline)
            formula = _FORMULA.match(inline.content)
            if images is not None:
                for alt in images:
                    slide.add("image", content=line(alt, 1000) or "A picture (it has no alt text)")
            elif formula is not None:
                slide.add("formula", content=text(formula.group(1).strip()))
            else:
                self.notes.append(said)
        elif token.type in ("bullet_list_open", "ordered_list_open"):
            items = _list_items(tokens[index:end + 1])
            if items:
                slide.add("bullets", items=items[:MAX_ITEMS])
        elif token.type == "table_open":
            rows = _table_rows(tokens[index:end + 1])
            if rows:
                slide.add("table", rows=rows)
        elif token.type in ("fence", "code_block"):
            language = line(token.info.split()[0], 30) if token.info.strip() else None
            code = token.content[:-1] if token.content.endswith("\n") else token.content  # the line break before ```
            slide.add("code", content=text(code, keep_ends=True), language=language or None)
        elif token.type == "blockquote_open" or (token.type == "heading_open"):
            said = "\n".join(_inline_text(t) for t in tokens[index:end + 1] if t.type == "inline")
            if said.strip():
                slide.add("text", content=text(said))
        return end + 1

    # -- quiz and discussion sections ----------------------------------------------------------
    def quiz(self, title: str, start: int, stop: int) -> None:
        drafts: list[dict[str, Any]] = []
        current: dict[str, Any] | None = None
        for number in range(start, min(stop, len(self.lines))):
            raw = self.lines[number]
            question, option, field = _QUESTION.match(raw), _OPTION.match(raw), _FIELD.match(raw)
            if question is not None:
                if len(drafts) >= MAX_QUESTIONS:
                    raise InputError(f"{self.path}:{number + 1}: a quiz holds at most {MAX_QUESTIONS} questions")
                current = {"line": number + 1, "question": _ESCAPED.sub(r"\1", question.group(2).strip()),
                           "options": [], "answer": []}
                drafts.append(current)
            elif current is None:
                continue  # an introduction before the first question
            elif option is not None:
                if len(current["options"]) >= len(LETTERS):
                    raise InputError(f"{self.path}:{number + 1}: question {len(drafts)}: at most {len(LETTERS)} "
                                     "options")
                if option.group(1).lower() == "x":
                    current["answer"].append(LETTERS[len(current["options"])])
                current["options"].append(line(_ESCAPED.sub(r"\1", option.group(2)), 500))
            elif field is not None:
                name = field.group(1).lower()
                current["rubric" if name == "answer" else name] = _ESCAPED.sub(r"\1", field.group(2).strip())
                current["fields"] = True
            elif raw.strip() and not current["options"] and "fields" not in current:
                current["question"] += " " + _ESCAPED.sub(r"\1", raw.strip())  # the question goes on
        if not drafts:
            raise InputError(f"{self.path}:{start}: the quiz has no numbered questions (1. …); see the README")
        questions = [self.question(n, d) for n, d in enumerate(drafts, 1)]
        taken = {s.id if not isinstance(s, DraftSlide) else "" for s in self.draft.scenes}
        quiz_id = slug(title, "quiz")
        while quiz_id in taken:
            quiz_id += "_2"
        self.draft.add_scene(QuizScene(type="quiz", id=quiz_id, title=line(title) or "Quiz", questions=questions))

    def question(self, number: int, draft: dict[str, Any]) -> QuizQuestion:
        where = f"{self.path}:{draft['line']}: question {number}"
        options, answer = draft["options"], draft["answer"]
        rubric = draft.get("rubric")
        points_text = str(draft.get("points") or "1")
        if not points_text.isdigit() or not 1 <= int(points_text) <= 100:
            raise InputError(f"{where}: Points: a whole number from 1 to 100 (not {line(points_text, 20)!r})")
        if options and not answer:
            raise InputError(f"{where}: mark the right option(s) with [x], e.g. '- [x] Carbon dioxide'")
        if not options and not rubric:
            raise InputError(f"{where}: give options ('- [x] right', '- [ ] wrong') or a 'Rubric:' line")
        kind = "short" if not options else ("single" if len(answer) == 1 else "multiple")
        explanation = draft.get("explanation")
        try:
            return QuizQuestion(id=f"q{number}", type=kind, question=line(draft["question"], 2000) or "?",  # type: ignore[arg-type]
                                options=options, answer=answer, points=int(points_text),
                                rubric=line(rubric, 2000) if kind == "short" and rubric else None,
                                explanation=line(explanation, 1000) if explanation else None)
        except ValidationError as exc:
            error = exc.errors()[0]
            raise InputError(f"{where}: {'.'.join(map(str, error['loc'])) or 'question'}: {error['msg']}") from None

    def discussion(self, topic: str, tokens: list[Any]) -> None:
        paragraphs = [_inline_text(tokens[i + 1]) for i, t in enumerate(tokens) if t.type == "paragraph_open"]
        if not topic and paragraphs:
            topic = paragraphs.pop(0)
        if not line(topic):
            raise InputError(f"{self.path}: a discussion section needs its question: '## Discussion: …'")
        prompt = line(" ".join(paragraphs), 2000) or None
        taken = {s.id for s in self.draft.scenes if not isinstance(s, DraftSlide)}
        scene_id = "discussion" if "discussion" not in taken else f"discussion_{len(taken) + 1}"
        self.draft.add_scene(DiscussionScene(type="discussion", id=scene_id, topic=line(topic, 500), prompt=prompt))


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
        if tokens[position].type == "heading_open" and tokens[position].tag in ("h1", "h2"):
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


def read_markdown(path: Path) -> Draft:
    """The notes at ``path`` as a lesson draft (raises :class:`InputError` naming the file)."""
    data = read_bounded(path, MAX_NOTES_BYTES, "Markdown file")
    try:
        source = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    title = ""
    front = _FRONT_MATTER.match(source)
    if front is not None:  # YAML front matter (Jekyll, Obsidian …): its title, and blank lines in its place
        found = _FRONT_TITLE.search(front.group(1) or "")
        title = line(found.group(1)) if found else ""
        source = "\n" * front.group(0).count("\n") + source[front.end():]
    try:
        tokens = _parser().parse(source)
    except RecursionError:
        raise InputError(f"{path}: nested too deeply to read") from None
    reader = _Reader(path, source)
    reader.draft.title = title  # then a first-level heading is a slide of its own
    return reader.run(tokens)
