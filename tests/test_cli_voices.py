"""``maic voices list | say`` and the voice in ``maic agents show``, as a user types them."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from maic_cli.cli.app import app
from maic_cli.speech import espeak_engine, system_player
from maic_cli.speech.audio import read_wav, rms
from maic_cli.testing.speech_server import LoopbackSpeechServer

runner = CliRunner()


def test_list_shows_the_engines_voices_and_who_gets_which() -> None:
    result = runner.invoke(app, ["voices", "list"])
    assert result.exit_code == 0, result.output
    assert "The voice is off" in result.output and "local voices: en_US-joe-medium" in result.output
    for agent in ("teacher", "assistant", "class_clown", "curious_student", "note_taker", "deep_thinker"):
        assert agent in result.output
    teacher = next(line for line in result.output.splitlines() if line.startswith("teacher"))
    assert teacher.split() == ["teacher", "teacher", "en_US-joe-medium", "0.85", "-5.0", "derived"]


def test_list_for_a_provider_needs_no_key() -> None:
    result = runner.invoke(app, ["voices", "list", "--voice", "openai/tts-1"])
    assert result.exit_code == 0, result.output
    assert "openai/tts-1 voices: alloy" in result.output
    teacher = next(line for line in result.output.splitlines() if line.startswith("teacher"))
    assert "onyx" in teacher


def test_say_through_an_openai_compatible_server_writes_a_wav_and_caches_it(tmp_path: Path) -> None:
    out = tmp_path / "teacher.wav"
    with LoopbackSpeechServer() as server:
        argv = ["voices", "say", "teacher", "Half of **1/2** is 1/4.", "--voice", "openai-compatible",
                "--voice-api-base", server.base_url, "--out", str(out)]
        result = runner.invoke(app, argv)
        assert result.exit_code == 0, result.output
        assert server.requests[0]["input"] == "Half of one half is one quarter."
        assert server.requests[0]["voice"] == "onyx" and server.requests[0]["speed"] == 0.85
        audio = read_wav(out.read_bytes())
        assert audio.seconds > 1.0 and rms(audio) > 1000
        assert f"wrote {out}: teacher in openai-compatible/tts-1 (onyx, speed 0.85" in result.output
        again = runner.invoke(app, argv)
        assert again.exit_code == 0 and len(server.requests) == 1  # the second time from the cache
        assert read_wav(out.read_bytes()) == audio


@pytest.mark.skipif(espeak_engine.executable() is None, reason="espeak-ng is not installed")
def test_say_with_espeak(tmp_path: Path) -> None:
    out = tmp_path / "mia.wav"
    result = runner.invoke(app, ["voices", "say", "curious_student", "Is x^2 always positive?", "--voice", "espeak",
                                 "--out", str(out)])
    assert result.exit_code == 0, result.output
    audio = read_wav(out.read_bytes())
    assert audio.seconds > 1.0 and rms(audio) > 500


def test_a_persona_voice_the_engine_lacks_is_one_line_listing_its_voices(tmp_path: Path) -> None:
    folder = tmp_path / "agents"
    folder.mkdir()
    (folder / "ada.yaml").write_text("id: ada\nname: Ada\nrole: student\npersona: Curious.\nvoice:\n  id: nova\n")
    result = runner.invoke(app, ["voices", "list", "--voice", "local", "--agents-dir", str(folder)])
    assert result.exit_code == 0  # ada is not in the class
    result = runner.invoke(app, ["voices", "say", "ada", "Hello.", "--voice", "local", "--agents-dir", str(folder),
                                 "--out", str(tmp_path / "a.wav")])
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        "maic: error: agent ada: unknown voice 'nova' for local; its voices: en_US-joe-medium"] or \
        "pip install 'maic-cli[voices]'" in result.output  # the extra missing is said first


@pytest.mark.parametrize(("argv", "expected"), [
    (["--voice", "openai/tts-1"], "no API key: set OPENAI_API_KEY"),
    (["--voice", "bogus"], "--voice bogus: not a voice engine"),
    (["--voice", "openai-compatible"], "needs --voice-api-base"),
    (["--voice", "openai-compatible", "--voice-api-base", "ftp://x"], "not an http(s) URL"),
])
def test_bad_voices_are_one_line_exit_2(argv: list[str], expected: str, tmp_path: Path) -> None:
    result = runner.invoke(app, ["voices", "say", "teacher", "Hello.", *argv, "--out", str(tmp_path / "x.wav")])
    assert result.exit_code == 2
    assert len(result.output.strip().splitlines()) == 1 and expected in result.output


def test_no_player_and_no_out_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(system_player, "find_player", lambda: None)
    with LoopbackSpeechServer() as server:
        result = runner.invoke(app, ["voices", "say", "teacher", "Hello.", "--voice", "openai-compatible",
                                     "--voice-api-base", server.base_url])
    assert result.exit_code == 2 and "no audio player on PATH" in result.output and "--out" in result.output
    assert server.requests == []  # nothing synthesised for nothing


def test_a_provider_error_is_one_line_and_redacted(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    key = "sk-cli-test-key-0123456789abcdef"
    monkeypatch.setenv("MAIC_VOICE_API_KEY", key)
    with LoopbackSpeechServer(status=500, error=f"boom for {key}") as server:
        result = runner.invoke(app, ["voices", "say", "teacher", "Hello.", "--voice", "openai-compatible",
                                     "--voice-api-base", server.base_url, "--out", str(tmp_path / "x.wav")])
    assert result.exit_code == 1
    assert len(result.output.strip().splitlines()) == 1 and "HTTP 500" in result.output and key not in result.output
    assert not (tmp_path / "x.wav").exists()


def test_nothing_to_say_is_one_line(tmp_path: Path) -> None:
    with LoopbackSpeechServer() as server:
        result = runner.invoke(app, ["voices", "say", "teacher", "** `` $$ 🎉", "--voice", "openai-compatible",
                                     "--voice-api-base", server.base_url, "--out", str(tmp_path / "x.wav")])
    assert result.exit_code == 2 and "nothing to say" in result.output


def test_agents_show_says_how_the_agent_sounds() -> None:
    result = runner.invoke(app, ["agents", "show", "teacher"])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())  # Rich wraps at the terminal's width
    assert "voice: en_US-joe-medium, speed 0.85, pitch -5.0 (local, derived from id and role;" in text


def test_the_voice_in_config_yaml_is_used(maic_home: Path) -> None:
    (maic_home / "config.yaml").write_text("voice: openai/gpt-4o-mini-tts\n")
    result = runner.invoke(app, ["voices", "list"])
    assert result.exit_code == 0 and "openai/gpt-4o-mini-tts voices:" in result.output
    assert "The voice is off" not in result.output
