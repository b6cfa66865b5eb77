"""Speech servers that lie, stall or flood (issue 35: findings 0, 1, 2, 4c), over real HTTP on 127.0.0.1.

Both clients are run: maic's own (``--voice openai-compatible``, speech/openai_speech.py over
speech/bounded_http.py) and litellm's (``--voice openai/tts-1 --voice-api-base``, speech/litellm_speech.py).
Every network read of a sentence has one deadline (here shortened to a few seconds) and a byte cap checked
as it streams; a key of any length never reaches a line, a log or a batch file.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from maic_cli.cli.app import app
from maic_cli.speech import bounded_http, litellm_speech
from maic_cli.speech.factory import make_engine
from maic_cli.speech.port import SpeechError, Voice
from maic_cli.speech.spec import VoiceSpec
from maic_cli.testing.speech_server import LoopbackSpeechServer
from tests.helpers import decision, reply

runner = CliRunner()
SHORT_KEY = "Zq7xK2p"  # 7 characters: shorter than the redaction's usual floor
SPECS = ["openai-compatible", "openai/tts-1"]
# litellm's other providers that maic hands its bounded client (Azure's SDK, ElevenLabs' HTTP handler)
ALL_SPECS = [*SPECS, "azure/tts", "elevenlabs/eleven_multilingual_v2"]
DEADLINE = 3.0


@pytest.fixture(autouse=True)
def short_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bounded_http, "DEADLINE_SECONDS", DEADLINE)
    monkeypatch.setattr(litellm_speech, "DEADLINE_SECONDS", DEADLINE)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback-test-key-0123456789abcdef")
    monkeypatch.setenv("AZURE_API_VERSION", "2024-10-21")
    monkeypatch.setenv("AZURE_API_KEY", "azure-loopback-key-0123456789")
    monkeypatch.setenv("ELEVENLABS_API_KEY", "eleven-loopback-key-0123456789")


def _say(spec: str, server: LoopbackSpeechServer) -> tuple[SpeechError, float]:
    engine = make_engine(VoiceSpec.parse(spec, api_base=server.base_url))
    assert engine is not None
    if not spec.startswith("openai-compatible"):
        litellm_speech._import_litellm()  # seconds on a busy machine, once: not the sentence's time
    started = time.monotonic()
    with pytest.raises(SpeechError) as caught:
        engine.synthesize("Hello there.", Voice(engine.name, "alloy"))
    return caught.value, time.monotonic() - started


@pytest.fixture
def served(request: pytest.FixtureRequest) -> Iterator[LoopbackSpeechServer]:
    with LoopbackSpeechServer(behaviour=request.param) as server:
        yield server


# -- 0: a key reaches a file ---------------------------------------------------------------------

SCENARIO = """id: sky
class:
  agents: [teacher]
learner: {nickname: Ana}
messages:
  - Why is the sky blue?
"""


def test_a_seven_character_key_echoed_in_a_401_reaches_no_output_and_no_batch_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MAIC_VOICE_API_KEY", SHORT_KEY)
    scenario = tmp_path / "sky.yaml"
    scenario.write_text(SCENARIO, encoding="utf-8")
    replies = tmp_path / "script.json"
    replies.write_text(json.dumps([decision("teacher"), reply("Sunlight scatters."), decision("USER")]),
                       encoding="utf-8")
    out = tmp_path / "out"
    with LoopbackSpeechServer(behaviour="echo-auth") as server:
        result = runner.invoke(app, ["run", str(scenario), "--model", f"scripted:{replies}", "--out", str(out),
                                     "--plain", "--voice", "openai-compatible", "--voice-api-base", server.base_url])
        sent = [h.get("Authorization") for h in server.headers]
    assert f"Bearer {SHORT_KEY}" in sent  # the key was really sent, and echoed back
    assert result.exit_code == 0, result.output
    errors = [json.loads(p.read_text(encoding="utf-8"))["speech"]["error"] for p in (out / "runs").glob("*.json")]
    assert errors and all(e and "401" in e for e in errors)
    for path in out.rglob("*"):
        if path.is_file():
            assert SHORT_KEY not in path.read_text(encoding="utf-8", errors="replace"), path
    assert SHORT_KEY not in result.output
    assert "a bug in maic" not in result.output


@pytest.mark.parametrize("spec", ALL_SPECS)
def test_a_short_key_echoed_by_either_client_is_redacted(spec: str, monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in ("MAIC_VOICE_API_KEY", "OPENAI_API_KEY", "AZURE_API_KEY", "ELEVENLABS_API_KEY"):
        monkeypatch.setenv(variable, SHORT_KEY)
    with LoopbackSpeechServer(behaviour="echo-auth") as server:
        error, _ = _say(spec, server)
        sent = server.headers[-1]
        assert SHORT_KEY in sent.get("Authorization", "") + sent.get("api-key", "") + sent.get("xi-api-key", "")
    assert "401" in str(error) and SHORT_KEY not in str(error) and "[redacted]" in str(error)


def test_a_password_in_the_api_base_is_sent_as_basic_auth_and_never_shown(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MAIC_VOICE_API_KEY", raising=False)
    with LoopbackSpeechServer(behaviour="echo-auth") as server:
        base = server.base_url.replace("http://", "http://ann:pw12345@")
        spec = VoiceSpec.parse("openai-compatible", api_base=base)
        assert "pw12345" not in repr(spec) and spec.api_base == server.base_url
        engine = make_engine(spec)
        assert engine is not None
        with pytest.raises(SpeechError) as caught:
            engine.synthesize("Hello.", Voice(engine.name, "alloy"))
        assert server.headers[-1]["Authorization"].startswith("Basic ")
    assert "pw12345" not in str(caught.value) and "YW5uOnB3MTIzNDU" not in str(caught.value)
    # the server gone: "cannot reach" names the host, not the password
    engine = make_engine(VoiceSpec.parse("openai-compatible", api_base=base))
    assert engine is not None
    with pytest.raises(SpeechError, match="cannot reach") as caught:
        engine.synthesize("Hello.", Voice(engine.name, "alloy"))
    assert "pw12345" not in str(caught.value) and "ann:" not in str(caught.value) and "ann@" not in str(caught.value)


# -- 1, 2: deadlines and caps ----------------------------------------------------------------------

@pytest.mark.parametrize("spec", SPECS)
@pytest.mark.parametrize("served", ["drip", "silent"], indirect=True)
def test_a_server_that_drips_or_never_answers_is_cut_off_at_the_deadline(
        spec: str, served: LoopbackSpeechServer) -> None:
    error, took = _say(spec, served)
    assert took < DEADLINE + 3.0, took
    assert f"{DEADLINE:g} s" in str(error) and "bug in maic" not in str(error)
    assert len(served.requests) == 1  # no retry


@pytest.mark.parametrize("spec", ALL_SPECS)
def test_a_400_mb_answer_is_refused_as_it_streams(spec: str) -> None:
    with LoopbackSpeechServer(behaviour="flood") as server:
        error, took = _say(spec, server)
        sent = server.sent_bytes
    assert "larger than 32 MiB" in str(error)
    assert sent < 200 * 2**20  # the client stopped reading long before the end
    assert took < DEADLINE + 3.0


@pytest.mark.parametrize("spec", ALL_SPECS)
def test_an_html_page_is_not_audio(spec: str) -> None:
    with LoopbackSpeechServer(behaviour="html") as server:
        error, _ = _say(spec, server)
    assert "text/html, not audio" in str(error)


@pytest.mark.parametrize("base", ["http://u:pw12345@[::1/v1", "http://h:99999/v1", "http://h:abc/v1", "http://:80/v1",
                                  "http://u:pw12345@/v1", "ftp://h/v1", "http://h/v1?key=pw12345"])
def test_a_malformed_api_base_is_one_line_without_its_password(base: str) -> None:
    result = runner.invoke(app, ["voices", "say", "teacher", "Hello.", "--voice", "openai-compatible",
                                 "--voice-api-base", base, "--out", "x.wav"])
    assert result.exit_code == 2, result.output
    assert "not an http(s) URL" in result.output and "pw12345" not in result.output
    assert "bug in maic" not in result.output


@pytest.mark.parametrize("spec", ALL_SPECS)
def test_a_redirect_to_another_origin_is_not_followed(spec: str) -> None:
    with LoopbackSpeechServer() as elsewhere, LoopbackSpeechServer(behaviour="redirect") as server:
        server.redirect_to = f"{elsewhere.base_url}/audio/speech"
        error, _ = _say(spec, server)
        assert elsewhere.requests == [] and elsewhere.headers == []
    assert "307" in str(error) or "redirect" in str(error)


def test_a_provider_that_does_not_speak_is_one_line_naming_those_that_do() -> None:
    result = runner.invoke(app, ["voices", "say", "teacher", "Hello.", "--voice", "ollama/tts", "--out", "x.wav"])
    assert result.exit_code == 2
    line = result.output.strip().splitlines()[-1]
    assert "ollama" in line and "openai" in line and "elevenlabs" in line and "bug in maic" not in result.output


@pytest.mark.parametrize("key", ["abc\r\nX-Evil: 1", "ключ"])
@pytest.mark.parametrize("spec", SPECS)
def test_a_key_that_cannot_be_a_header_is_one_line_and_injects_nothing(
        spec: str, key: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MAIC_VOICE_API_KEY", key)
    monkeypatch.setenv("OPENAI_API_KEY", key)
    with LoopbackSpeechServer() as server:
        error, _ = _say(spec, server)
        assert not any("X-Evil" in name for headers in server.headers for name in headers)
    assert "\n" not in str(error) and "X-Evil" not in str(error) and "ключ" not in str(error)


@pytest.mark.parametrize("spec", ALL_SPECS)
def test_an_answer_compressed_in_transit_is_not_unpacked(spec: str) -> None:
    """A few hundred KB of gzip unpack to any size (httpx unpacks whole; maic's own client read it as PCM)."""
    with LoopbackSpeechServer(behaviour="gzip") as server:
        server.flood_bytes = 64 * 2**20
        error, took = _say(spec, server)
        assert server.headers[-1].get("Accept-Encoding") == "identity"
    assert "gzip-compressed" in str(error) and took < DEADLINE + 3.0
