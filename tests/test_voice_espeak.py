"""espeak-ng as a voice engine, for real where it is installed (apt-get install espeak-ng)."""

from __future__ import annotations

from pathlib import Path

import pytest

from maic_cli.speech import espeak_engine
from maic_cli.speech.audio import rms
from maic_cli.speech.port import SpeechError, Voice
from maic_cli.testing.pitch import median_pitch

pytestmark = pytest.mark.skipif(espeak_engine.executable() is None,
                                reason="espeak-ng is not installed (apt-get install espeak-ng)")


def test_espeak_says_a_sentence() -> None:
    engine = espeak_engine.EspeakEngine()
    audio = engine.synthesize("Hello class, today we look at fractions.", Voice("espeak", "en-us"))
    assert 1.0 < audio.seconds < 6.0 and rms(audio) > 500


def test_text_that_looks_like_options_is_spoken_not_obeyed(tmp_path: Path) -> None:
    engine = espeak_engine.EspeakEngine()
    target = tmp_path / "owned.wav"
    audio = engine.synthesize(f"--help -w {target}", Voice("espeak", "en-us"))
    assert audio.seconds > 0.5 and rms(audio) > 500  # said as words, through stdin
    assert not target.exists()  # -w (write a file) was text, not an option


def test_pitch_and_speed_tell_agents_apart() -> None:
    engine = espeak_engine.EspeakEngine()
    text = "Let us look at this together, one step at a time."
    low = engine.synthesize(text, Voice("espeak", "en-us", speed=0.9, pitch=-2.0))
    high = engine.synthesize(text, Voice("espeak", "en-us", speed=1.1, pitch=2.0))
    assert median_pitch(high) / median_pitch(low) >= 1.10
    assert low.seconds > high.seconds


def test_an_unknown_voice_lists_espeaks_voices() -> None:
    engine = espeak_engine.EspeakEngine()
    assert engine.voices()[0] == "en-us"
    with pytest.raises(SpeechError, match=r"unknown voice 'xx-nope'; espeak-ng has: en-us"):
        engine.synthesize("Hello.", Voice("espeak", "xx-nope"))
