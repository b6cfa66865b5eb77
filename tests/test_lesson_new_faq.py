"""``maic lesson new`` with a provider model writes the questions a teacher expects (``faq:``) with each slide's
lecture and each discussion, and a discussion's ``close:``; entries that are not questions with answers are left
out and counted; a small model's fixed shapes ask for none."""

from __future__ import annotations

import json
from pathlib import Path

from maic_cli.authoring.schemas import COMPACT, discussion_schema, script_schema
from maic_cli.lessons.lesson import DiscussionScene, ExpectedQuestion, SlideScene
from maic_cli.store.lessons import load_lesson
from tests.lesson_steps import DISCUSSION, SCRIPT, generate, new, replies

FAQ = [{"q": ["Does the tree eat soil?", "Is the mass from the soil?"], "a": "No: most of it comes from the air."},
       {"q": "Why light?", "a": "Light gives the energy."},
       {"q": "", "a": "an entry with no question"}, "not an entry", {"q": "An answer missing?"}]


def test_a_provider_model_writes_faq_with_the_lecture_and_faq_and_close_with_the_discussion(tmp_path: Path) -> None:
    script = json.dumps({**SCRIPT, "faq": FAQ})
    talk = json.dumps({**DISCUSSION, "faq": FAQ[:1], "close": ["So light is what the plant cannot do without."]})
    result, out = new(tmp_path, replies((3, script), (4, talk)))
    assert result.exit_code == 0, result.stderr
    lesson = load_lesson(out)
    slide, discussion = lesson.scenes[0], lesson.scenes[1]
    assert isinstance(slide, SlideScene) and isinstance(discussion, DiscussionScene)
    assert slide.faq == [ExpectedQuestion(q=["Does the tree eat soil?", "Is the mass from the soil?"],
                                          a="No: most of it comes from the air."),
                         ExpectedQuestion(q="Why light?", a="Light gives the energy.")]
    assert [f.a for f in discussion.faq] == ["No: most of it comes from the air."]
    assert [s.say for s in discussion.close] == ["So light is what the plant cannot do without."]


def test_the_steps_ask_for_faq_on_a_provider_and_the_left_out_entries_are_counted() -> None:
    result, llm = generate(replies((3, json.dumps({**SCRIPT, "faq": FAQ}))))
    assert "faq" in llm.calls[3].response_schema["properties"]  # type: ignore[index]
    assert "questions a teacher expects" in llm.calls[3].messages[-1]["content"]
    assert result.fixes["expected questions left out"] == 3
    assert "faq" not in script_schema(["a"], COMPACT)["properties"]
    assert "close" not in discussion_schema([], COMPACT)["properties"]
