"""The streaming parser: chunking invariance, recovery, no half actions."""

from __future__ import annotations

import json
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from maic_cli.replies.parser import StructuredStreamParser
from maic_cli.replies.parser_items import ActionItem, TextItem
from tests.helpers import action, parse_in_chunks, reply

RICH = reply(
    "Let's look at the fraction ",
    action("wb_draw_latex", latex="\\frac{a}{b}", elementId="eq_1"),
    'Brackets ] and } and "quotes" inside a string are just text. ',
    action("wb_draw_table", data=[["x", "y"], ["1", "]"]]),
    "Unicode: é, 中文, emoji 😀 and a tab\tend.",
    action("spotlight", elementId="slide_1_title"),
)
EXPECTED_TEXT = ('Let\'s look at the fraction Brackets ] and } and "quotes" inside a string are just text. '
                 "Unicode: é, 中文, emoji 😀 and a tab\tend.")
EXPECTED_ACTIONS = [
    ("wb_draw_latex", {"latex": "\\frac{a}{b}", "elementId": "eq_1"}),
    ("wb_draw_table", {"data": [["x", "y"], ["1", "]"]]}),
    ("spotlight", {"elementId": "slide_1_title"}),
]


def test_whole_reply_in_one_chunk() -> None:
    assert parse_in_chunks(RICH) == (EXPECTED_TEXT, EXPECTED_ACTIONS)


def test_one_character_at_a_time() -> None:
    assert parse_in_chunks(RICH, [1] * len(RICH)) == (EXPECTED_TEXT, EXPECTED_ACTIONS)


def test_ascii_escapes_split_everywhere() -> None:
    escaped = json.dumps([{"type": "text", "content": "é 😀 \"q\" \\ back\nslash"},
                          action("wb_draw_text", content="ü")], ensure_ascii=True)
    assert "\\ud83d\\ude00" in escaped
    expected = ("é 😀 \"q\" \\ back\nslash", [("wb_draw_text", {"content": "ü"})])
    for cut in range(1, len(escaped)):
        assert parse_in_chunks(escaped, [cut]) == expected, cut


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=12), max_size=400))
def test_any_chunking_gives_the_same_result(sizes: list[int]) -> None:
    assert parse_in_chunks(RICH, sizes) == (EXPECTED_TEXT, EXPECTED_ACTIONS)


item_strategy = st.one_of(
    st.builds(lambda s: {"type": "text", "content": s}, st.text(max_size=40).filter(lambda s: ">" not in s)),
    st.builds(lambda n, v: {"type": "action", "name": n, "params": {"value": v}},
              st.sampled_from(["wb_open", "wb_draw_text", "spotlight"]),
              st.one_of(st.text(max_size=20), st.integers(), st.lists(st.text(max_size=5), max_size=3))),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(item_strategy, max_size=8), st.booleans(), st.randoms(use_true_random=False))
def test_generated_replies_round_trip(items: list[dict], ascii_only: bool, rnd: random.Random) -> None:
    text = json.dumps(items, ensure_ascii=ascii_only)
    sizes = [rnd.randint(1, 9) for _ in range(len(text))]
    expected_actions = [(i["name"], i["params"]) for i in items if i["type"] == "action"]
    whole = parse_in_chunks(text)
    assert whole[1] == expected_actions
    assert parse_in_chunks(text, sizes) == whole
    # Speech is the items' content joined (separators belong to the engine, not the parser).
    assert whole[0] == "".join(i["content"] for i in items if i["type"] == "text")


def test_text_streams_before_the_item_closes() -> None:
    parser = StructuredStreamParser()
    out = parser.feed('[{"type":"text","content":"Hello wor')
    assert [i.content for i in out if isinstance(i, TextItem)] == ["Hello wor"]
    assert parser.feed('ld"}]') == [TextItem("ld", 0)]


def test_action_emitted_once_only_when_its_object_closes() -> None:
    parser = StructuredStreamParser()
    assert parser.feed('[{"type":"action","name":"wb_draw_latex","params":{"latex":"\\\\frac') == []
    assert parser.feed('{1}{2}"}') == []  # params closed, the item still open
    assert parser.feed("}") == [ActionItem("wb_draw_latex", {"latex": "\\frac{1}{2}"}, 0)]
    assert parser.feed("]") == []
    assert parser.finish() == []


def test_bracket_at_chunk_end_inside_a_string_is_not_the_end() -> None:
    text = reply("a list [1, 2]", action("wb_clear"), "after")
    cut = text.index("2]") + 2  # the chunk ends right after a "]" inside a string
    assert parse_in_chunks(text, [cut]) == ("a list [1, 2]after", [("wb_clear", {})])


def test_code_fence_and_prose_before_the_array() -> None:
    fenced = "Sure! Here is my answer:\n```json\n" + reply("Hi.", action("wb_open")) + "\n```\nDone."
    assert parse_in_chunks(fenced) == ("Hi.", [("wb_open", {})])
    assert parse_in_chunks(fenced, [3] * 40) == ("Hi.", [("wb_open", {})])


def test_prose_with_brackets_before_the_array_is_skipped() -> None:
    text = "Note [1] first. " + reply("Real answer")
    assert parse_in_chunks(text) == ("Real answer", [])


def test_plain_prose_is_one_text_item() -> None:
    parser = StructuredStreamParser()
    assert parser.feed("Photosynthesis turns light into sugar.") == []
    assert parser.finish() == [TextItem("Photosynthesis turns light into sugar.", 0)]
    assert parser.stats.no_array


def test_fenced_prose_without_array_loses_the_fence() -> None:
    assert parse_in_chunks("```\nJust text\n```") == ("Just text", [])


def test_truncated_array_keeps_complete_items_and_partial_text() -> None:
    text = reply("Complete.", action("wb_open"), "This sentence is cut")[:-4]
    speech, actions = parse_in_chunks(text, [5] * 30)
    assert speech == "Complete.This sentence is cu"
    assert actions == [("wb_open", {})]


def test_truncated_action_is_dropped_not_half_emitted() -> None:
    text = reply("Before.", action("wb_draw_text", content="half of it"))
    cut = text.index("half") + 2
    parser = StructuredStreamParser()
    items = parser.feed(text[:cut]) + parser.finish()
    assert [i for i in items if isinstance(i, ActionItem)] == []
    assert parser.stats.truncated == 1


def test_unescaped_quotes_inside_text() -> None:
    text = '[{"type":"text","content":"He said "hi" to me, then left"},{"type":"action","name":"wb_open"}]'
    assert parse_in_chunks(text) == ('He said "hi" to me, then left', [("wb_open", {})])
    assert parse_in_chunks(text, [1] * len(text)) == ('He said "hi" to me, then left', [("wb_open", {})])


def test_trailing_commas_are_accepted() -> None:
    text = '[{"type":"text","content":"ok",},{"type":"action","name":"spotlight","params":{"elementId":"e1",},},]'
    assert parse_in_chunks(text) == ("ok", [("spotlight", {"elementId": "e1"})])


def test_missing_commas_between_items_are_repaired() -> None:
    text = '[{"type":"text" "content":"no comma"} {"type":"action","name":"wb_clear" "params":{}}]'
    assert parse_in_chunks(text) == ("no comma", [("wb_clear", {})])


def test_type_after_content_is_buffered_then_emitted() -> None:
    text = '[{"content":"late type","type":"text"},{"params":{"elementId":"x"},"name":"laser","type":"action"}]'
    assert parse_in_chunks(text, [2] * 60) == ("late type", [("laser", {"elementId": "x"})])


def test_nested_params_are_kept_whole() -> None:
    params = {"chartType": "bar", "labels": ["a", "b"],
              "series": [{"name": "s", "values": [1, 2.5, -3]}], "meta": {"deep": {"deeper": [None, True]}}}
    text = reply(action("wb_draw_chart", **params))
    assert parse_in_chunks(text, [3] * 100) == ("", [("wb_draw_chart", params)])


def test_quote_markers_removed_at_line_starts() -> None:
    text = reply("> Quoted line\n> second line\nplain > not a marker")
    expected = "Quoted line\nsecond line\nplain > not a marker"
    assert parse_in_chunks(text)[0] == expected
    assert parse_in_chunks(text, [1] * len(text))[0] == expected


def test_bare_strings_in_the_array_are_speech() -> None:
    assert parse_in_chunks('["Just a string", {"type":"action","name":"wb_open"}]') == (
        "Just a string", [("wb_open", {})])


def test_lone_surrogate_becomes_replacement_character() -> None:
    assert parse_in_chunks('[{"type":"text","content":"a\\ud83d b"}]')[0] == "a\ufffd b"


def test_items_that_are_neither_text_nor_action_are_counted() -> None:
    parser = StructuredStreamParser()
    parser.feed('[{"type":"mystery","value":1},{"type":"text","content":"x"}]')
    parser.finish()
    assert parser.stats.dropped == 1


def test_trailing_text_after_the_array_is_ignored() -> None:
    assert parse_in_chunks(reply("x") + " and then [more] {junk}") == ("x", [])


def test_random_input_never_raises() -> None:
    rnd = random.Random(1234)
    alphabet = '[]{}",:\\ abcnu0123456789>\n\t\'`éd83dde00' + "\x00"
    for _ in range(10_000):
        length = rnd.randint(0, 60)
        if rnd.random() < 0.5:
            data = "".join(rnd.choice(alphabet) for _ in range(length))
        else:
            data = bytes(rnd.getrandbits(8) for _ in range(length)).decode("utf-8", "replace")
        parser = StructuredStreamParser()
        pos = 0
        while pos < len(data):
            step = rnd.randint(1, 6)
            parser.feed(data[pos:pos + step])
            pos += step
        parser.finish()


# -- hostile replies: deep nesting and broken surrogates ------------------
def deep(levels: int, leaf: str = "1") -> str:
    return "[" * levels + leaf + "]" * levels


def test_deeply_nested_params_mark_the_action_too_deep_without_recursion_error() -> None:
    for levels in (25, 300, 5000, 100_000):
        raw = ('[{"type":"text","content":"Before. "},'
               f'{{"type":"action","name":"wb_draw_table","params":{{"data":{deep(levels)}}}}},'
               '{"type":"text","content":"After."},'
               '{"type":"action","name":"wb_open","params":{}}]')
        for sizes in ([], [7] * (len(raw) // 7)):
            parser = StructuredStreamParser()
            items = []
            pos = 0
            for size in sizes:
                items += parser.feed(raw[pos:pos + size])
                pos += size
            items += parser.feed(raw[pos:]) + parser.finish()
            assert "".join(i.content for i in items if isinstance(i, TextItem)) == "Before. After."
            assert [(i.name, i.params, i.too_deep) for i in items if isinstance(i, ActionItem)] == [
                ("wb_draw_table", {}, True), ("wb_open", {}, False)]  # the turn drops and counts the first
            assert parser.stats.too_deep == 1 and parser.stats.dropped == 0


def test_params_nested_within_the_limit_are_kept() -> None:
    params = {"data": json.loads(deep(18))}
    assert parse_in_chunks(reply(action("wb_draw_table", **params))) == ("", [("wb_draw_table", params)])


def test_a_deeply_nested_text_item_keeps_its_speech() -> None:
    raw = '[{"type":"text","content":"Still said.","junk":' + deep(3000) + "}]"
    parser = StructuredStreamParser()
    items = parser.feed(raw) + parser.finish()
    assert "".join(i.content for i in items if isinstance(i, TextItem)) == "Still said."
    assert parser.stats.too_deep == 1


def test_deep_nesting_outside_objects_is_ignored_in_linear_time() -> None:
    raw = '["Hi ", ' + deep(200_000) + ', "there"]'
    assert parse_in_chunks(raw, [4096] * (len(raw) // 4096)) == ("Hi there", [])


def test_lone_surrogates_become_replacement_characters_in_text_and_params() -> None:
    # As escapes (decoded by the parser and by json.loads) and as raw code points.
    raw = ('[{"type":"text","content":"cut \\ud83d "}, "raw \ud800 x ", '
           '{"content":"no type \\udc00"}, '
           '{"type":"action","name":"wb_draw_text\ud800","params":{"content":"a\\ud83d","k\\udfff":["\udbff"]}}]')
    for sizes in ([], [1] * len(raw), [3] * (len(raw) // 3)):
        text, actions = parse_in_chunks(raw, sizes)
        assert text == "cut \ufffd raw \ufffd x no type \ufffd"
        assert actions == [("wb_draw_text\ufffd", {"content": "a\ufffd", "k\ufffd": ["\ufffd"]})]
        text.encode("utf-8")
        json.dumps(actions, ensure_ascii=False).encode("utf-8")


def test_prose_reply_with_a_surrogate_is_clean() -> None:
    assert parse_in_chunks("Just prose \ud83d") == ("Just prose \ufffd", [])
