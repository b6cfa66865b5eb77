"""Issue 35, findings 7, 8 and 12: media exports of hostile transcripts and lessons finish in seconds and keep
their formats whole (a speaker's name cannot forge a SubRip timing line; the mp4's subtitles are not lost)."""

from __future__ import annotations

import re
import subprocess
import time
from pathlib import Path

from maic_cli.engine.events import ActionEvent, AgentEndEvent, AgentStartEvent, Event, TextDeltaEvent
from maic_cli.engine.models import Slide, SlideElement, StoreState
from maic_cli.media.captions import subrip
from maic_cli.media.script import Said, Shown, board_of, from_class
from maic_cli.media.timeline import lay_out
from maic_cli.speech.port import Voice

FORGED = "00:00:00,000 --> 99:00:00,000"
_TIMING = re.compile(r"\d+:\d\d:\d\d,\d\d\d\s*-->")


def test_a_speaker_named_like_a_timing_line_puts_no_timing_line_in_a_subrip_cue() -> None:
    items: list[Said | Shown] = [Said(speaker="x", name=FORGED, text="Hello there.", turn=1),
                                 Said(speaker="y", name="Sam", text="A --> B is an arrow.", turn=2)]
    text = subrip(lay_out(list(items), [1.0, 1.0]))
    blocks = text.strip().split("\n\n")
    assert len(blocks) == 2
    for block in blocks:
        number, timing, *body = block.splitlines()
        assert number.isdigit() and _TIMING.match(timing)
        assert body and not any("-->" in line for line in body), block
    assert "Hello there." in blocks[0] and "A -> B is an arrow." in blocks[1]


def test_the_mp4_keeps_its_subtitles_when_a_speaker_is_named_like_a_timing_line(tmp_path: Path) -> None:
    from maic_cli.media import ffmpeg
    from maic_cli.media.export import Targets, export_media
    from tests.speech_doubles import ToneEngine

    slide = Slide(id="s", title="Arrows", elements=[SlideElement(id="a", content="An arrow")])
    items: list[Said | Shown] = [Shown(board_of(StoreState(slides=[slide]), "Arrows")),
                                 Said(speaker="x", name=FORGED, text="Hello there.", turn=1),
                                 Said(speaker="y", name="Sam", text="And hello back.", turn=2)]
    out = tmp_path / "forged.mp4"
    export_media(list(items), Targets(video=out), engine=ToneEngine(), voice_for=lambda _: Voice("tone", "low"),
                 speakable=lambda text: text, title="Arrows")
    subtitles = tmp_path / "subs.srt"
    subprocess.run([ffmpeg.find_ffmpeg(), "-v", "error", "-y", "-i", str(out), "-map", "0:s", str(subtitles)],
                   check=True, timeout=60)
    read = subtitles.read_text(encoding="utf-8")
    assert "Hello there." in read and "And hello back." in read, read
    timings = [line for line in read.splitlines() if "-->" in line]
    assert len(timings) == 2 and all(_TIMING.match(line) and "99:00" not in line for line in timings), read


def _spotlights(count: int, target: str) -> list[Event]:
    events: list[Event] = [AgentStartEvent(message_id="m", agent_id="t", agent_name="T", avatar="", color="")]
    for number in range(count):
        events.append(TextDeltaEvent(message_id="m", content="Look. "))
        events.append(ActionEvent(action_id=f"a{number}", action_name="spotlight", params={"elementId": target},
                                  agent_id="t", message_id="m"))
    events.append(AgentEndEvent(message_id="m", agent_id="t"))
    return events


def test_a_huge_table_slide_then_thousands_of_spotlights_makes_items_in_seconds() -> None:
    rows = [["Fraction", "Cut into", "Parts taken"]] + [[f"{i}/8", "8 equal parts", str(i)] for i in range(20_000)]
    slide = Slide(id="big", title="A long table", elements=[SlideElement(id="t", type="table", rows=rows),
                                                            SlideElement(id="note", content="A note")])
    store = StoreState(slides=[slide])
    started = time.monotonic()
    items = from_class(store, _spotlights(2000, "t"))
    took = time.monotonic() - started
    shown = [item for item in items if isinstance(item, Shown)]
    assert [board.board.spotlight for board in shown] == [None, "t"]  # the first spotlight changes it, no other
    assert sum(isinstance(item, Said) for item in items) >= 1
    assert took < 5.0, f"{took:.1f} s"


def test_a_slide_of_forty_long_bullet_lists_draws_as_one_frame_in_seconds() -> None:
    from maic_cli.media.frames import render

    long_item = ("word " * 68).strip()  # 339 characters an item, 60 items a list
    elements = [SlideElement(id=f"list{i}", type="bullets", items=[long_item] * 60) for i in range(40)]
    slide = Slide(id="s", title="Lists", elements=elements)
    assert len(slide.model_dump_json()) > 800_000
    board = board_of(StoreState(slides=[slide], spotlight="list39"), "Lists")
    started = time.monotonic()
    picture = render(board)
    took = time.monotonic() - started
    assert picture.startswith(b"\x89PNG")
    assert took < 5.0, f"{took:.1f} s"


def test_a_lesson_of_many_long_formulas_typesets_within_a_budget_then_writes_text() -> None:
    from maic_cli.media import typeset
    from maic_cli.media.frames import draw

    typeset.cache_clear()
    started = time.monotonic()
    typeset_counts = []
    with typeset.export_budget():
        for number in range(30):
            formulas = [SlideElement(id=f"f{i}", type="formula", content=" + ".join(
                rf"\frac{{a_{{{number}}}}}{{b^{{{i * 100 + j}}}}}" for j in range(12))) for i in range(10)]
            slide = Slide(id=f"s{number}", title="Formulas", elements=formulas)
            drawn = draw(board_of(StoreState(slides=[slide]), "Formulas"))
            typeset_counts.append(len(drawn.formulas))
    took = time.monotonic() - started
    assert typeset_counts[0] >= 3 and typeset_counts[-1] == 0  # typeset first, then written as text
    assert 250 < len(formulas[0].content) <= typeset.MAX_SOURCE
    assert sum(typeset_counts) * 250 <= typeset.EXPORT_CHARS
    assert took < 20.0, f"{took:.1f} s"
