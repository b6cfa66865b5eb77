"""Test doubles for the class's voice: a tone-generator engine, a stand-in audio player on PATH.

``ToneEngine`` is NOT a voice: it makes a sine tone as long as the text would take to say (``seconds_per_char``),
its pitch from the voice, and records when each synthesis started and ended (for tests of ordering and overlap).

``install_fake_player`` writes a small program named like a real player (``pw-play``, ``aplay`` …) into a folder
for the front of PATH.  Asked to play a WAV file, it logs one JSON line when it starts (the file's duration,
the voice comment maic writes into it, its pid) and one when it ends, and sleeps for the audio's duration in
between (times ``FAKE_PLAYER_SCALE``).  Killed, it logs no end: the log shows the sentence cut short.
"""

from __future__ import annotations

import json
import math
import os
import stat
import struct
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from maic_cli.speech.port import Audio, SpeechError, Voice

RATE = 8000


@dataclass
class ToneEngine:
    """A tone generator standing in for a speech engine (tests only)."""

    seconds_per_char: float = 0.004
    synth_delay: float = 0.0  # extra seconds each synthesis takes (in the worker thread)
    fail_on: str | None = None  # a text that raises SpeechError
    name: str = "tone"
    calls: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def voices(self) -> list[str]:
        return ["low", "high"]

    def synthesize(self, text: str, voice: Voice) -> Audio:
        start = time.monotonic()
        if self.synth_delay:
            time.sleep(self.synth_delay)
        if self.fail_on is not None and self.fail_on in text:
            raise SpeechError(self.name, "the tone generator was told to fail here")
        frames = max(1, int(len(text) * self.seconds_per_char * RATE))
        freq = 220.0 * 2 ** (voice.pitch / 12)
        pcm = b"".join(struct.pack("<h", int(8000 * math.sin(2 * math.pi * freq * i / RATE))) for i in range(frames))
        with self.lock:
            self.calls.append({"text": text, "voice": voice, "start": start, "end": time.monotonic(),
                               "thread": threading.current_thread().name})
        return Audio(pcm, RATE)


FAKE_PLAYER = r'''#!{python}
import json, os, struct, sys, time
log = os.environ.get("FAKE_PLAYER_LOG", {log!r})
scale = float(os.environ.get("FAKE_PLAYER_SCALE", "1"))
path = sys.argv[-1]
data = sys.stdin.buffer.read() if path == "-" else open(path, "rb").read()
rate, size, comment, at = 0, 0, "", 12
while at + 8 <= len(data):
    kind, length = data[at:at + 4], struct.unpack("<I", data[at + 4:at + 8])[0]
    body = data[at + 8:at + 8 + length]
    if kind == b"fmt ":
        rate = struct.unpack("<I", body[4:8])[0]
    elif kind == b"LIST" and body[:4] == b"INFO" and body[4:8] == b"ICMT":
        comment = body[12:].split(b"\0")[0].decode()
    elif kind == b"data":
        size = length
    at += 8 + length + length % 2
seconds = size / 2 / rate if rate else 0.0
def write(entry):
    with open(log, "a") as handle:
        handle.write(json.dumps(entry) + "\n")
write({{"event": "start", "t": time.time(), "pid": os.getpid(), "player": os.path.basename(sys.argv[0]),
       "args": sys.argv[1:-1], "file": path, "seconds": seconds, "comment": comment}})
time.sleep(seconds * scale)
write({{"event": "end", "t": time.time(), "pid": os.getpid()}})
'''


def install_fake_player(folder: Path, name: str = "pw-play", log: Path | None = None) -> Path:
    """Write the stand-in player as ``folder/name``; returns its log's path (``FAKE_PLAYER_LOG`` overrides)."""
    folder.mkdir(parents=True, exist_ok=True)
    log = log or folder / "played.jsonl"
    program = folder / name
    program.write_text(FAKE_PLAYER.format(python=sys.executable, log=str(log)), encoding="utf-8")
    program.chmod(program.stat().st_mode | stat.S_IXUSR)
    return log


@dataclass
class Played:
    """One sentence the stand-in player was asked to play."""

    pid: int
    start: float
    seconds: float
    comment: str
    end: float | None  # None: killed before its end
    file: str = ""  # the WAV file it was given

    @property
    def voice(self) -> dict[str, str]:
        """What maic's comment says: agent, engine, voice, speed, pitch (and the sentence, ``text``)."""
        head, _, text = self.comment.partition(" text=")
        fields = dict(part.split("=", 1) for part in head.split() if "=" in part)
        return fields | {"text": text}

    @property
    def text(self) -> str:
        return self.voice["text"]

    @property
    def params(self) -> tuple[str, str, str]:
        """The voice it was said in (id, speed, pitch)."""
        return self.voice["voice"], self.voice["speed"], self.voice["pitch"]


def read_player_log(log: Path) -> list[Played]:
    if not log.exists():
        return []
    entries = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines() if line.strip()]
    ends = {e["pid"]: e["t"] for e in entries if e["event"] == "end"}
    return [Played(pid=e["pid"], start=e["t"], seconds=e["seconds"], comment=e["comment"], end=ends.get(e["pid"]),
                   file=e["file"])
            for e in entries if e["event"] == "start"]


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # a zombie is dead for our purposes; /proc tells where it exists
    status = Path(f"/proc/{pid}/status")
    if status.exists():
        return "zombie" not in status.read_text().lower()
    return True
