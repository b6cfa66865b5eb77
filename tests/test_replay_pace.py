"""Replays a person can follow (chat/replay.py): a transcript recorded at once gets a reading pace,
a recorded pace is kept; the sample transcripts are recorded at a human pace; /quit says where the
transcript is."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from maic_cli.chat.replay import WORD_SECONDS, Player, instant
from maic_cli.cli.app import app
from maic_cli.engine.events import TextDeltaEvent
from maic_cli.store.transcript import EventLine, Transcript, read_transcript
from tests.helpers import decision, reply

ROOT = Path(__file__).parent.parent
SAMPLES = sorted((ROOT / "transcripts").glob("*.jsonl"))


def retimed(transcript: Transcript, step: float) -> Transcript:
    """The same class with its lines ``step`` seconds apart."""
    entries = [entry.model_copy(update={"t": round(i * step, 6)}) for i, entry in enumerate(transcript.entries)]
    return Transcript(path=transcript.path, header=transcript.header, entries=entries)


def total_pause(player: Player) -> float:
    previous, total = 0.0, 0.0
    for entry in player.transcript.entries:
        total += player.pause_before(previous, entry)
        previous = entry.t
    return total


def test_a_transcript_recorded_at_once_is_played_at_a_reading_pace() -> None:
    at_once = retimed(read_transcript(SAMPLES[0]), 0.0001)
    assert instant(at_once)
    player = Player(at_once, speed=1.0, step=False, console=None)
    previous = 0.0
    for entry in at_once.entries:
        pause = player.pause_before(previous, entry)
        if isinstance(entry, EventLine) and isinstance(entry.event, TextDeltaEvent) and entry.event.content.strip():
            assert pause >= WORD_SECONDS * len(entry.event.content.split()) - 1e-9
        previous = entry.t
    assert total_pause(player) > 10  # seconds: a class, not a flash
    assert total_pause(Player(at_once, speed=2.0, step=False, console=None)) == pytest.approx(total_pause(player) / 2)
    assert total_pause(Player(at_once, speed=None, step=False, console=None)) == 0  # --instant, or a pipe


def test_a_recorded_pace_is_kept() -> None:
    paced = retimed(read_transcript(SAMPLES[0]), 0.3)
    assert not instant(paced)
    player = Player(paced, speed=1.0, step=False, console=None)
    assert total_pause(player) == pytest.approx(0.3 * (len(paced.entries) - 1), rel=1e-6)


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.stem)
def test_the_samples_are_recorded_at_a_human_pace(path: Path) -> None:
    transcript = read_transcript(path)
    assert not instant(transcript)
    deltas = [entry.t for entry in transcript.entries]
    assert max(deltas) - min(deltas) > 10  # seconds of class
    assert total_pause(Player(transcript, speed=1.0, step=False, console=None)) > 10


def test_quitting_says_where_the_transcript_is(tmp_path: Path) -> None:
    script = tmp_path / "script.yaml"
    script.write_text(json.dumps([decision("teacher"), reply("Hello there."), decision("USER")]), encoding="utf-8")
    target = tmp_path / "class.jsonl"
    result = CliRunner().invoke(app, ["chat", "--model", f"scripted:{script}", "--session", str(tmp_path / "s.json"),
                                      "--transcript", str(target)], input="hi\n/quit\n")
    assert result.exit_code == 0, result.output
    assert f"Transcript: {target} (maic replay {target})" in result.stderr
    assert target.is_file()
