"""The whiteboard and slide pointer: applying actions to the store state.

:func:`apply_action` is the one reducer for the twelve ``wb_*`` actions and the
slide actions.  Element ids come from the model when it gives one (and it is
free), else ``wb_<n>``.  Code blocks keep stable line ids ``L1…``: an inserted
line gets a fresh number, never a reused one.  Invalid actions (an unknown
element, a bad line id, params that cannot be made usable) change nothing and
return a short note instead: params are checked here too, whatever their source
(a reply, a replayed transcript), so the stored board is always renderable.
Also here: the whiteboard summaries the director and agent prompts need.
"""

from __future__ import annotations

from typing import Any

from .action_params import ELEMENT_ACTIONS, PARAM_MODELS, coerce_params
from .models import CodeLine, StoreState, WhiteboardActionRecord, WhiteboardElement

DRAW_KINDS = {
    "wb_draw_text": "text", "wb_draw_shape": "shape", "wb_draw_chart": "chart",
    "wb_draw_latex": "latex", "wb_draw_table": "table", "wb_draw_line": "line",
    "wb_draw_code": "code",
}
CROWDED = 5


def apply_action(state: StoreState, name: str, params: dict[str, Any],
                 agent_id: str | None = None) -> str | None:
    """Apply one action to ``state`` in place.  Returns a note if nothing could be done."""
    if name not in PARAM_MODELS:
        return f"unknown action {name!r}"
    checked = coerce_params(name, params)
    if checked is None:
        return f"unusable params for {name}"
    params = checked
    if name in DRAW_KINDS:
        _draw(state, DRAW_KINDS[name], params, agent_id)
        return None
    if name == "wb_open":
        state.whiteboard_open = True
    elif name == "wb_close":
        state.whiteboard_open = False
    elif name == "wb_clear":
        state.whiteboard.clear()
    elif name == "wb_delete":
        element = find_element(state, params.get("elementId"))
        if element is None:
            return f"no whiteboard element {params.get('elementId')!r}"
        state.whiteboard.remove(element)
    elif name == "wb_edit_code":
        return _edit_code(state, params)
    elif name in ("spotlight", "laser"):
        target = params.get("elementId")
        slide = state.slide
        if slide is None or not any(e.id == target for e in slide.elements):
            return f"no slide element {target!r}"
        setattr(state, name, target)
    return None


def find_element(state: StoreState, element_id: object) -> WhiteboardElement | None:
    return next((e for e in state.whiteboard if e.id == element_id), None)


def _draw(state: StoreState, kind: str, params: dict[str, Any], agent_id: str | None) -> None:
    wanted = params.get("elementId")
    if isinstance(wanted, str) and wanted and find_element(state, wanted) is None:
        element_id = wanted
    else:
        element_id = f"wb_{state.next_element}"
        while find_element(state, element_id) is not None:
            state.next_element += 1
            element_id = f"wb_{state.next_element}"
        state.next_element += 1
    element = WhiteboardElement(id=element_id, kind=kind,  # type: ignore[arg-type]
                                params={k: v for k, v in params.items() if k != "elementId"},
                                agent_id=agent_id)
    if kind == "code":
        for text in str(params.get("code", "")).split("\n"):
            element.lines.append(CodeLine(id=f"L{element.next_line}", text=text))
            element.next_line += 1
    state.whiteboard.append(element)
    state.whiteboard_open = True


def _edit_code(state: StoreState, params: dict[str, Any]) -> str | None:
    element = find_element(state, params.get("elementId"))
    if element is None or element.kind != "code":
        return f"no code block {params.get('elementId')!r}"
    ids = [line.id for line in element.lines]
    start_id = params.get("lineId")
    if start_id not in ids:
        return f"no line {start_id!r} in {element.id}"
    start = ids.index(start_id)
    end_id = params.get("endLineId") or start_id
    end = ids.index(end_id) if end_id in ids else start
    end = max(start, end)
    operation = params.get("operation", "replace")
    content = params.get("content", "")
    new_lines = [] if content in (None, "") else str(content).split("\n")
    fresh = []
    for text in new_lines:
        fresh.append(CodeLine(id=f"L{element.next_line}", text=text))
        element.next_line += 1
    if operation == "insert_after":
        element.lines[end + 1:end + 1] = fresh
    elif operation == "insert_before":
        element.lines[start:start] = fresh
    elif operation in ("delete", "delete_lines"):
        del element.lines[start:end + 1]
    elif operation in ("replace", "replace_lines"):
        element.lines[start:end + 1] = fresh
    else:
        return f"unknown code operation {operation!r}"
    element.params["code"] = "\n".join(line.text for line in element.lines)
    return None


def usable_params(element: WhiteboardElement) -> dict[str, Any] | None:
    """An element's params checked again (``None`` if unusable): for code that shows a board
    it did not build itself, and so trusts nothing in it."""
    return coerce_params(ELEMENT_ACTIONS.get(element.kind, ""), element.params)


# -- summaries for prompts ------------------------------------------------------------
def describe_element(element: WhiteboardElement, limit: int = 80) -> str:
    p = usable_params(element)
    if p is None:
        body = "(unreadable)"
    elif element.kind == "text":
        body = str(p.get("content", ""))
    elif element.kind == "latex":
        body = str(p.get("latex", ""))
    elif element.kind == "shape":
        body = f"{p.get('shape', 'shape')} {p.get('label', '')}".strip()
    elif element.kind == "chart":
        body = f"{p.get('chartType', 'bar')} chart {p.get('title', '')}".strip()
    elif element.kind == "table":
        rows = p.get("data") or []
        body = f"{len(rows)} rows, header {rows[0] if rows else []}"
    elif element.kind == "line":
        body = "arrow" if p.get("arrow") else "line"
    else:
        lines = ", ".join(f"{ln.id}: {ln.text}" for ln in element.lines[:12])
        body = f"{p.get('language', 'code')}; lines {lines}"
    body = " ".join(body.split())
    if len(body) > limit:
        body = body[: limit - 1] + "…"
    return f"[{element.id}] {element.kind}: {body}"


def whiteboard_summary(state: StoreState) -> str:
    if not state.whiteboard:
        return "The whiteboard is empty" + (" (open)." if state.whiteboard_open else " and closed.")
    lines = [describe_element(e) for e in state.whiteboard]
    return "\n".join(lines)


def ledger_summary(ledger: list[WhiteboardActionRecord], open_now: bool) -> str:
    """What the director needs: element count, contributors, a crowded warning."""
    drawn = sum(1 for r in ledger if r.action_name in DRAW_KINDS)
    if any(r.action_name == "wb_clear" for r in ledger):
        last_clear = max(i for i, r in enumerate(ledger) if r.action_name == "wb_clear")
        drawn = sum(1 for r in ledger[last_clear + 1:] if r.action_name in DRAW_KINDS)
    contributors = sorted({r.agent_name for r in ledger})
    if not ledger:
        return f"No whiteboard actions yet this round (whiteboard {'open' if open_now else 'closed'})."
    text = (f"{len(ledger)} whiteboard actions this round, about {drawn} elements on the board now; "
            f"contributors: {', '.join(contributors)}.")
    if drawn > CROWDED:
        text += " The board is crowded: prefer speech, or clear it before drawing more."
    return text
