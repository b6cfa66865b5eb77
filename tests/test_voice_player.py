"""Playing a sentence through a player on PATH (speech/system_player.py), with a stand-in player program."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from typer.testing import CliRunner

from maic_cli.cli.app import app
from maic_cli.speech.audio import read_wav
from maic_cli.speech.port import SpeechError
from maic_cli.speech.system_player import find_player, play_file
from maic_cli.testing.speech_server import LoopbackSpeechServer

runner = CliRunner()


def _player(folder: Path, name: str, body: str) -> Path:
    """A program named like a real player that copies what it is given (or fails)."""
    folder.mkdir(exist_ok=True)
    path = folder / name
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_the_first_player_on_path_plays_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    copy = tmp_path / "played.wav"
    _player(tmp_path / "bin", "aplay", f'/bin/cp "$2" "{copy}"')  # aplay -q FILE
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))  # only the stand-in: no real player is found first
    found = find_player()
    assert found is not None and Path(found[0]).name == "aplay" and found[1:] == ["-q"]
    with LoopbackSpeechServer() as server:
        result = runner.invoke(app, ["voices", "say", "teacher", "Hello, class.", "--voice", "openai-compatible",
                                     "--voice-api-base", server.base_url])
    assert result.exit_code == 0, result.output
    assert "(through aplay)" in result.output
    assert read_wav(copy.read_bytes()).seconds > 0.5


def test_a_failing_player_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _player(tmp_path / "bin", "paplay", 'echo "Connection refused" >&2; exit 1')
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    wav = tmp_path / "x.wav"
    wav.write_bytes(b"RIFF")
    with pytest.raises(SpeechError, match="paplay: Connection refused"):
        play_file(wav, 1.0)
