"""The Markdown and HTML exports treat model text and stored elements as untrusted: no links from
model text, no way out of a code fence, no crash on any element content."""

from __future__ import annotations

import html
import math

import pytest
from markdown_it import MarkdownIt

from maic_cli.engine.classroom import Classroom
from maic_cli.engine.models import ActionRecord, CodeLine, Message, MessagePart, WhiteboardElement
from maic_cli.engine.whiteboard import apply_action
from maic_cli.ui.export import classroom_to_markdown
from maic_cli.ui.export_html import classroom_to_html
from maic_cli.ui.export_lesson import code_fence
from tests.helpers import agent

AGENTS = {"teacher": agent("teacher", "teacher", "Ms. T")}
LINKS = [
    "[click](javascript:alert(1))",
    "![img](data:text/html,alert(1))",
    "[x](vbscript:alert(1))",
    "[ref][evil]\n\n[evil]: javascript:alert(2)",
    "[shortcut]\n\n[shortcut]: JaVaScRiPt:alert(3)",
    "<javascript:alert(4)>",
    "\\[escaped\\](javascript:alert(5))",
    "[a&#93;(javascript:alert(6))",
    "[nested [brackets]](javascript:alert(7))",
]


def permissive_markdown() -> MarkdownIt:
    """A renderer that does not filter link schemes itself (as many do not)."""
    md = MarkdownIt("commonmark")
    md.validateLink = lambda url: True  # type: ignore[method-assign]
    return md


def link_targets(markdown: str) -> list[str]:
    targets = []
    for token in permissive_markdown().parse(markdown):
        for child in token.children or []:
            if child.type in ("link_open", "image"):
                targets.append(str(child.attrGet("href") or child.attrGet("src")))
    return targets


def spoken(text: str) -> Classroom:
    classroom = Classroom()
    classroom.messages.append(Message(role="agent", agent_id="teacher", agent_name="Ms. T",
                                      parts=[MessagePart(kind="text", text=text)]))
    return classroom


def test_the_check_itself_sees_links_when_they_are_not_escaped() -> None:
    assert link_targets("[click](javascript:alert(1))") == ["javascript:alert(1)"]


@pytest.mark.parametrize("text", LINKS)
def test_model_text_makes_no_link_in_the_markdown_export(text: str) -> None:
    markdown = classroom_to_markdown(spoken(text), AGENTS)
    assert link_targets(markdown) == []
    assert "alert(" in markdown  # shown as text, not dropped


def test_no_link_from_an_action_badge_or_adjacent_text_parts() -> None:
    classroom = spoken("see [here]")
    message = classroom.messages[0]
    message.parts.append(MessagePart(kind="text", text="(javascript:alert(1))"))
    message.parts.append(MessagePart(kind="action", action=ActionRecord.model_validate({
        "action_id": "a", "name": "wb_delete", "params": {"elementId": "x](javascript:alert(2)"}})))
    assert link_targets(classroom_to_markdown(classroom, AGENTS)) == []


def test_model_text_cannot_open_a_code_fence_or_span() -> None:
    text = "before\n```\nswallowed\n``` and `code` and ~~~"
    markdown = classroom_to_markdown(spoken(text), AGENTS)
    tokens = permissive_markdown().parse(markdown)
    every = tokens + [child for t in tokens for child in t.children or []]
    assert not [t for t in every if t.type in ("fence", "code_block", "code_inline")]
    headings = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"]
    assert "Final whiteboard" in headings  # not swallowed by a fence the model opened


def test_code_on_the_board_stays_inside_its_fence() -> None:
    classroom = Classroom()
    code = "x = 1\n```\n# not a heading\n````` longer run\nprint(x)"
    assert apply_action(classroom.store, "wb_draw_code", {"language": "py```\nthon", "code": code}) is None
    markdown = classroom_to_markdown(classroom, AGENTS)
    fences = [t for t in permissive_markdown().parse(markdown) if t.type == "fence"]
    assert len(fences) == 1 and fences[0].content.splitlines() == code.splitlines()
    assert fences[0].info == "python"
    assert code_fence(["a", "``` x", "````"]) == "`````"


def crafted_elements() -> list[WhiteboardElement]:
    """Elements built without validation (model_construct), as a buggy caller might."""
    raw = [("table", {"data": 5}), ("table", {"data": {"a": [1]}}), ("chart", {"labels": 3, "series": 4}),
           ("chart", {"series": [{"values": [math.nan, math.inf, 10 ** 400, "x"]}]}),
           ("shape", {"shape": {"k": 1}, "x": "left"}), ("line", {"startX": [1]}),
           ("text", {"content": ["<script>"]}), ("latex", {}), ("code", {"code": {"a": 1}})]
    elements = [WhiteboardElement.model_construct(id=f"e{i}", kind=kind, params=params, agent_id=None,
                                                  lines=[CodeLine(id="L1", text="``` <b>")], next_line=2)
                for i, (kind, params) in enumerate(raw)]
    elements.append(WhiteboardElement(id="good", kind="text", params={"content": "<b>fine</b>"}))
    return elements


def test_exports_do_not_trust_stored_elements() -> None:
    classroom = Classroom()
    classroom.store.whiteboard.extend(crafted_elements())
    markdown = classroom_to_markdown(classroom, AGENTS)
    page = classroom_to_html(classroom, AGENTS)
    assert markdown.count("(unreadable)") == 9 and "&lt;b&gt;fine&lt;/b&gt;" in markdown
    assert page.count("(unreadable element)") == 9 and html.escape("<b>fine</b>") in page
    assert "<script>" not in page and "<b>" not in page


def test_html_export_escapes_model_text_and_badges() -> None:
    classroom = spoken("<img src=x onerror=alert(1)> & \"quotes\" 'single' \ud800")
    classroom.messages[0].parts.append(MessagePart(kind="action", action=ActionRecord.model_validate({
        "action_id": "a", "name": "spotlight", "params": {"elementId": "'><script>alert(1)</script>"}})))
    page = classroom_to_html(classroom, AGENTS)
    assert "<img" not in page and "<script>" not in page and "\ud800" not in page
    assert "&lt;img src=x onerror=alert(1)&gt; &amp; &quot;quotes&quot; &#x27;single&#x27; \ufffd" in page
    page.encode("utf-8")
