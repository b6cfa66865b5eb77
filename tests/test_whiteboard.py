"""The whiteboard reducer: the twelve wb_* actions, ids, code edits, and summaries."""

from __future__ import annotations

import pytest

from maic_cli.engine.models import Slide, SlideElement, StoreState, WhiteboardActionRecord
from maic_cli.engine.whiteboard import apply_action, ledger_summary, whiteboard_summary


def board(*actions: tuple[str, dict]) -> StoreState:
    state = StoreState()
    for name, params in actions:
        assert apply_action(state, name, params, "teacher") is None, name
    return state


def test_wb_open_and_wb_close_show_and_hide_the_board() -> None:
    state = board(("wb_open", {}))
    assert state.whiteboard_open
    apply_action(state, "wb_close", {})
    assert not state.whiteboard_open


@pytest.mark.parametrize(("name", "kind", "params"), [
    ("wb_draw_text", "text", {"content": "E = mc^2"}),
    ("wb_draw_shape", "shape", {"shape": "circle", "label": "sun"}),
    ("wb_draw_chart", "chart", {"chartType": "bar", "labels": ["a"], "series": [{"name": "s", "values": [1]}]}),
    ("wb_draw_latex", "latex", {"latex": "\\frac{1}{2}"}),
    ("wb_draw_table", "table", {"data": [["h1", "h2"], ["a", "b"]]}),
    ("wb_draw_line", "line", {"startX": 0, "startY": 0, "endX": 10, "endY": 0, "arrow": True}),
    ("wb_draw_code", "code", {"language": "python", "code": "print(1)"}),
])
def test_each_draw_action_adds_an_element_and_opens_the_board(name: str, kind: str, params: dict) -> None:
    state = board((name, params))
    assert [e.kind for e in state.whiteboard] == [kind]
    assert state.whiteboard[0].id == "wb_1" and state.whiteboard[0].agent_id == "teacher"
    assert state.whiteboard_open


def test_model_given_id_is_used_unless_taken() -> None:
    state = board(("wb_draw_text", {"content": "a", "elementId": "title"}),
                  ("wb_draw_text", {"content": "b", "elementId": "title"}),
                  ("wb_draw_text", {"content": "c"}))
    assert [e.id for e in state.whiteboard] == ["title", "wb_1", "wb_2"]
    assert "elementId" not in state.whiteboard[0].params


def test_wb_delete_removes_one_element_or_names_a_missing_one_and_wb_clear_empties() -> None:
    state = board(("wb_draw_text", {"content": "a"}), ("wb_draw_text", {"content": "b"}))
    assert apply_action(state, "wb_delete", {"elementId": "wb_1"}) is None
    assert [e.id for e in state.whiteboard] == ["wb_2"]
    assert apply_action(state, "wb_delete", {"elementId": "nope"}) == "no whiteboard element 'nope'"
    apply_action(state, "wb_clear", {})
    assert state.whiteboard == []


def test_ids_are_not_reused_after_a_clear() -> None:
    state = board(("wb_draw_text", {"content": "a"}), ("wb_clear", {}), ("wb_draw_text", {"content": "b"}))
    assert state.whiteboard[0].id == "wb_2"


def code_board() -> StoreState:
    return board(("wb_draw_code", {"language": "python", "code": "a = 1\nb = 2\nprint(a + b)"}))


def lines(state: StoreState) -> list[tuple[str, str]]:
    return [(ln.id, ln.text) for ln in state.whiteboard[0].lines]


def test_code_lines_get_stable_ids() -> None:
    assert lines(code_board()) == [("L1", "a = 1"), ("L2", "b = 2"), ("L3", "print(a + b)")]


def test_edit_code_insert_after_and_before_use_fresh_ids() -> None:
    state = code_board()
    apply_action(state, "wb_edit_code", {"elementId": "wb_1", "operation": "insert_after", "lineId": "L2",
                                         "content": "c = 3"})
    apply_action(state, "wb_edit_code", {"elementId": "wb_1", "operation": "insert_before", "lineId": "L1",
                                         "content": "# sum"})
    assert lines(state) == [("L5", "# sum"), ("L1", "a = 1"), ("L2", "b = 2"), ("L4", "c = 3"),
                            ("L3", "print(a + b)")]
    assert state.whiteboard[0].params["code"] == "# sum\na = 1\nb = 2\nc = 3\nprint(a + b)"


def test_edit_code_replace_and_delete_ranges() -> None:
    state = code_board()
    apply_action(state, "wb_edit_code", {"elementId": "wb_1", "operation": "replace", "lineId": "L3",
                                         "content": "total = a + b\nprint(total)"})
    assert lines(state) == [("L1", "a = 1"), ("L2", "b = 2"), ("L4", "total = a + b"), ("L5", "print(total)")]
    apply_action(state, "wb_edit_code", {"elementId": "wb_1", "operation": "delete", "lineId": "L1",
                                         "endLineId": "L2"})
    assert lines(state) == [("L4", "total = a + b"), ("L5", "print(total)")]


def test_edit_code_with_bad_targets_changes_nothing() -> None:
    state = code_board()
    before = lines(state)
    assert apply_action(state, "wb_edit_code", {"elementId": "wb_1", "lineId": "L9"}) == "no line 'L9' in wb_1"
    assert apply_action(state, "wb_edit_code", {"elementId": "zz", "lineId": "L1"}) == "no code block 'zz'"
    assert apply_action(state, "wb_edit_code", {"elementId": "wb_1", "lineId": "L1", "operation": "x"})
    assert lines(state) == before


def test_spotlight_and_laser_need_an_existing_slide_element() -> None:
    state = StoreState(slides=[Slide(id="s", title="T", elements=[SlideElement(id="eq", type="formula")])])
    assert apply_action(state, "spotlight", {"elementId": "eq"}) is None and state.spotlight == "eq"
    assert apply_action(state, "laser", {"elementId": "eq"}) is None and state.laser == "eq"
    assert apply_action(state, "laser", {"elementId": "ghost"}) == "no slide element 'ghost'"


def test_the_board_is_summarised_for_prompts_element_by_element() -> None:
    state = code_board()
    apply_action(state, "wb_draw_table", {"data": [["x", "y"], ["1", "2"]]})
    summary = whiteboard_summary(state)
    assert "[wb_1] code: python; lines L1: a = 1, L2: b = 2" in summary
    assert "[wb_2] table: 2 rows" in summary
    assert whiteboard_summary(StoreState()) == "The whiteboard is empty and closed."


def test_ledger_summary_counts_and_warns_when_crowded() -> None:
    def record(name: str, who: str) -> WhiteboardActionRecord:
        return WhiteboardActionRecord(action_name=name, agent_id=who, agent_name=who.title())

    ledger = [record("wb_draw_text", "teacher") for _ in range(4)] + [record("wb_draw_shape", "mia")] * 2
    text = ledger_summary(ledger, True)
    assert "about 6 elements" in text and "Mia, Teacher" in text and "crowded" in text
    cleared = [*ledger, record("wb_clear", "teacher"), record("wb_draw_text", "teacher")]
    assert "about 1 elements" in ledger_summary(cleared, True)
    assert "crowded" not in ledger_summary(cleared, True)
