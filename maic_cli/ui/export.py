"""Exports of a class: Markdown (speakers, speech, actions as notes, the final whiteboard).

With the lesson's notes (:class:`~.lesson_notes.LessonNotes`), a lesson shows where it
happened: scenes, their slides with elements by id, ``→ spotlight: formula`` where the
teacher pointed, quiz questions, answers and the score (see :mod:`.export_lesson`).

Model text is data in the Markdown too: control sequences are removed, HTML
and entities are escaped, backticks and backslashes are backslash-escaped, and
so is every ``]`` that would end a link text or label (one followed by ``(``,
``[`` or ``:``), so a reply can link nowhere (``javascript:``, ``data:``,
``vbscript:`` or any other), define no link reference and open no code span or
fence.  A code block's fence is longer than any backtick run inside it,
so its content cannot close it.  The board is shown from re-checked params
(:func:`~maic_cli.engine.whiteboard.usable_params`): nothing stored is trusted.
"""

from __future__ import annotations

import re

from ..engine.classroom import Classroom
from ..engine.models import AgentConfig, Message, Slide, WhiteboardElement
from ..engine.whiteboard import usable_params
from ..replies.sanitize import replace_surrogates
from ..untrusted import clean
from .export_lesson import code_fence, note_markdown, other_slides, table_markdown
from .latex import latex_to_unicode
from .lesson_notes import POINTERS, LessonNotes, pointer_text, shown
from .views import action_badge

_MARKUP = re.compile(r"[\\`]|\](?=[(\[:])")
_HTML = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
_NOT_LANGUAGE = re.compile(r"[^\w+#.-]")


def _md_escape(text: str) -> str:
    text = clean(replace_surrogates(text))
    text = "".join(_HTML.get(char, char) for char in text) if any(c in text for c in "&<>") else text
    return _MARKUP.sub(lambda m: "\\" + m.group(), text)


def _code_block(element: WhiteboardElement, params: dict[str, object]) -> list[str]:
    lines = [clean(replace_surrogates(str(line.text))) for line in element.lines]
    fence = code_fence(lines)
    language = _NOT_LANGUAGE.sub("", str(params.get("language", "")))[:40]
    return ["", f"  {fence}{language}", *(f"  {line}" for line in lines), f"  {fence}"]


def _board_markdown(element: WhiteboardElement) -> list[str]:
    """One whiteboard element as the board shows it, from its re-checked params (no id)."""
    p = usable_params(element)
    if p is None:
        return ["*(unreadable)*", ""]
    if element.kind == "text":
        return [_md_escape(shown(p.get("content", ""))), ""]
    if element.kind == "latex":
        return [f"*{_md_escape(latex_to_unicode(shown(p.get('latex', ''))))}*", ""]
    if element.kind == "code":
        return [*(line[2:] for line in _code_block(element, p)), ""]
    if element.kind == "table":
        return [*(line[2:] for line in table_markdown([[str(c) for c in row] for row in p.get("data", [])],
                                                       _md_escape)), ""]
    if element.kind == "chart":
        lines = [f"**{_md_escape(shown(p.get('title') or 'Chart', 100))}**", ""]
        for i, label in enumerate(p.get("labels", [])[:12]):
            values = [s.get("values", [])[i] for s in p.get("series", [])[:4] if i < len(s.get("values", []))]
            lines.append(f"- {_md_escape(shown(label, 40))}: {', '.join(f'{v:g}' for v in values)}")
        return [*lines, ""]
    if element.kind == "shape":
        return [_md_escape(shown(p.get("label") or p.get("shape") or "shape", 200)), ""]
    return [_md_escape(f"{'→' if p.get('arrow') else '—'} {shown(p.get('label', ''), 200)}".strip()), ""]


def _speech(message: Message, slides: list[Slide]) -> str:
    """Speech with actions as notes; adjacent text parts are escaped as one (a link cannot
    be assembled across them)."""
    out: list[str] = []
    text: list[str] = []
    for part in message.parts:
        if part.kind == "text":
            text.append(part.text)
        elif part.action is not None:
            out.append(_md_escape("".join(text)))
            text = []
            action = part.action
            if action.name in POINTERS:
                target = action.params.get("elementId") if isinstance(action.params, dict) else None
                out.append(f" *{_md_escape(pointer_text(action.name, target, slides))}* ")
            else:
                out.append(f" *[{_md_escape(action_badge(action.name, action.params))}]* ")
    out.append(_md_escape("".join(text)))
    if message.interrupted:
        out.append(" *(interrupted)*")
    return "".join(out).strip()


def _message_markdown(message: Message, agents: dict[str, AgentConfig], learner: str,
                      slides: list[Slide]) -> list[str]:
    if message.role == "user":
        who = f"🧑 {learner} (learner)"
    else:
        agent = agents.get(message.agent_id or "")
        who = f"{clean(agent.avatar) + ' ' if agent else ''}{message.agent_name or message.agent_id}"
    return [f"**{_md_escape(who)}**", "", _speech(message, slides) or "*(no speech)*", ""]


def classroom_to_markdown(classroom: Classroom, agents: dict[str, AgentConfig], *, title: str = "maic class",
                          learner: str = "Learner", meta: dict[str, str] | None = None,
                          notes: LessonNotes | None = None) -> str:
    lines = [f"# {_md_escape(title)}", ""]
    for key, value in (meta or {}).items():
        lines.append(f"- **{_md_escape(key)}**: {_md_escape(value)}")
    if meta:
        lines.append("")
    notes = notes or LessonNotes()
    by_place, shown_slides = notes.by_place(), set[int]()
    for place in range(len(classroom.messages) + 1):
        for note in by_place.get(place, []):
            lines += note_markdown(note, notes, shown_slides, _md_escape)
        if place < len(classroom.messages):
            lines += _message_markdown(classroom.messages[place], agents, learner, classroom.store.slides)
    lines += other_slides(classroom.store.slides, shown_slides, _md_escape)
    store = classroom.store
    lines.append("## Final whiteboard")
    lines.append("")
    for element in store.whiteboard:
        lines += _board_markdown(element)
    if not store.whiteboard:
        lines.append("*(empty)*")
    lines.append("")
    return "\n".join(lines)
