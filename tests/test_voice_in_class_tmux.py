"""A real ``maic chat --voice`` in tmux: the lesson read aloud in step, each agent in its voice, a key stops it.

The speech is real (espeak-ng, or the offline Piper voice when it is installed); the audio player is a stand-in
(tests/speech_doubles.py) placed first on PATH under a real player's name: it logs each sentence it is handed (the
voice and text maic wrote into the WAV, its duration, its pid) and sleeps for the audio's length.  The screen is
read with ``tmux capture-pane`` while the log fills, so the order of what was heard and what was shown is checked
on the clock of one machine.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.helpers import decision, reply
from tests.speech_doubles import Played, alive, install_fake_player, read_player_log

ROOT = Path(__file__).resolve().parent.parent
SCALE = 0.6  # the stand-in player sleeps this much of each sentence's length
FIRST_SAY = ["Here is a puzzle to start.", "A tree weighs tonnes, yet the soil around it barely shrinks.",
             "Where does all that mass come from?"]

CHLOROPHYLL = ("Chlorophyll is the green pigment in the leaf. It catches the light, mostly red and blue, and "
               "passes the green on. Without it there is no sugar at all, and the plant slowly starves.")

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None or shutil.which("espeak-ng") is None,
                                reason="needs tmux and espeak-ng")


def engine_name() -> str:
    try:
        from maic_cli.speech import piper_engine

        return "local" if piper_engine.available() else "espeak"
    except ImportError:
        return "espeak"


class Tmux:
    def __init__(self, socket: str, session: str) -> None:
        self.socket, self.session = socket, session

    def run(self, *args: str) -> str:
        return subprocess.run(["tmux", "-L", self.socket, *args], check=True, capture_output=True,
                              text=True, timeout=20).stdout

    def screen(self) -> str:
        return self.run("capture-pane", "-p", "-t", self.session, "-S", "-200")

    def keys(self, *keys: str) -> None:
        self.run("send-keys", "-t", self.session, *keys)

    def alive(self) -> bool:
        return subprocess.run(["tmux", "-L", self.socket, "has-session", "-t", self.session],
                              capture_output=True, timeout=20).returncode == 0


def wait_for(check: Callable[[], object], timeout: float = 30.0, step: float = 0.05) -> object:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(step)
    raise AssertionError("timed out waiting")


def after_last(screen: str, text: str) -> str:
    """The screen after the last place ``text`` shows (empty if it does not)."""
    at = screen.rfind(text)
    return "" if at < 0 else screen[at:]


@pytest.fixture
def spoken_class(tmp_path: Path, maic_home: Path) -> Iterator[tuple[Tmux, Path, Path]]:
    bin_dir = tmp_path / "bin"
    log = install_fake_player(bin_dir, "pw-play")  # the first player maic looks for
    model = tmp_path / "script.json"
    model.write_text(json.dumps([
        decision("teacher"), reply("Leaves need light to make sugar. The light splits water."),
        decision("curious_student"), reply("So no light means no sugar? Then the plant starves."),
        decision("END"),
        decision("teacher"), {"reply": reply(CHLOROPHYLL), "chunk_size": 6, "chunk_delay": 0.5},  # slow: cut mid-way
        decision("END")]), encoding="utf-8")
    session = tmp_path / "class.json"
    env = {"PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}", "MAIC_HOME": str(maic_home),
           "PYTHONPATH": str(ROOT), "FAKE_PLAYER_LOG": str(log), "FAKE_PLAYER_SCALE": str(SCALE),
           "TERM": "xterm-256color", "HOME": os.environ.get("HOME", str(tmp_path)), "LANG": "C.UTF-8"}
    command = [sys.executable, "-m", "maic_cli", "chat", "--model", f"scripted:{model}", "--lesson",
               "photosynthesis", "--voice", engine_name(), "--session", str(session), "--no-memory"]
    line = "env -i " + " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items()) + " " + shlex.join(command) \
        + f" 2>{shlex.quote(str(tmp_path / 'stderr.txt'))}; sleep 30"
    tmux = Tmux(f"maic-voice-{os.getpid()}", "class")
    subprocess.run(["tmux", "-L", tmux.socket, "new-session", "-d", "-s", tmux.session, "-x", "160", "-y", "50",
                    line], check=True, timeout=20)
    try:
        yield tmux, log, session
    finally:
        subprocess.run(["tmux", "-L", tmux.socket, "kill-server"], capture_output=True, timeout=20)


def test_a_lesson_is_read_aloud_in_step_and_a_key_stops_it(spoken_class: tuple[Tmux, Path, Path]) -> None:
    tmux, log, session = spoken_class
    # 1. The first say step is heard sentence by sentence; the spotlight after it is shown only once it was.
    shown_at: float | None = None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        screen = tmux.screen()
        if "▶" in screen:
            shown_at = time.time()
            break
        time.sleep(0.03)
    assert shown_at is not None, tmux.screen()
    played = read_player_log(log)
    assert [p.text for p in played[:3]] == FIRST_SAY
    third = played[2]
    assert third.end is not None and third.end <= shown_at + 0.05, (third, shown_at)  # heard, then shown
    assert all(p.voice["agent"] == "teacher" for p in played[:3])
    assert [p.end for p in played[:3]] == sorted(p.end for p in played[:3] if p.end)  # one after another

    # 2. A key while the next sentence plays: the player is killed at once, the text and the class stay.
    fourth: Played = wait_for(lambda: next((p for p in read_player_log(log)
                                            if p.text.startswith("A plant needs")), None))  # type: ignore[assignment]
    time.sleep(0.2)
    pressed = time.time()
    tmux.keys("W")
    wait_for(lambda: not alive(fourth.pid), timeout=2.0, step=0.01)
    stopped = time.time() - pressed
    assert stopped < 0.5, stopped
    time.sleep(0.5)
    cut = next(p for p in read_player_log(log) if p.pid == fourth.pid)
    assert cut.end is None  # it never reached its end
    assert len(read_player_log(log)) == 4  # and nothing after it was played
    screen = tmux.screen()
    assert "A plant needs only three things" in screen and "you ›" in screen, screen

    # 3. The question goes on from the key typed; two agents answer, each in its own voice.
    tmux.keys("hy do leaves need light?", "Enter")
    wait_for(lambda: len(read_player_log(log)) >= 8 and all(p.end for p in read_player_log(log)[4:8]), timeout=60)
    answers = read_player_log(log)[4:8]
    assert [p.text for p in answers] == ["Leaves need light to make sugar.", "The light splits water.",
                                         "So no light means no sugar?", "Then the plant starves."]
    assert [p.voice["agent"] for p in answers] == ["teacher"] * 2 + ["curious_student"] * 2
    assert answers[0].params != answers[2].params  # two voices
    assert {p.params for p in answers[:2]} == {played[0].params}  # the teacher's, as in the lecture
    assert wait_for(lambda: after_last(tmux.screen(), "Then the plant starves.").count("you ›") == 1)

    # 4. Ctrl-C while the next answer streams and its first sentence is heard: text and sound stop together, the
    #    half-said answer is kept.
    tmux.keys("What is chlorophyll?", "Enter")
    ninth: Played = wait_for(lambda: next((p for p in read_player_log(log)[8:]), None))  # type: ignore[assignment]
    assert ninth.text == "Chlorophyll is the green pigment in the leaf."
    pressed = time.time()
    tmux.keys("C-c")
    wait_for(lambda: not alive(ninth.pid), timeout=2.0, step=0.01)
    assert time.time() - pressed < 0.5
    wait_for(lambda: after_last(tmux.screen(), "Chlorophyll is").count("you ›") == 1)
    time.sleep(1.0)
    assert [p.end for p in read_player_log(log)[8:]] == [None]  # cut short, and nothing after it was played
    screen = tmux.screen()
    assert "Chlorophyll is the green pigment in the leaf." in screen
    assert "slowly starves" not in screen  # the text stopped with the sound

    # 5. The class is whole: leave, and the session holds the interrupted lecture and the answers.
    tmux.keys("/quit", "Enter")
    wait_for(lambda: "Session saved" in tmux.screen(), timeout=20)
    saved = json.loads(session.read_text(encoding="utf-8"))
    messages = saved["classroom"]["messages"]
    texts = " ".join(str(m) for m in messages)
    assert "A plant needs only three things" in texts and "Then the plant starves." in texts
    assert "Chlorophyll is the green pigment" in texts and "slowly starves" not in texts
    assert "Why do leaves need light?" in texts  # the key that stopped the lecture began the question
    assert sum(bool(m.get("interrupted")) for m in messages) == 2  # the lecture and the answer
    assert saved["lesson"]["progress"]["state"] in ("paused", "lecture")
