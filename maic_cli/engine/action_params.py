"""Validating and coercing an action's params at the engine boundary (one model per action).

A model's params are untrusted: a table whose ``data`` is a number, a chart
with ``NaN`` values, a shape with ``"x": "left"``.  Each action in the
catalogue has a pydantic model here; :func:`coerce_params` returns the params
as the views and the whiteboard expect them, or ``None`` when they cannot be
made so (the action is then dropped and counted, like a disallowed one).

What is lenient, because it is safe: numeric strings become numbers, integral
numbers stay ints, coordinates are clamped to the board (1000 × 560), scalars
in text fields and table cells become strings (``None`` an empty cell), a
scalar table row becomes a one-cell row, one chart series given as an object
becomes a list of one, code given as a list of lines is joined, and tables
and charts are cut to a size a terminal can show.  What is dropped: keys the
action does not define (so nothing unknown is ever stored), non-finite
numbers, non-numeric coordinates, containers where a scalar belongs, and a
missing required field.  Strings lose broken surrogates.
"""

from __future__ import annotations

import math
import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from ..replies.sanitize import replace_surrogates

BOARD_WIDTH, BOARD_HEIGHT = 1000, 560
MAX_ROWS, MAX_COLUMNS = 100, 20
MAX_LABELS, MAX_SERIES = 100, 10
MAX_ID = 100


def _scalar_text(value: Any) -> Any:
    """Scalars become text; containers are refused (they are never text)."""
    if isinstance(value, str):
        return replace_surrogates(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError("not a finite number")
        return f"{value:g}"
    raise ValueError("expected text")


def _cell(value: Any) -> Any:
    return "" if value is None else _scalar_text(value)


def _number(value: Any) -> Any:
    """A finite number from a number or a numeric string (``"12"``, ``" 3.5 "``)."""
    if isinstance(value, bool):
        raise ValueError("expected a number")
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            raise ValueError("expected a number") from None
    if isinstance(value, int):
        value = float(value) if abs(value) < 1e300 else math.inf
    if not isinstance(value, float) or not math.isfinite(value):
        raise ValueError("expected a finite number")
    return int(value) if value.is_integer() and abs(value) < 2**53 else value


def _clamp(low: float, high: float) -> BeforeValidator:
    return BeforeValidator(lambda v: min(max(_number(v), low), high))


def _identifier(value: Any) -> Any:
    text = _scalar_text(value).strip()
    if not text or len(text) > MAX_ID:
        raise ValueError("expected a short id")
    return text


def _language(value: Any) -> Any:
    """A code language is a short word (it also names a Markdown fence)."""
    return re.sub(r"[^\w+#.-]", "", _scalar_text(value))[:40] or "text"


def _rows(value: Any) -> Any:
    if not isinstance(value, list):
        raise ValueError("expected a list of rows")
    rows = [row if isinstance(row, list) else [row] for row in value[:MAX_ROWS]]
    return [row[:MAX_COLUMNS] for row in rows]


def _series(value: Any) -> Any:
    if isinstance(value, dict):
        value = [value]
    if not isinstance(value, list):
        raise ValueError("expected a list of series")
    return value[:MAX_SERIES]


def _capped_list(limit: int) -> BeforeValidator:
    def check(value: Any) -> Any:
        if not isinstance(value, list):
            raise ValueError("expected a list")
        return value[:limit]
    return BeforeValidator(check)


def _lines(value: Any) -> Any:
    if isinstance(value, list):
        return "\n".join(_cell(line) for line in value)
    return _scalar_text(value)


Text = Annotated[str, BeforeValidator(_scalar_text)]
Cell = Annotated[str, BeforeValidator(_cell)]
Number = Annotated[int | float, BeforeValidator(_number)]
X = Annotated[int | float, _clamp(0, BOARD_WIDTH)]
Y = Annotated[int | float, _clamp(0, BOARD_HEIGHT)]
Identifier = Annotated[str, BeforeValidator(_identifier)]
Lines = Annotated[str, BeforeValidator(_lines)]


class _Params(BaseModel):
    model_config = ConfigDict(extra="ignore", allow_inf_nan=False, frozen=True)


class NoParams(_Params):
    pass


class ElementRef(_Params):
    elementId: Identifier


class DrawText(_Params):
    content: Text
    x: X | None = None
    y: Y | None = None
    fontSize: Annotated[int | float, _clamp(6, 120)] | None = None
    elementId: Identifier | None = None


class DrawShape(_Params):
    shape: Text = "rectangle"
    x: X | None = None
    y: Y | None = None
    width: X | None = None
    height: Y | None = None
    label: Text | None = None
    elementId: Identifier | None = None


class Series(_Params):
    name: Text | None = None
    values: Annotated[list[Number], _capped_list(MAX_LABELS)] = Field(default_factory=list)


class DrawChart(_Params):
    chartType: Text | None = None
    title: Text | None = None
    labels: Annotated[list[Cell], _capped_list(MAX_LABELS)] = Field(default_factory=list)
    series: Annotated[list[Series], BeforeValidator(_series)] = Field(default_factory=list)
    elementId: Identifier | None = None


class DrawLatex(_Params):
    latex: Text
    x: X | None = None
    y: Y | None = None
    elementId: Identifier | None = None


class DrawTable(_Params):
    data: Annotated[list[list[Cell]], BeforeValidator(_rows)]
    elementId: Identifier | None = None


class DrawLine(_Params):
    startX: X | None = None
    startY: Y | None = None
    endX: X | None = None
    endY: Y | None = None
    arrow: bool | None = None
    style: Text | None = None
    label: Text | None = None
    elementId: Identifier | None = None


class DrawCode(_Params):
    code: Lines
    language: Annotated[str, BeforeValidator(_language)] | None = None
    fileName: Text | None = None
    elementId: Identifier | None = None


class EditCode(_Params):
    elementId: Identifier
    operation: Literal["insert_after", "insert_before", "delete", "delete_lines",
                       "replace", "replace_lines"] = "replace"
    lineId: Identifier
    endLineId: Identifier | None = None
    content: Lines | None = None


# A stored whiteboard element of each kind holds the params of the action that drew it.
ELEMENT_ACTIONS = {"text": "wb_draw_text", "shape": "wb_draw_shape", "chart": "wb_draw_chart",
                   "latex": "wb_draw_latex", "table": "wb_draw_table", "line": "wb_draw_line",
                   "code": "wb_draw_code"}

PARAM_MODELS: dict[str, type[_Params]] = {
    "spotlight": ElementRef, "laser": ElementRef, "play_video": ElementRef,
    "wb_open": NoParams, "wb_close": NoParams, "wb_clear": NoParams,
    "wb_draw_text": DrawText, "wb_draw_shape": DrawShape, "wb_draw_chart": DrawChart,
    "wb_draw_latex": DrawLatex, "wb_draw_table": DrawTable, "wb_draw_line": DrawLine,
    "wb_draw_code": DrawCode, "wb_edit_code": EditCode, "wb_delete": ElementRef,
}


def coerce_params(name: str, params: Any) -> dict[str, Any] | None:
    """``params`` validated and coerced for action ``name``; ``None`` if unusable or unknown."""
    model = PARAM_MODELS.get(name)
    if model is None or not isinstance(params, dict):
        return None
    try:
        return model.model_validate(params).model_dump(exclude_none=True)
    except (ValidationError, RecursionError):
        return None


def accept_action_params(item: Any) -> bool:
    """For the turn loop: replace ``item.params`` by its coerced form; ``False`` if invalid
    (or if the parser found the action nested too deeply to read)."""
    if getattr(item, "too_deep", False):
        return False
    params = coerce_params(item.name, item.params)
    if params is None:
        return False
    item.params = params
    return True
