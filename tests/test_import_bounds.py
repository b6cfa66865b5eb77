"""``maic lesson import`` and ``export`` in bounded time and memory, whatever the file holds.

Each reported attack is built here (smaller than reported, big enough that the old code spent
tens of seconds or hundreds of megabytes on it) and run as a user runs it: ``maic`` in a fresh
interpreter, its wall time and its own peak memory measured (``testing/import_attacks.py``).
The limits leave room for a loaded machine (startup alone takes seconds there).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from maic_cli.lessons.lesson import SlideScene
from maic_cli.store.lessons import load_lesson
from maic_cli.testing.import_attacks import (
    line_break_lesson,
    measure,
    shared_stream_pdf,
    tiny_shapes_deck,
    wide_table_notes,
)

SECONDS = 45.0
PEAK_MB = 300.0


def _one_line_refusal(stderr: str) -> str:
    lines = [text for text in stderr.splitlines() if text.strip()]
    assert len(lines) == 1 and "unexpected" not in lines[0] and "Traceback" not in stderr, stderr
    return lines[0]


def test_a_deck_of_thirty_thousand_tiny_shapes_on_a_slide_is_read_fast_and_keeps_forty(tmp_path: Path) -> None:
    pytest.importorskip("pptx")
    tiny_shapes_deck(tmp_path / "shapes.pptx", 30_000)
    result = measure(["lesson", "import", "shapes.pptx"], tmp_path)
    assert result.code == 0, result.stderr
    assert result.seconds < SECONDS and result.peak_mb < PEAK_MB, result
    assert "only its first 1,000 shapes read" in result.stderr
    (slide,) = load_lesson(tmp_path / "shapes.yaml").scenes
    assert isinstance(slide, SlideScene) and len(slide.elements) == 40


def test_a_deck_whose_slide_is_more_xml_than_a_slide_holds_is_refused_before_it_is_parsed(tmp_path: Path) -> None:
    pytest.importorskip("pptx")
    tiny_shapes_deck(tmp_path / "shapes.pptx", 60_000)  # 14 MB of XML: python-pptx would parse it all
    result = measure(["lesson", "import", "shapes.pptx"], tmp_path)
    assert result.code == 2 and result.seconds < SECONDS and result.peak_mb < 150, result
    assert "more than a slide holds" in _one_line_refusal(result.stderr)


def test_a_table_a_thousand_columns_wide_is_cut_before_markdown_it_reads_it(tmp_path: Path) -> None:
    pytest.importorskip("markdown_it")
    wide_table_notes(tmp_path / "wide.md", 1_000, 2**20)  # 1 MB: markdown-it alone took 15 s and 1 GB
    result = measure(["lesson", "import", "wide.md"], tmp_path)
    assert result.code == 0, result.stderr
    assert result.seconds < SECONDS and result.peak_mb < PEAK_MB, result
    (slide,) = load_lesson(tmp_path / "wide.yaml").scenes
    assert isinstance(slide, SlideScene)
    assert len(slide.elements[0].rows) == 60 and {len(row) for row in slide.elements[0].rows} == {60}


def test_pdf_pages_sharing_one_huge_content_stream_keep_their_slides_not_their_text(tmp_path: Path) -> None:
    pytest.importorskip("pypdf")
    shared_stream_pdf(tmp_path / "shared.pdf", 60, 8 * 2**20)  # 60 extractions of 8 MB each, before
    result = measure(["lesson", "import", "shared.pdf"], tmp_path)
    assert result.code == 0, result.stderr
    assert result.seconds < SECONDS and result.peak_mb < PEAK_MB, result
    assert "page 1: its text was not read" in result.stderr
    assert len(load_lesson(tmp_path / "shared.yaml").scenes) == 60


def test_pdf_pages_sharing_a_middling_stream_are_read_until_the_budget_is_spent(tmp_path: Path) -> None:
    pytest.importorskip("pypdf")
    shared_stream_pdf(tmp_path / "shared.pdf", 60, 150 * 2**10)  # under a page's limits, over the PDF's
    result = measure(["lesson", "import", "shared.pdf"], tmp_path)
    assert result.code == 0 and result.seconds < SECONDS and result.peak_mb < PEAK_MB, result
    assert len(load_lesson(tmp_path / "shared.yaml").scenes) == 60
    skipped = result.stderr.count("its text was not read")
    assert 50 <= skipped <= 57 and "page 1: its text" not in result.stderr and "page 60: its text" in result.stderr


def test_a_lesson_element_of_line_breaks_is_refused_on_load_with_its_line(tmp_path: Path) -> None:
    line_break_lesson(tmp_path / "breaks.yaml", 300_000)
    result = measure(["lesson", "export", "breaks.yaml", "--out", "x.pptx"], tmp_path)
    assert result.code == 2 and result.seconds < SECONDS and result.peak_mb < 200, result
    refusal = _one_line_refusal(result.stderr)
    assert "breaks.yaml:7: scenes.0.elements.0: content: at most 8,000 characters" in refusal
    assert not (tmp_path / "x.pptx").exists()
