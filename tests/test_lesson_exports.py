"""``maic replay`` of a recorded lesson, and its Markdown and HTML exports:
slides with their elements by id, where the teacher pointed, quiz questions with their
options, the learner's answers, right or wrong, comments and the score — cleaned and
escaped (no link, no script, no way out of a code fence)."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from maic_cli.chat.replay import Player, rebuild_with_notes
from maic_cli.cli.app import app
from maic_cli.lessons.lesson import Lesson
from maic_cli.store.transcript import read_transcript
from tests.lesson_transcript import AGENTS_BY_ID, photosynthesis, write_lesson_transcript
from tests.test_exports_untrusted_text import link_targets

runner = CliRunner()


@pytest.fixture
def recorded(tmp_path: Path) -> Path:
    return write_lesson_transcript(tmp_path / "lesson.jsonl")


def export(transcript: Path, suffix: str) -> str:
    target = transcript.with_suffix(suffix)
    result = runner.invoke(app, ["replay", str(transcript), "--export", str(target)])
    assert result.exit_code == 0, result.output
    return target.read_text(encoding="utf-8")


def in_order(text: str, *parts: str) -> bool:
    positions = [text.find(part) for part in parts]
    return -1 not in positions and positions == sorted(positions)


def test_plain_replay_shows_slides_pointers_answers_and_the_score(recorded: Path) -> None:
    result = runner.invoke(app, ["replay", str(recorded), "--plain"])
    assert result.exit_code == 0
    out = result.stdout
    assert in_order(out, "== Lesson: How plants make food: photosynthesis ==",
                    "-- Scene 1/5 · slide · What a plant needs --", "[inputs] (bullets)",
                    "Ms. T: Here is a puzzle to start. [spotlight on question]", "[laser on leaf]\n",
                    "Learner (learner): Why not the soil?", "-- Scene 2/5 · slide · The overall reaction --",
                    "carbon dioxide | glucose (sugar)", "[spotlight on formula]",
                    "-- Scene 5/5 · quiz · Check your understanding --", "Question: Where does most",
                    "  C) Carbon dioxide from the air", "Answer: C · right · 2/2 points",
                    "Answer: A · wrong (the answer: A C) · 0/2 points", "Comment: Names energy",
                    "Quiz score: 5/7 · lesson total 5/7")


def test_the_markdown_export_shows_the_lesson_where_it_happened(recorded: Path) -> None:
    markdown = export(recorded, ".md")
    assert "- **lesson**: How plants make food: photosynthesis" in markdown
    assert in_order(markdown, "### Scene 1/5 · slide · What a plant needs", "#### Slide 1/3: What a plant needs",
                    "\nWhere does a tree's mass come from?\n", "\n- Light from the sun\n- Water from the roots",
                    "> 🖼 *A green leaf with arrows",
                    "Here is a puzzle to start. *→ spotlight on “Where does a tree's mass come from?”* Where does",
                    "*→ laser on the picture “A green leaf", "Why not the soil?",
                    "### Scene 2/5 · slide · The overall reaction",
                    "\n| In | Out |\n| --- | --- |\n| carbon dioxide | glucose (sugar) |",
                    "*→ spotlight on the formula “6 CO2", "This is the whole reaction",
                    "*→ laser on the table “In · Out”*",
                    "### Scene 5/5 · quiz", "**Question: Where does most of a tree's mass come from?**",
                    "- C) Carbon dioxide from the air", "✅ Answer: C · right · 2/2 points",
                    "❌ Answer: A · wrong (the answer: A C) · 0/2 points",
                    "✅ Answer: Light gives the energy to make sugar. · right · 3/3 points",
                    "Comment: Names energy, as the rubric asks.", "**Quiz score: 5/7 · lesson total 5/7**",
                    "## Slides not shown above", "#### Slide 3/3: Why it matters", "## Final whiteboard")
    assert "[question]" not in markdown and "(bullets)" not in markdown and "→ laser: " not in markdown


def test_the_html_export_shows_the_lesson_where_it_happened(recorded: Path) -> None:
    page = export(recorded, ".html")
    assert in_order(page, "<h3 class='scene'>Scene 1/5 · slide · What a plant needs</h3>",
                    "<h3 class='mslide-title'>What a plant needs</h3>", "<span class='mslide-place'>1 / 3</span>",
                    "data-el=\"inputs\"><ul class='mbullets'>", "<li>Water from the roots</li>",
                    "<figure class='mpicture'>", "<figcaption>A green leaf",
                    "<span class='badge pointer'>→ spotlight on “Where does a tree&#x27;s mass come from?”</span>",
                    "<span class='badge pointer'>→ laser on the picture “A green leaf", "Why not the soil?",
                    "<td>carbon dioxide</td><td>glucose (sugar)</td>", "<li>C) Carbon dioxide from the air</li>",
                    "<div class='right'>✅ Answer: C · right · 2/2 points</div>",
                    "<div class='wrong'>❌ Answer: A · wrong (the answer: A C) · 0/2 points</div>",
                    "<p class='score'>Quiz score: 5/7 · lesson total 5/7</p>",
                    "aria-label=\"Slide 3 of 3: Why it matters\"")
    assert "[inputs]" not in page and "(bullets)" not in page and "image:" not in page  # no id, no kind
    assert "<math xmlns=\"http://www.w3.org/1998/Math/MathML\" display=\"block\">" in page  # the formula typeset


def hostile_lesson() -> Lesson:
    lesson = photosynthesis().model_copy(deep=True)
    slide = lesson.scenes[0]
    assert slide.type == "slide"
    slide.title = "<script>alert(1)</script> [t](javascript:alert(2))"
    slide.elements[0].id = "x](javascript:alert(3)"
    slide.elements[0].content = "[click](javascript:alert(4)) <img src=x onerror=alert(5)> \x1b]0;pwn\x07"
    slide.elements[1].items = ["![i](data:text/html,alert(6))", "| not | a | cell |"]
    slide.elements[2].type = "code"
    slide.elements[2].language = "py\"><script>"
    slide.elements[2].content = "````\n[x](javascript:alert(7))\n````"
    second = lesson.scenes[1]
    assert second.type == "slide"
    second.elements[1].rows = [["a|b", "<b>c</b>"], ["[r](javascript:alert(8))", "\x1b[2Jd"]]
    return lesson


def test_lesson_content_is_escaped_in_both_exports(tmp_path: Path) -> None:
    transcript = write_lesson_transcript(tmp_path / "hostile.jsonl", hostile_lesson())
    markdown = export(transcript, ".md")
    page = export(transcript, ".html")
    assert link_targets(markdown) == []
    assert "\x1b" not in markdown and "\x07" not in markdown and "pwn" not in markdown
    assert "<script>" not in markdown and "<img" not in markdown and "&lt;img src=x" in markdown
    assert "\n`````pyscript\n````\n[x](javascript:alert(7))\n````\n`````\n" in markdown  # the fence outlasts it
    assert "| a\\|b | &lt;b&gt;c&lt;/b&gt; |" in markdown  # a cell cannot split the table
    assert "<script" not in page and "<img" not in page and "<b>c" not in page and "\x1b" not in page
    assert "href" not in page and "javascript:alert(4)" in page  # shown as text, never a link
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_rebuilt_notes_follow_the_messages(recorded: Path) -> None:
    classroom, notes = rebuild_with_notes(read_transcript(recorded))
    places = [(place, note.type) for place, note in notes.notes]
    assert places[:3] == [(0, "lesson"), (0, "scene"), (1, "action")]  # the laser after the first message
    assert (3, "scene") in places and places[-1] == (4, "quiz_score")
    assert len(classroom.messages) == 4 and AGENTS_BY_ID["teacher"].name == "Ms. T"


def test_the_live_replay_ends_on_the_lesson_with_its_slide_and_score(recorded: Path) -> None:
    console = Console(file=io.StringIO(), width=80, height=40, record=True)
    player = Player(read_transcript(recorded), speed=None, step=False, console=console)
    asyncio.run(player.play())
    out = console.export_text()
    assert "Slide 2/3: The overall" in out and "[formula]" in out and "[parts]" in out  # the last slide shown
    assert "── Scene 5/5 · quiz · Check your understanding" in out
    assert "Quiz score: 5/7 · lesson total 5/7" in out
    assert [note.type for _, note in player.state.notes.notes].count("quiz_answer") == 3
