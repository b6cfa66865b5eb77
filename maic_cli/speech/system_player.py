"""Playing a WAV file through a player found on PATH: pw-play, paplay, aplay, afplay or ffplay.

For ``maic voices say`` (one sentence to try a voice).  The player runs as a subprocess with a time
limit; the file's path is the only argument that comes from maic (a file maic wrote), never text.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from .port import SpeechError

PLAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("pw-play", ()),
    ("paplay", ()),
    ("aplay", ("-q",)),
    ("afplay", ()),
    ("ffplay", ("-nodisp", "-autoexit", "-loglevel", "error")),
)
NAMES = ", ".join(name for name, _ in PLAYERS)


def find_player() -> list[str] | None:
    """The command (program and its options) of the first player on PATH, or ``None``."""
    for name, options in PLAYERS:
        found = shutil.which(name)
        if found:
            return [found, *options]
    return None


def play_file(path: Path, seconds: float) -> str:
    """Play ``path`` (a WAV of ``seconds``); the player's name.  :class:`SpeechError` when it fails."""
    command = find_player()
    if command is None:
        raise SpeechError("player", f"no audio player on PATH ({NAMES})")
    try:
        done = subprocess.run([*command, str(path)], capture_output=True, timeout=seconds + 10, check=False)
    except subprocess.TimeoutExpired:
        raise SpeechError(Path(command[0]).name, "the player did not finish in time") from None
    except OSError as exc:
        raise SpeechError(Path(command[0]).name, f"could not run ({exc.strerror or exc})") from None
    if done.returncode != 0:
        detail = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [f"exit {done.returncode}"]
        raise SpeechError(Path(command[0]).name, detail[0])
    return Path(command[0]).name
