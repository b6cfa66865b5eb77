"""``maic chat --voice`` from the command line: off imports nothing of speech; no player is one line and a silent
class; in a pipe the class is said aloud too, and the chat ends once it has been heard."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import decision, modules_imported_by, reply
from tests.speech_doubles import install_fake_player, read_player_log

ROOT = Path(__file__).resolve().parent.parent
needs_espeak = pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="needs espeak-ng")


def speech_modules(modules: set[str]) -> set[str]:
    return {m for m in modules if m.startswith("maic_cli.speech") or m == "maic_cli.chat.speaking"}


@pytest.mark.parametrize("flags", [[], ["--voice", "off"]], ids=["no flag", "--voice off"])
def test_a_chat_without_a_voice_imports_nothing_of_speech(tmp_path: Path, flags: list[str]) -> None:
    modules = modules_imported_by(["chat", "--model", "demo", "--plain", "--no-memory",
                                   "--session", str(tmp_path / "class.json"), *flags])
    assert "maic_cli.chat.run" in modules  # the chat ran
    assert speech_modules(modules) == set()


def chat(tmp_path: Path, path: str, stdin: str, *flags: str) -> subprocess.CompletedProcess[str]:
    model = tmp_path / "script.json"
    model.write_text(json.dumps([decision("teacher"), reply("Light is energy. The leaf stores it as sugar."),
                                 decision("assistant"), reply("Think of a battery!"), decision("END")]),
                     encoding="utf-8")
    env = {**os.environ, "PATH": path, "PYTHONPATH": str(ROOT)}
    env.pop("MAIC_AUDIO_PLAYER", None)
    return subprocess.run([sys.executable, "-m", "maic_cli", "chat", "--model", f"scripted:{model}", "--no-memory",
                           "--session", str(tmp_path / "class.json"), *flags], input=stdin, text=True,
                          capture_output=True, env=env, timeout=120)


@needs_espeak
def test_no_audio_player_is_one_line_and_a_silent_class(tmp_path: Path) -> None:
    bare = tmp_path / "bare"
    bare.mkdir()
    (bare / "espeak-ng").symlink_to(shutil.which("espeak-ng") or "")  # the engine, and no player at all
    done = chat(tmp_path, str(bare), "Why light?\n", "--voice", "espeak")
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("no audio player found") + done.stderr.count("no audio player found") == 1
    assert "Think of a battery!" in done.stdout  # the class goes on in text
    assert "Traceback" not in done.stderr


@needs_espeak
def test_in_a_pipe_the_class_is_heard_before_the_chat_ends(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    log = install_fake_player(bin_dir, "aplay")
    done = chat(tmp_path, f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "Why light?\n", "--voice", "espeak")
    assert done.returncode == 0, done.stderr
    played = read_player_log(log)
    assert [(p.voice["agent"], p.text) for p in played] == [
        ("teacher", "Light is energy."), ("teacher", "The leaf stores it as sugar."),
        ("assistant", "Think of a battery!")]
    assert all(p.end is not None for p in played)  # each heard to its end before maic left
    assert played[0].params != played[2].params
    assert not Path(played[0].file).parent.exists()  # the sentences' files and their folder are removed


def test_a_voice_that_names_no_engine_is_one_line_exit_2(tmp_path: Path) -> None:
    done = chat(tmp_path, os.environ["PATH"], "", "--voice", "shouting")
    assert done.returncode == 2
    assert "--voice shouting: not a voice engine" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "class.json").exists()  # refused before anything was written


@needs_espeak
def test_a_player_that_fails_is_one_line_and_the_class_goes_on_in_text(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    broken = bin_dir / "pw-play"
    broken.write_text("#!/bin/sh\necho 'no such sink' >&2\nexit 3\n", encoding="utf-8")
    broken.chmod(0o755)
    done = chat(tmp_path, f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "Why light?\n", "--voice", "espeak")
    assert done.returncode == 0, done.stderr
    lines = [line for line in (done.stdout + done.stderr).splitlines() if "voice:" in line]
    assert len(lines) == 1 and "pw-play: the player exited with 3: no such sink" in lines[0], lines
    assert "the class goes on in text" in lines[0] and "Traceback" not in done.stderr
    assert "Think of a battery!" in done.stdout
