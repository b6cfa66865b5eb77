"""HTML export: one self-contained page (inline CSS, no external assets), agent colours kept.

Every string from the model is cleaned of control sequences and broken
surrogates and HTML-escaped; colours are used only if they look like a colour;
board elements are drawn from re-checked params (nothing stored is trusted).
A lesson's notes (scenes, slides, pointers, quiz answers, the score) are drawn where
they happened by :mod:`.export_html_lesson`; the page links nowhere and runs no script.
"""

from __future__ import annotations

import re
from typing import Any

from ..engine.classroom import Classroom
from ..engine.models import AgentConfig, Message, Slide, WhiteboardElement
from ..engine.whiteboard import usable_params
from .export_html_lesson import LESSON_CSS, e, note_html, other_slides_html
from .lesson_notes import POINTERS, LessonNotes
from .slide_html import formula_html, pointer_text
from .views import action_badge

_SAFE_COLOR = re.compile(r"^(#[0-9a-fA-F]{3,8}|[a-zA-Z]{3,20})$")
CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;max-width:54rem;margin:2rem auto;padding:0 1rem;
color:#1f2328;background:#fff;line-height:1.5}
h1{font-size:1.5rem}.meta{color:#656d76;font-size:.9rem}
.msg{border-left:4px solid #d0d7de;padding:.4rem .8rem;margin:.8rem 0;background:#f6f8fa;border-radius:4px}
.who{font-weight:600}.badge{display:inline-block;font-size:.8rem;color:#0969da;background:#ddf4ff;
border-radius:1rem;padding:0 .5rem;margin:0 .2rem}.learner{border-left-color:#8250df;background:#fbefff}
.interrupted{color:#656d76;font-style:italic}
.board{border:1px solid #d0d7de;border-radius:6px;padding:.8rem}.el{margin:.5rem 0}.id{color:#656d76;
font-size:.8rem;margin-right:.4rem}table{border-collapse:collapse}td,th{border:1px solid #d0d7de;padding:.2rem .5rem}
pre{background:#f6f8fa;padding:.5rem;overflow:auto}.bar{display:inline-block;height:.8rem;background:#54aeff}
"""


_e = e


def _color(value: str) -> str:
    return value if _SAFE_COLOR.fullmatch(value) else "#d0d7de"


def _table(rows: list[list[str]]) -> str:
    head = "".join(f"<th>{_e(c)}</th>" for c in rows[0]) if rows else ""
    body_rows = "".join("<tr>" + "".join(f"<td>{_e(c)}</td>" for c in r) + "</tr>" for r in rows[1:])
    return f"<table><tr>{head}</tr>{body_rows}</table>"


def _chart(p: dict[str, Any]) -> str:
    labels, series = p.get("labels", []), p.get("series", [])
    peak = max((abs(v) for s in series for v in s.get("values", [])), default=1.0) or 1.0
    rows = []
    for i, label in enumerate(labels):
        for s in series:
            vals = s.get("values", [])
            if i < len(vals):
                width = abs(vals[i]) / peak * 12
                rows.append(f"<div>{_e(label)} <span class='bar' style='width:{width:.2f}rem'></span> "
                            f"{_e(vals[i])}</div>")
    return f"<strong>{_e(p.get('title') or 'chart')}</strong>" + "".join(rows)


def _element(element: WhiteboardElement) -> str:
    """One board element from its re-checked params: nothing stored is trusted."""
    p = usable_params(element)
    if p is None:
        body = "<em>(unreadable element)</em>"
    elif element.kind == "text":
        body = _e(p.get("content", ""))
    elif element.kind == "latex":
        body = formula_html(str(p.get("latex", "")))
    elif element.kind == "table":
        body = _table(p.get("data", []))
    elif element.kind == "chart":
        body = _chart(p)
    elif element.kind == "code":
        lines = "\n".join(_e(line.text) for line in element.lines)
        body = f"<figure class='mcode'><pre><code>{lines}</code></pre></figure>"
    elif element.kind == "shape":
        body = _e(f"{p.get('shape', 'shape')}: {p.get('label', '')}")
    else:
        arrow = "→" if p.get("arrow") else "—"
        body = _e(f"({p.get('startX', '?')},{p.get('startY', '?')}) {arrow} "
                  f"({p.get('endX', '?')},{p.get('endY', '?')}) {p.get('label', '')}")
    return f"<div class='el'>{body}</div>"


def _message_html(message: Message, agents: dict[str, AgentConfig], learner: str, slides: list[Slide]) -> str:
    if message.role == "user":
        out = [f"<div class='msg learner'><div class='who'>🧑 {_e(learner)}</div>"]
    else:
        agent = agents.get(message.agent_id or "")
        color = _color(agent.color) if agent else "#d0d7de"
        avatar = _e(agent.avatar) + " " if agent else ""
        out = [f"<div class='msg' style='border-left-color:{color}'>"
               f"<div class='who' style='color:{color}'>{avatar}{_e(message.agent_name or '')}</div>"]
    speech = []
    for part in message.parts:
        if part.kind == "text":
            speech.append(_e(part.text))
        elif part.action is not None and part.action.name in POINTERS:
            target = part.action.params.get("elementId") if isinstance(part.action.params, dict) else None
            speech.append(f"<span class='badge pointer'>{_e(pointer_text(part.action.name, target, slides))}"
                          "</span>")
        elif part.action is not None:
            speech.append(f"<span class='badge'>{_e(action_badge(part.action.name, part.action.params))}</span>")
    if message.interrupted:
        speech.append(" <span class='interrupted'>(interrupted)</span>")
    out.append("<div>" + "".join(speech) + "</div></div>")
    return "\n".join(out)


def classroom_to_html(classroom: Classroom, agents: dict[str, AgentConfig], *, title: str = "maic class",
                      learner: str = "Learner", meta: dict[str, str] | None = None,
                      notes: LessonNotes | None = None) -> str:
    out = [f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>{_e(title)}</title>",
           f"<style>{CSS}{LESSON_CSS}</style></head><body>", f"<h1>{_e(title)}</h1>"]
    if meta:
        out.append("<p class='meta'>" + " · ".join(f"{_e(k)}: {_e(v)}" for k, v in meta.items()) + "</p>")
    notes = notes or LessonNotes()
    by_place, shown_slides = notes.by_place(), set[int]()
    for place in range(len(classroom.messages) + 1):
        out.extend(note_html(note, notes, shown_slides) for note in by_place.get(place, []))
        if place < len(classroom.messages):
            out.append(_message_html(classroom.messages[place], agents, learner, classroom.store.slides))
    out.extend(other_slides_html(classroom.store.slides, shown_slides))
    out.append("<h2>Final whiteboard</h2><div class='board'>")
    out.extend(_element(el) for el in classroom.store.whiteboard)
    if not classroom.store.whiteboard:
        out.append("<em>empty</em>")
    out.append("</div></body></html>\n")
    return "\n".join(out)
