"""The action catalogue: what agents may do besides speaking.

Each action has a description with its parameters (for the agent prompt), a
scope (``slide`` actions need a slide scene), and role defaults decide who may
use what when a persona does not say.  :func:`allowed_actions` is the single
place that answers "may this agent use this action in this scene?";
:func:`accept_action_params` (from :mod:`.action_params`) answers "are these
params usable?" and coerces them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from .models import AgentConfig, SceneType


@dataclass(frozen=True)
class ActionSpec:
    name: str
    scope: Literal["slide", "whiteboard"]
    summary: str
    params: str  # a compact JSON-ish signature shown to the model


CATALOGUE: dict[str, ActionSpec] = {spec.name: spec for spec in (
    ActionSpec("spotlight", "slide", "Highlight one element of the current slide.",
               '{"elementId": "<slide element id>"}'),
    ActionSpec("laser", "slide", "Point the laser at one element of the current slide.",
               '{"elementId": "<slide element id>"}'),
    ActionSpec("play_video", "slide", "Play a video element of the current slide.",
               '{"elementId": "<slide video element id>"}'),
    ActionSpec("wb_open", "whiteboard", "Open the whiteboard before drawing on it.", "{}"),
    ActionSpec("wb_close", "whiteboard",
               "Close the whiteboard (rarely: keep it open while the class still uses it).", "{}"),
    ActionSpec("wb_draw_text", "whiteboard", "Write text on the whiteboard.",
               '{"content": "<text>", "x": 0-1000, "y": 0-560, "fontSize": 18, "elementId": "<optional id>"}'),
    ActionSpec("wb_draw_shape", "whiteboard", "Draw a shape.",
               '{"shape": "rectangle|circle|triangle", "x": 0, "y": 0, "width": 100, "height": 60, '
               '"label": "<optional text>", "elementId": "<optional id>"}'),
    ActionSpec("wb_draw_chart", "whiteboard", "Draw a chart from data.",
               '{"chartType": "bar|line|pie", "title": "<title>", "labels": ["a", "b"], '
               '"series": [{"name": "<legend>", "values": [1, 2]}], "elementId": "<optional id>"}'),
    ActionSpec("wb_draw_latex", "whiteboard", "Write a formula in LaTeX.",
               '{"latex": "<LaTeX source>", "x": 0, "y": 0, "elementId": "<optional id>"}'),
    ActionSpec("wb_draw_table", "whiteboard", "Draw a table; the first row is the header.",
               '{"data": [["header", "header"], ["cell", "cell"]], "elementId": "<optional id>"}'),
    ActionSpec("wb_draw_line", "whiteboard", "Draw a line or an arrow between two points.",
               '{"startX": 0, "startY": 0, "endX": 100, "endY": 0, "arrow": true, "label": "<optional>", '
               '"elementId": "<optional id>"}'),
    ActionSpec("wb_draw_code", "whiteboard",
               "Show a block of code; its lines get ids L1, L2, … "
               "(change it later with wb_edit_code, not a new block).",
               '{"language": "python", "code": "<source>", "fileName": "<optional>", "elementId": "<optional id>"}'),
    ActionSpec("wb_edit_code", "whiteboard", "Edit a code block shown earlier, by line id.",
               '{"elementId": "<code element id>", "operation": "insert_after|insert_before|delete|replace", '
               '"lineId": "L3", "endLineId": "<optional, for a range>", "content": "<new lines>"}'),
    ActionSpec("wb_delete", "whiteboard", "Remove one whiteboard element.", '{"elementId": "<id>"}'),
    ActionSpec("wb_clear", "whiteboard", "Wipe the whole whiteboard.", "{}"),
)}

SLIDE_ACTIONS = frozenset(n for n, s in CATALOGUE.items() if s.scope == "slide")
WHITEBOARD_ACTIONS = frozenset(n for n, s in CATALOGUE.items() if s.scope == "whiteboard")

ROLE_DEFAULTS: dict[str, frozenset[str]] = {
    "teacher": SLIDE_ACTIONS | WHITEBOARD_ACTIONS,
    "assistant": WHITEBOARD_ACTIONS - {"wb_clear", "wb_delete"},  # nobody but the teacher erases by default
    "student": WHITEBOARD_ACTIONS - {"wb_clear", "wb_delete", "wb_close"},  # students never close the board
}


def allowed_actions(agent: AgentConfig, scene: SceneType) -> list[str]:
    """The actions this agent may use in this scene, in catalogue order."""
    chosen = set(agent.allowed_actions) if agent.allowed_actions is not None else ROLE_DEFAULTS[agent.role]
    return [name for name in CATALOGUE
            if name in chosen and (scene == "slide" or name not in SLIDE_ACTIONS)]
