"""``maic lesson export L --out lesson.html --voice espeak``: the class's voices in the page, for real — every line
synthesized in its speaker's voice (espeak-ng), one Ogg Opus track that ffmpeg decodes, and Play in Chromium reading
the lesson aloud in step (the line shown is the line the audio is in)."""

from __future__ import annotations

import base64
import itertools
import json
import re
from pathlib import Path

import pytest

from maic_cli.formats.player import lines
from maic_cli.formats.player_voice import GAP_SECONDS
from maic_cli.media import ffmpeg
from maic_cli.speech import espeak_engine
from maic_cli.store.lessons import load_lesson
from maic_cli.store.personas import DEFAULT_CLASS, load_registry
from maic_cli.testing.browser import open_page
from tests.player_pages import ROOT, export, need_chromium

pytestmark = pytest.mark.skipif(espeak_engine.executable() is None,
                                reason="espeak-ng is not installed (apt-get install espeak-ng)")
PHOTOSYNTHESIS = ROOT / "lessons" / "photosynthesis.yaml"


@pytest.fixture(scope="module")
def voiced(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("voiced")
    return export(PHOTOSYNTHESIS, folder / "lesson.html", "--voice", "espeak")


def parts(page: Path) -> tuple[bytes, list[list[float]]]:
    text = page.read_text(encoding="utf-8")
    audio = re.search(r"<audio id='voice' preload='auto' src='data:audio/ogg;base64,([A-Za-z0-9+/=]+)'>", text)
    data = re.search(r"<script type='application/json' id='lesson-data'>(.*?)</script>", text, re.S)
    assert audio is not None and data is not None
    return base64.b64decode(audio.group(1)), json.loads(data.group(1))["spans"]


def test_every_line_is_voiced_in_one_opus_track_that_decodes(voiced: Path, tmp_path: Path) -> None:
    audio, spans = parts(voiced)
    track = tmp_path / "track.ogg"
    track.write_bytes(audio)
    log = ffmpeg.probe(track)
    assert "Audio: opus" in log and "mono" in log
    registry = load_registry()
    said = lines(load_lesson(PHOTOSYNTHESIS), [registry.agents[i] for i in DEFAULT_CLASS if i in registry.agents])
    assert len(spans) == len(said) == 25
    assert all(end - start > 0.5 for start, end in spans)  # every line has its speech
    assert all(later[0] >= earlier[1] for earlier, later in itertools.pairwise(spans))
    duration = ffmpeg.duration_of(log)
    assert duration is not None and abs(duration - (spans[-1][1] + GAP_SECONDS)) < 0.2
    assert len(audio) < 6_000 * duration  # compressed: Opus at 32 kbit/s is 4 kB a second, not wav's 44
    decoded = tmp_path / "track.wav"
    ffmpeg.run(["-i", str(track), str(decoded)], seconds=60, what="decode")  # every packet decodes
    assert decoded.stat().st_size > 16_000 * duration  # 16-bit PCM at ≥ 8 kHz for the whole duration


def test_play_reads_the_lesson_aloud_in_step(voiced: Path, tmp_path: Path) -> None:
    need_chromium(tmp_path)
    _, spans = parts(voiced)
    expression = """(async () => {
      const a = document.getElementById('voice'), data = JSON.parse(document.getElementById('lesson-data').textContent);
      const said = data.scenes.flatMap(s => s.steps.filter(t => t.say !== undefined));
      await new Promise(r => a.readyState >= 1 ? r() : a.addEventListener('loadedmetadata', r));
      a.playbackRate = 4;
      [...document.querySelectorAll('button')].find(b => b.textContent.endsWith('Play')).click();
      const log = [];
      for (let i = 0; i < 24; i++) {
        await new Promise(r => setTimeout(r, 250));
        const line = document.querySelector('#band .mline').textContent;
        log.push({t: a.currentTime, playing: !a.paused, line: said.findIndex(s => s.say === line),
                  pressed: document.getElementById('play').getAttribute('aria-pressed')});
      }
      return log;
    })()"""
    visit = open_page(voiced, expression, seconds=60)
    assert visit.errors == []
    log = visit.value
    playing = [entry for entry in log if entry["playing"]]
    assert len(playing) >= 12 and all(entry["pressed"] == "true" for entry in log)
    for entry in playing:  # the line shown is the one whose span the audio is in
        start, end = spans[entry["line"]]
        assert start - 0.05 <= entry["t"] <= end + GAP_SECONDS + 0.3, entry
    assert len({entry["line"] for entry in playing}) >= 3  # it moved on, line by line, by itself
