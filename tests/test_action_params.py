"""Action params are validated and coerced at the engine boundary.

A model's params are untrusted: wrong types and non-finite numbers are either
coerced (where that is safe) or the action is dropped and counted; what is
stored is always renderable, and a session holding bad elements still loads.
"""

from __future__ import annotations

import asyncio
import io
import json
import math
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from maic_cli.engine.action_params import PARAM_MODELS, coerce_params
from maic_cli.engine.actions import CATALOGUE
from maic_cli.engine.classroom import Classroom
from maic_cli.engine.models import ActionRecord, StoreState, TurnConfig, WhiteboardActionRecord
from maic_cli.engine.round import run_round
from maic_cli.engine.whiteboard import apply_action
from maic_cli.llm.scripted import ScriptedLLM
from maic_cli.store.session import Session, load_session, save_session
from maic_cli.ui.export import classroom_to_markdown
from maic_cli.ui.export_html import classroom_to_html
from maic_cli.ui.views import ScreenState, render_screen
from maic_cli.ui.whiteboard_view import render_whiteboard
from tests.helpers import action, agent, reply

TEACHER = agent("teacher", "teacher", "Ms. T")


def render(renderable: object) -> str:
    console = Console(file=io.StringIO(), width=100, height=40, color_system=None)
    console.print(renderable)
    return console.file.getvalue()  # type: ignore[attr-defined]


def test_every_catalogue_action_has_a_params_model() -> None:
    assert set(PARAM_MODELS) == set(CATALOGUE)


HOSTILE: list[tuple[str, dict[str, Any]]] = [
    ("wb_draw_table", {"data": 5}),
    ("wb_draw_table", {"data": {"a": 1}}),
    ("wb_draw_table", {"data": [["a", ["nested"]]]}),
    ("wb_draw_table", {"data": [["a", {"b": 1}]]}),
    ("wb_draw_table", {}),
    ("wb_draw_chart", {"labels": ["a"], "series": [{"values": [1, math.nan]}]}),
    ("wb_draw_chart", {"labels": ["a"], "series": [{"values": [math.inf]}]}),
    ("wb_draw_chart", {"labels": ["a"], "series": [{"values": "1,2"}]}),
    ("wb_draw_chart", {"labels": ["a"], "series": [{"values": 3}]}),
    ("wb_draw_chart", {"labels": ["a"], "series": [{"values": ["many"]}]}),
    ("wb_draw_chart", {"labels": 7, "series": []}),
    ("wb_draw_chart", {"series": "all of them"}),
    ("wb_draw_chart", {"series": [{"values": [10 ** 400]}]}),
    ("wb_draw_shape", {"shape": "circle", "x": "left"}),
    ("wb_draw_shape", {"shape": "circle", "width": math.nan}),
    ("wb_draw_shape", {"shape": ["circle"]}),
    ("wb_draw_line", {"startX": [0], "endX": 5}),
    ("wb_draw_text", {"content": {"text": "hi"}}),
    ("wb_draw_text", {"x": 5}),
    ("wb_draw_latex", {"latex": None}),
    ("wb_draw_code", {"code": {"a": 1}}),
    ("wb_edit_code", {"elementId": "wb_1", "lineId": "L1", "operation": "explode"}),
    ("wb_edit_code", {"lineId": "L1"}),
    ("spotlight", {"elementId": ["title"]}),
    ("laser", {}),
    ("wb_delete", {"elementId": ""}),
    ("teleport", {}),
]


@pytest.mark.parametrize(("name", "params"), HOSTILE)
def test_unusable_params_are_refused(name: str, params: dict) -> None:
    assert coerce_params(name, params) is None
    state = StoreState()
    assert apply_action(state, name, params) is not None  # a note, nothing done
    assert state.whiteboard == []


@pytest.mark.parametrize(("name", "params", "want"), [
    # numeric strings become numbers, integral numbers stay ints, coordinates are clamped
    ("wb_draw_shape", {"shape": "circle", "x": "12", "y": " 7.5 ", "width": -3, "height": 10 ** 6},
     {"shape": "circle", "x": 12, "y": 7.5, "width": 0, "height": 560}),
    ("wb_draw_text", {"content": 42, "x": 2000.0, "fontSize": "18"}, {"content": "42", "x": 1000, "fontSize": 18}),
    # table cells: scalars become strings, None an empty cell, a scalar row a one-cell row
    ("wb_draw_table", {"data": [["n", 1, 2.5, True, None], "total"]},
     {"data": [["n", "1", "2.5", "true", ""], ["total"]]}),
    # one series given as an object, numeric strings as values; unknown keys are dropped
    ("wb_draw_chart", {"labels": ["a", 1], "series": {"name": "s", "values": ["1", 2]}, "colour": "red"},
     {"labels": ["a", "1"], "series": [{"name": "s", "values": [1, 2]}]}),
    ("wb_draw_code", {"code": ["a = 1", "print(a)"], "language": "py```thon"},
     {"code": "a = 1\nprint(a)", "language": "python"}),
    ("wb_draw_line", {"startX": "0", "endX": 5, "arrow": "true"}, {"startX": 0, "endX": 5, "arrow": True}),
    ("spotlight", {"elementId": 3}, {"elementId": "3"}),
    ("wb_open", {"anything": [[[]]]}, {}),
])
def test_params_safe_to_coerce_are_coerced_and_coercion_is_idempotent(name: str, params: dict, want: dict) -> None:
    assert coerce_params(name, params) == want
    assert coerce_params(name, want) == want  # coercion is idempotent


def test_tables_and_charts_are_cut_to_a_showable_size() -> None:
    table = coerce_params("wb_draw_table", {"data": [[str(i)] * 500 for i in range(5000)]})
    assert table is not None and len(table["data"]) == 100 and len(table["data"][0]) == 20
    chart = coerce_params("wb_draw_chart", {"series": [{"values": list(range(5000))}] * 50})
    assert chart is not None and len(chart["series"]) == 10 and len(chart["series"][0]["values"]) == 100


def test_a_reply_with_hostile_params_drops_and_counts_them_and_stores_coerced_ones() -> None:
    hostile = [action(name, **params) for name, params in HOSTILE if name in CATALOGUE]
    good = action("wb_draw_shape", shape="circle", x="12", y="abc")  # y is not a number: dropped
    fine = action("wb_draw_table", data=[["n", 1], "total"])
    llm = ScriptedLLM([reply("Look.", *hostile, good, fine)])
    classroom = Classroom()
    classroom.add_learner_message("hi")
    events: list = []
    result = asyncio.run(run_round(classroom, TurnConfig(agent_ids=["teacher"]), llm,
                                   registry={"teacher": TEACHER}, on_event=events.append))
    assert result.reason in ("end", "cue_user", "max_turns")
    done = next(e for e in events if e.type == "done" and e.total_agents)
    assert done.dropped_actions == len(hostile) + 1
    assert [(e.action_name, e.params) for e in events if e.type == "action"] == [
        ("wb_draw_table", {"data": [["n", "1"], ["total"]]})]
    assert [e.kind for e in classroom.store.whiteboard] == ["table"]
    ledger = classroom.director_state.whiteboard_ledger if classroom.director_state else []
    assert [r.params for r in ledger] == [{"data": [["n", "1"], ["total"]]}]


BAD_ELEMENTS = [
    {"id": "t", "kind": "table", "params": {"data": 5}},
    {"id": "m", "kind": "table", "params": {"data": {"a": 1}}},
    {"id": "c", "kind": "chart", "params": {"labels": ["a"], "series": [{"values": [math.nan, "x"]}]}},
    {"id": "d", "kind": "chart", "params": {"labels": 5, "series": 5}},
    {"id": "s", "kind": "shape", "params": {"shape": {"x": 1}, "x": "left"}},
    {"id": "l", "kind": "line", "params": {"startX": [1, 2]}},
    {"id": "x", "kind": "text", "params": {"content": ["not", "text"]}},
    {"id": "k", "kind": "sparkle", "params": {}},
    {"id": "n", "kind": "latex"},
    "not an element",
    7,
]


def session_with_board(elements: list) -> dict:
    session = Session(config=TurnConfig(agent_ids=["teacher"]), agents=[TEACHER])
    data = json.loads(session.model_dump_json())
    good = {"id": "ok", "kind": "text", "params": {"content": "kept"}}
    data["classroom"]["store"]["whiteboard"] = [*elements, good]
    data["classroom"]["messages"] = [{"role": "agent", "agent_id": "teacher", "agent_name": "Ms. T", "parts": [
        {"kind": "action", "action": {"action_id": "a1", "name": "wb_draw_table", "params": {"data": 5}}},
        {"kind": "action", "action": {"action_id": "a2", "name": "spotlight", "params": {"elementId": {"x": 1}}}},
        {"kind": "action", "action": {"action_id": "a3", "name": "future_action", "params": {"p": "\ud800"}}},
    ]}]
    return data


def test_a_session_with_bad_elements_loads_without_them_and_renders_everywhere(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text(json.dumps(session_with_board(BAD_ELEMENTS), allow_nan=True), encoding="utf-8")
    session = load_session(path)
    store = session.classroom.store
    assert [(e.id, e.params) for e in store.whiteboard] == [("ok", {"content": "kept"})]
    actions = session.classroom.messages[0].actions
    assert [a.params for a in actions] == [{}, {}, {"p": "\ufffd"}]  # records kept, unusable params emptied
    state = ScreenState(classroom=session.classroom, agents={"teacher": TEACHER}, model="m")
    assert "kept" in render(render_screen(state, 30))
    assert "kept" in render(render_whiteboard(store, limit=1000))
    assert "kept" in classroom_to_markdown(session.classroom, {"teacher": TEACHER})
    assert "kept" in classroom_to_html(session.classroom, {"teacher": TEACHER})
    save_session(session, path)  # and it saves and reloads
    assert load_session(path).classroom.store.whiteboard[0].id == "ok"


def test_records_keep_the_action_but_not_unusable_params() -> None:
    record = ActionRecord(action_id="a", name="wb_draw_chart", params={"series": [{"values": [math.inf]}]})
    assert record.params == {}
    ledger = WhiteboardActionRecord(action_name="wb_draw_text", agent_id="t", agent_name="T",
                                    params={"content": 5, "x": "3"})
    assert ledger.params == {"content": "5", "x": 3}


def test_every_catalogue_action_has_a_params_model_and_no_other() -> None:
    from maic_cli.engine.action_params import PARAM_MODELS
    from maic_cli.engine.actions import CATALOGUE

    assert set(CATALOGUE) == set(PARAM_MODELS)
