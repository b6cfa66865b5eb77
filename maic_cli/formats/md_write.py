"""``maic lesson export --out notes.md``: a lesson as the Markdown notes ``maic lesson import`` reads back.

The notes follow ``md_read``'s format, and whatever import would read as structure
is escaped: in running text every inline mark (``*``, ``_``, backticks, brackets, ``<``, an
``&`` that starts an entity, backslashes) and a mark that starts a block (``#``, ``>``, ``-``,
``+``, ``1.``, ``$$`` …); a slide's title that reads as a section (``Quiz: …``) has its first
letter written as a character reference; a script line that would read as a marker or a
speaker starts with ``\\``.  What Markdown cannot show is written where a viewer hides it
(``<!-- id: ID -->``, ``<!-- KIND: ID -->``), so export → import gives the same scenes.
Whitespace inside a line is one space (Markdown folds it anyway).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from ..authoring.notes_faq import faq_notes
from ..authoring.notes_script import script_notes, step_line
from ..engine.models import SlideElement
from ..lessons.lesson import LETTERS, DiscussionScene, ExpectedQuestion, Lesson, QuizScene, ScriptStep, SlideScene
from .md_sections import DISCUSSION_FIELD

_INLINE = re.compile(r"[\\`*\[\]<]|&(?=#?[A-Za-z0-9]+;)|(?<![^\W_])_|_(?![^\W_])")
_INLINE_HEADING = re.compile(_INLINE.pattern + "|#")
_LEADING = re.compile(r"^(?:[#>+=~|-]|\$\$|[0-9]{1,9}[.)])")
_SECTION = re.compile(r"^\s*(quiz|discussion)\s*(?:[:.–—-]\s*(.*))?$", re.IGNORECASE | re.DOTALL)
_BACKTICKS = re.compile(r"`+")


def flat(text: str) -> str:
    return " ".join(text.split())


def md_inline(text: str, *, heading: bool = False) -> str:
    """``text`` (one line) escaped so that Markdown reads it back as exactly this text (in a heading, every
    ``#`` too: a closing sequence)."""
    escaped = (_INLINE_HEADING if heading else _INLINE).sub(lambda match: "\\" + match.group(), text)
    leading = _LEADING.match(escaped)
    if leading is None:
        return escaped
    mark = leading.group()
    if mark[0].isdigit():  # "1." → "1\." (a backslash before a digit would be kept)
        return f"{mark[:-1]}\\{escaped[len(mark) - 1:]}"
    return "\\" + escaped


def md_heading(text: str) -> str:
    """A heading's text, escaped, and not read as a section: "Quiz: warm up" as a slide's title has its Q
    written &#81;."""
    text = flat(text)
    if _SECTION.match(text) is not None:
        return f"&#{ord(text[0])};" + md_inline(text[1:], heading=True)
    return md_inline(text, heading=True)


def _quiz_text(text: str) -> str:
    """A quiz line's text: read line by line after ``1.``, ``- [ ]`` or ``Rubric:``, backslash escapes undone, so
    only a backslash needs one."""
    return flat(text).replace("\\", "\\\\")


def _hint(element: SlideElement) -> str:
    return f"<!-- {element.type}: {flat(element.id)} -->"


def _empty(element: SlideElement) -> bool:
    if element.type == "bullets":
        return not [item for item in element.items if item.strip()]
    if element.type == "table":
        return not any(any(cell.strip() for cell in row) for row in element.rows)
    return not element.content.strip() if element.type != "code" else False


def _bullets(items: list[str]) -> list[str]:
    lines, level = [], -1
    for item in items:
        stripped = item.lstrip(" ")
        if not stripped.strip():
            continue
        level = min((len(item) - len(stripped)) // 2, level + 1, 4)  # Markdown nests one level at a time
        lines.append("  " * level + "- " + md_inline(flat(stripped)))
    return lines


def _table(rows: list[list[str]]) -> list[str]:
    kept = [row for row in rows if any(cell.strip() for cell in row)]
    columns = max(len(row) for row in kept)
    cells = [[md_inline(flat(c)).replace("|", "\\|") for c in row] + [""] * (columns - len(row)) for row in kept]
    return ["| " + " | ".join(cells[0]) + " |", "|" + " --- |" * columns,
            *("| " + " | ".join(row) + " |" for row in cells[1:])]


def _code(element: SlideElement) -> list[str]:
    language = flat(element.language or "")
    longest = max((len(run) for run in _BACKTICKS.findall(element.content)), default=0)
    fence = "`" * max(3, longest + 1)
    if "`" in language or " " in language:
        tildes = max((len(run) for run in re.findall(r"~+", element.content)), default=0)
        fence = "~" * max(3, tildes + 1)
    return [fence + language.split(" ")[0], element.content, fence]


def element_lines(element: SlideElement) -> list[str]:
    """An element as Markdown, after the comment that keeps its kind and id."""
    if _empty(element):
        return [_hint(element)]
    if element.type == "bullets":
        body = _bullets(element.items)
    elif element.type == "table":
        body = _table(element.rows)
    elif element.type == "code":
        body = _code(element)
    elif element.type == "formula" and "\n" not in element.content.strip():
        body = ["$$" + flat(element.content) + "$$"]
    elif element.type == "image":
        body = [f"![{md_inline(flat(element.content))}](picture)"]
    else:
        body = [("> " + md_inline(flat(part))) if part.strip() else ">" for part in element.content.strip().split("\n")]
    return [_hint(element), "", *body]


def _prompt(text: str, speakers: Mapping[str, str]) -> str:
    """A discussion's prompt: said as it is when it would read as a field, the script or a speaker."""
    said = flat(text)
    step = step_line(ScriptStep(say=said), speakers=speakers)
    needs = step.startswith("\\") or DISCUSSION_FIELD.match(said) is not None
    return md_inline("\\" + said if needs else said)


_PLAIN_MARKER = re.compile(r"^\[(?:script|(?:spotlight|laser): ([A-Za-z0-9.-]+))\]$")


def _script(script: list[ScriptStep], labels: Mapping[str, str], speakers: Mapping[str, str]) -> list[str]:
    """A script as paragraphs, one a step; a marker as it is where Markdown reads it as text (a link needs a
    definition), else escaped like any line (import reads the text)."""
    return [part for text in script_notes(script, labels, speakers).splitlines()
            for part in (text if _PLAIN_MARKER.match(text) else md_inline(text), "")]


def _faq(faq: list[ExpectedQuestion]) -> list[str]:
    """The expected questions as ``Q: … / A: …`` paragraphs (authoring/notes_faq.py reads them back)."""
    return [line for block in faq_notes(faq).split("\n\n") if block
            for line in ("\n".join(md_inline(part) for part in block.splitlines()), "")]


def notes_markdown(lesson: Lesson, labels: Mapping[str, str] | None = None,
                   speakers: Mapping[str, str] | None = None) -> str:
    """The lesson as Markdown notes (``labels``: how a classmate's line names them; ``speakers``: the names a
    line may start with, so a teacher's line that starts with one is escaped)."""
    labels, speakers = labels or {}, speakers or {}
    out = ["---", f"agents: [{', '.join(lesson.agents)}]", "---", ""] if lesson.agents else []
    out += [f"# {md_heading(lesson.title)}", ""]
    if lesson.description:
        out += [md_inline(flat(lesson.description)), ""]
    for scene in lesson.scenes:
        if isinstance(scene, SlideScene):
            out += [f"## {md_heading(scene.title)}", "", f"<!-- id: {scene.id} -->", ""]
            for element in scene.elements:
                out += [*element_lines(element), ""]
            out += _script(scene.script, labels, speakers)
            out += _faq(scene.faq)
        elif isinstance(scene, QuizScene):
            out += [f"## Quiz: {md_heading(scene.title)}", "", f"<!-- id: {scene.id} -->", ""]
            for number, question in enumerate(scene.questions, 1):
                out += [f"{number}. {_quiz_text(question.question)}",
                        f"   <!-- question: {question.id} {question.type} -->"]
                out += [f"   - [{'x' if LETTERS[i] in question.answer else ' '}] {_quiz_text(option)}"
                        for i, option in enumerate(question.options)]
                if question.rubric:
                    out.append(f"   Rubric: {_quiz_text(question.rubric)}")
                if question.explanation:
                    out.append(f"   Explanation: {_quiz_text(question.explanation)}")
                if question.points != 1:
                    out.append(f"   Points: {question.points}")
                out.append("")
        elif isinstance(scene, DiscussionScene):
            out += [f"## Discussion: {md_heading(scene.topic)}", "", f"<!-- id: {scene.id} -->", ""]
            if scene.title:
                out += [f"Title: {md_inline(flat(scene.title))}", ""]
            if scene.initiator:
                out += [f"Opened by: {md_inline(flat(scene.initiator))}", ""]
            if scene.prompt:
                out += [_prompt(scene.prompt, speakers), ""]
            if scene.script:
                out += ["[script]", ""]
                for step in scene.script:
                    out += [md_inline(step_line(step, labels, speakers)), ""]
            if scene.close:  # the closing lines (md_sections reads them after "[close]")
                out += ["[close]", ""]
                for step in scene.close:
                    out += [md_inline(step_line(step, labels, speakers)), ""]
            out += _faq(scene.faq)
    return "\n".join(out).rstrip("\n") + "\n"
