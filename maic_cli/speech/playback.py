"""Playing audio aloud: through a player the system has, or the ``sounddevice`` package.

:func:`find_player` picks the first that is there: ``pw-play`` (PipeWire), ``paplay`` (PulseAudio), ``aplay``
(ALSA), ``afplay`` (macOS), ``ffplay`` (FFmpeg), else ``sounddevice`` when it is installed; ``MAIC_AUDIO_PLAYER``
names one of them to use it first.  ``None``: nothing can play, and the caller says so in one line.

:meth:`Player.play` is awaited on the event loop and never blocks it: a command player writes the sentence as a
WAV file to a private temporary folder and awaits the player process; ``sounddevice`` writes from a worker
thread.  Cancelling the call stops the sound at once: the process is killed and reaped (no orphan), the stream
aborted.  The WAV file carries a comment chunk (``ICMT``) naming the voice it was said in, for whoever listens
in (a test's stand-in player logs it).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import struct
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from .port import Audio, SpeechError

# Each player with the arguments that make it play one file quietly and exit.
COMMANDS: dict[str, tuple[str, ...]] = {
    "pw-play": (),
    "paplay": (),
    "aplay": ("-q",),
    "afplay": (),
    "ffplay": ("-nodisp", "-autoexit", "-loglevel", "quiet"),
}
ENV_PLAYER = "MAIC_AUDIO_PLAYER"


def wav_bytes(audio: Audio, comment: str = "") -> bytes:
    """``audio`` as a WAV file (mono, 16-bit PCM), with ``comment`` in a LIST/INFO ``ICMT`` chunk if given."""
    fmt = struct.pack("<HHIIHH", 1, 1, audio.rate, audio.rate * 2, 2, 16)
    chunks = b"fmt " + struct.pack("<I", len(fmt)) + fmt
    if comment:
        text = comment.encode("utf-8", errors="replace")[:500] + b"\0"
        text += b"\0" * (len(text) % 2)
        info = b"INFO" + b"ICMT" + struct.pack("<I", len(text)) + text
        chunks += b"LIST" + struct.pack("<I", len(info)) + info
    pcm = audio.pcm[:len(audio.pcm) - len(audio.pcm) % 2]
    chunks += b"data" + struct.pack("<I", len(pcm)) + pcm
    return b"RIFF" + struct.pack("<I", 4 + len(chunks)) + b"WAVE" + chunks


class Player(Protocol):
    name: str

    async def play(self, audio: Audio, comment: str = "", on_start: Callable[[], None] | None = None) -> None:
        """Play ``audio`` to its end; cancelling stops it at once.  Raises :class:`SpeechError`.  ``on_start`` is
        called when the sound is handed to the device (the player process started, the stream opened)."""
        ...

    def close(self) -> None:
        """Remove what the player left behind (its temporary folder)."""
        ...


@dataclass
class CommandPlayer:
    """A player program, given one WAV file per sentence."""

    name: str
    argv: tuple[str, ...]  # the program (a full path) and its options; the file comes last
    _folder: Path | None = field(default=None, init=False)
    _count: int = field(default=0, init=False)

    def _file(self) -> Path:
        if self._folder is None:
            self._folder = Path(tempfile.mkdtemp(prefix="maic-speech-"))  # mode 0700
        self._count += 1
        return self._folder / f"{self._count:05d}.wav"

    async def play(self, audio: Audio, comment: str = "", on_start: Callable[[], None] | None = None) -> None:
        path = self._file()
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(wav_bytes(audio, comment))
        try:
            try:
                # In maic's process group: a closed terminal (SIGHUP) or Ctrl-C (SIGINT) stops the player too.
                process = await asyncio.create_subprocess_exec(
                    *self.argv, str(path), stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL,
                    stderr=asyncio.subprocess.PIPE)
            except OSError as exc:
                raise SpeechError(self.name, f"cannot start the player: {exc.strerror or exc}") from None
            if on_start is not None:
                on_start()
            try:
                _, stderr = await process.communicate()
            except asyncio.CancelledError:
                await _kill(process)
                raise
            if process.returncode and process.returncode > 0:  # < 0: stopped by a signal (Ctrl-C), not a fault
                last = (stderr or b"").decode("utf-8", errors="replace").strip().splitlines()[-1:] or [""]
                raise SpeechError(self.name, f"the player exited with {process.returncode}: {last[0]}",
                                  f"set {ENV_PLAYER} to another player, or --voice off")
        finally:
            with contextlib.suppress(OSError):
                path.unlink()

    def close(self) -> None:
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None


async def _kill(process: asyncio.subprocess.Process) -> None:
    """Stop the player now and reap it, even while our own task is being cancelled."""
    if process.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
    with contextlib.suppress(asyncio.CancelledError):
        await asyncio.shield(process.wait())


@dataclass
class SoundDevicePlayer:
    """The ``sounddevice`` package (PortAudio): the PCM written to an output stream from a worker thread."""

    module: Any
    name: str = "sounddevice"

    async def play(self, audio: Audio, comment: str = "", on_start: Callable[[], None] | None = None) -> None:
        stop = threading.Event()
        loop = asyncio.get_running_loop()

        def write() -> None:
            try:
                with self.module.RawOutputStream(samplerate=audio.rate, channels=1, dtype="int16") as stream:
                    if on_start is not None:
                        loop.call_soon_threadsafe(on_start)
                    block = audio.rate // 10 * 2  # a tenth of a second: a stop is heard within it
                    for start in range(0, len(audio.pcm), block):
                        if stop.is_set():
                            stream.abort()
                            return
                        stream.write(audio.pcm[start:start + block])
            except Exception as exc:  # noqa: BLE001 - PortAudio's errors are of its own kinds
                raise SpeechError(self.name, f"cannot play: {exc}") from None

        future = loop.run_in_executor(None, write)
        try:
            await asyncio.shield(future)
        except asyncio.CancelledError:
            stop.set()
            with contextlib.suppress(Exception):
                await future
            raise

    def close(self) -> None:
        pass


def find_player() -> Player | None:
    """The first player this system has (``MAIC_AUDIO_PLAYER`` first, if it names one); ``None`` if none."""
    wanted = os.environ.get(ENV_PLAYER, "").strip()
    names = ([wanted] if wanted in COMMANDS or wanted == "sounddevice" else []) + list(COMMANDS) + ["sounddevice"]
    for name in names:
        if name == "sounddevice":
            try:
                import sounddevice  # type: ignore[import-not-found, unused-ignore]
            except Exception:  # noqa: BLE001 - not installed, or PortAudio missing: OSError at import
                continue
            return SoundDevicePlayer(sounddevice)
        program = shutil.which(name)
        if program is not None:
            return CommandPlayer(name, (program, *COMMANDS[name]))
    return None


NO_PLAYER = ("no audio player found (pw-play, paplay, aplay, afplay or ffplay, or the sounddevice package); "
             "the class is silent")
