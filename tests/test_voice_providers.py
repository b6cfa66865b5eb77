"""Provider voices over real HTTP on 127.0.0.1: litellm's speech() (openai/tts-1 at an api_base) and maic's own
OpenAI-compatible client (--voice-api-base), the body and key they send, the audio they decode, their errors."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator

import pytest

from maic_cli.speech import audio as audio_module
from maic_cli.speech import openai_speech
from maic_cli.speech.audio import ffmpeg_exe, rms
from maic_cli.speech.factory import make_engine
from maic_cli.speech.normalize import for_speech
from maic_cli.speech.port import SpeechError, Voice
from maic_cli.speech.spec import VoiceSpec
from maic_cli.testing.speech_server import SECONDS_A_WORD, LoopbackSpeechServer, tone

KEY = "sk-loopback-test-key-0123456789abcdef"
SENTENCE = "So **x^2 = 9** means x is 3 or -3."


@pytest.fixture
def server() -> Iterator[LoopbackSpeechServer]:
    with LoopbackSpeechServer() as running:
        yield running


def test_litellm_sends_the_model_voice_normalised_text_and_the_environment_key(
        server: LoopbackSpeechServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    engine = make_engine(VoiceSpec.parse("openai/tts-1", api_base=server.base_url))
    assert engine is not None
    spoken = for_speech(SENTENCE)
    audio = engine.synthesize(spoken, Voice(engine.name, "onyx", speed=0.92))
    body, headers = server.requests[-1], server.headers[-1]
    assert body["model"] == "tts-1" and body["voice"] == "onyx" and body["response_format"] == "wav"
    assert body["input"] == "So x squared equals 9 means x is 3 or minus 3." == spoken
    assert body["speed"] == pytest.approx(0.92)
    assert headers["Authorization"] == f"Bearer {KEY}"
    assert audio.rate == 24000
    assert audio.seconds == pytest.approx(len(spoken.split()) * SECONDS_A_WORD, abs=0.01)
    assert rms(audio) > 1000


def test_the_openai_compatible_client_posts_the_same_request(server: LoopbackSpeechServer,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MAIC_VOICE_API_KEY", "local-server-key")
    engine = make_engine(VoiceSpec.parse("openai-compatible/kokoro", api_base=server.base_url))
    assert engine is not None
    audio = engine.synthesize(for_speech("Three quarters: 3/4."), Voice(engine.name, "af_bella", speed=1.1))
    body, headers = server.requests[-1], server.headers[-1]
    assert body == {"model": "kokoro", "input": "Three quarters: three quarters.", "voice": "af_bella",
                    "response_format": "wav", "speed": 1.1}
    assert headers["Authorization"] == "Bearer local-server-key"
    assert audio.seconds == pytest.approx(4 * SECONDS_A_WORD, abs=0.01) and rms(audio) > 1000


def test_no_key_is_sent_to_a_server_when_none_is_set(server: LoopbackSpeechServer,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MAIC_VOICE_API_KEY", raising=False)
    engine = make_engine(VoiceSpec.parse("openai-compatible", api_base=server.base_url))
    assert engine is not None
    engine.synthesize("Hello.", Voice(engine.name, "alloy"))
    assert "Authorization" not in server.headers[-1]


def test_raw_pcm_is_read_at_openais_rate(monkeypatch: pytest.MonkeyPatch) -> None:
    with LoopbackSpeechServer(answer="pcm") as server:
        engine = make_engine(VoiceSpec.parse("openai-compatible", api_base=server.base_url))
        assert engine is not None
        audio = engine.synthesize("one two three four", Voice(engine.name, "alloy"))
    assert audio.rate == 24000 and audio.seconds == pytest.approx(4 * SECONDS_A_WORD, abs=0.01)


@pytest.mark.skipif(ffmpeg_exe() is None, reason="no ffmpeg (the voices extra brings imageio-ffmpeg)")
def test_an_mp3_answer_is_decoded_by_ffmpeg() -> None:
    exe = ffmpeg_exe()
    assert exe is not None
    source = tone(1.5)
    mp3 = subprocess.run([exe, "-hide_banner", "-loglevel", "error", "-f", "s16le", "-ar", "24000", "-ac", "1",
                          "-i", "pipe:0", "-f", "mp3", "pipe:1"], input=source.pcm, capture_output=True,
                         timeout=60, check=True).stdout
    assert mp3[:3] == b"ID3" or mp3[0] == 0xFF
    with LoopbackSpeechServer(body=mp3) as server:
        engine = make_engine(VoiceSpec.parse("openai-compatible", api_base=server.base_url))
        assert engine is not None
        audio = engine.synthesize("Hello.", Voice(engine.name, "alloy"))
    assert audio.seconds == pytest.approx(1.5, abs=0.1) and rms(audio) > 1000


@pytest.mark.parametrize("spec", ["openai/tts-1", "openai-compatible"])
def test_a_provider_error_is_one_redacted_line(spec: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("MAIC_VOICE_API_KEY", KEY)
    with LoopbackSpeechServer(status=401, error=f"Incorrect API key provided: {KEY}\nsee the docs") as server:
        engine = make_engine(VoiceSpec.parse(spec, api_base=server.base_url))
        assert engine is not None
        with pytest.raises(SpeechError) as caught:
            engine.synthesize("Hello.", Voice(engine.name, "alloy"))
    message = str(caught.value)
    assert "\n" not in message and KEY not in message and "401" in message
    assert message.startswith(engine.name)


def test_an_unreachable_server_is_one_line() -> None:
    with LoopbackSpeechServer() as server:
        base = server.base_url
    engine = make_engine(VoiceSpec.parse("openai-compatible", api_base=base))
    assert engine is not None
    with pytest.raises(SpeechError, match="cannot reach"):
        engine.synthesize("Hello.", Voice(engine.name, "alloy"))


def test_an_answer_over_the_cap_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(openai_speech, "MAX_AUDIO_BYTES", 1000)
    with LoopbackSpeechServer() as server:
        engine = make_engine(VoiceSpec.parse("openai-compatible", api_base=server.base_url))
        assert engine is not None
        with pytest.raises(SpeechError, match="larger than"):
            engine.synthesize("one two three four five", Voice(engine.name, "alloy"))


def test_garbage_is_not_audio(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(audio_module, "ffmpeg_exe", lambda: None)
    with LoopbackSpeechServer(body=b"ID3not really an mp3") as server:
        engine = make_engine(VoiceSpec.parse("openai-compatible", api_base=server.base_url))
        assert engine is not None
        with pytest.raises(SpeechError, match="ffmpeg is not installed"):
            engine.synthesize("Hello.", Voice(engine.name, "alloy"))
    with pytest.raises(SpeechError, match="not a readable WAV"):
        audio_module.read_wav(b"RIFF\x00\x00\x00\x00WAVEjunk")
