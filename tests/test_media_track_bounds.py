"""A lesson's voiced track in bounded memory, whatever rates a provider answers at (issue 35: findings 5, 6).

Each export runs in a fresh interpreter (``measure``: its own peak RSS) against a loopback speech server: the
track is streamed to its file block by block (memory holds one clip, not the track), clips of other rates are
brought to one rate of at most 48 kHz, and the sentences together may last at most
``MAX_TRACK_SECONDS`` (refused in one line past it).
"""

from __future__ import annotations

import wave
from pathlib import Path

import pytest

from maic_cli.errors import InputError
from maic_cli.media.export import Targets, export_media
from maic_cli.media.script import Item, Said
from maic_cli.media.voicing import MAX_TRACK_RATE, MAX_TRACK_SECONDS
from maic_cli.speech.factory import make_engine
from maic_cli.speech.port import Voice
from maic_cli.speech.spec import VoiceSpec
from maic_cli.testing.import_attacks import Measured, measure
from maic_cli.testing.speech_attacks import long_lesson, sentence, wav_answer
from maic_cli.testing.speech_server import LoopbackSpeechServer

MANY_RATES = [wav_answer(120.0, 4000), wav_answer(0.2, 192_000), wav_answer(0.2, 192_000)]


def _export(tmp_path: Path, server: LoopbackSpeechServer, sentences: int) -> tuple[Measured, Path]:
    lesson = long_lesson(tmp_path / "long.yaml", sentences)
    out = tmp_path / "long.wav"
    result = measure(["lesson", "export", str(lesson), "--out", str(out), "--voice", "openai-compatible",
                      "--voice-api-base", server.base_url], tmp_path, timeout=300)
    return result, out


def test_a_long_lesson_exported_to_wav_is_streamed_not_held(tmp_path: Path) -> None:
    with LoopbackSpeechServer(body=wav_answer(10.0)) as server:
        result, out = _export(tmp_path, server, 250)
    assert result.code == 0, result.stderr
    track_mb = out.stat().st_size / 2**20
    assert track_mb > 110
    assert result.peak_mb < 100, (result.peak_mb, track_mb)
    with wave.open(str(out), "rb") as handle:
        assert handle.getframerate() == 24000 and handle.getnframes() * 2 > 110 * 2**20


def test_clips_at_4_and_192_khz_make_one_track_of_at_most_48_khz_in_bounded_memory(tmp_path: Path) -> None:
    with LoopbackSpeechServer() as server:
        server.bodies = MANY_RATES
        result, out = _export(tmp_path, server, 30)  # ten clips of two minutes at 4 kHz, twenty short at 192 kHz
    assert result.code == 0, result.stderr
    with wave.open(str(out), "rb") as handle:
        rate, frames = handle.getframerate(), handle.getnframes()
    assert rate == MAX_TRACK_RATE and frames / rate > 10 * 120
    assert result.peak_mb < 250, result.peak_mb


def test_a_track_longer_than_the_bound_is_refused_in_one_line(tmp_path: Path) -> None:
    long_clips = int(MAX_TRACK_SECONDS // 120) + 2
    items: list[Item] = [Said(speaker="teacher", name="Ms. Rivera", text=sentence(n), turn=n)
                         for n in range(3 * long_clips)]
    with LoopbackSpeechServer() as server:
        server.bodies = MANY_RATES
        engine = make_engine(VoiceSpec.parse("openai-compatible", api_base=server.base_url))
        assert engine is not None
        with pytest.raises(InputError) as caught:
            export_media(items, Targets(audio=tmp_path / "x.wav"), engine=engine,
                         voice_for=lambda _: Voice(engine.name, "alloy"), speakable=str, title="t")
    message = str(caught.value)
    assert "\n" not in message and "more than 4 hours" in message
    assert not (tmp_path / "x.wav").exists()
