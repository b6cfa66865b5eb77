"""Synthesised sentences kept on disk, so a replay or a lecture said again costs nothing.

One file a sentence in a folder the caller names (``$MAIC_HOME/cache/speech``, ``store/paths.py:
speech_cache_dir``): the speech room touches files only here.  The key is a SHA-256 of the engine, the
voice (id, speed, pitch) and the text, so a change of any of them is a new entry.  A file is a small
header (magic, sample rate, PCM length, CRC-32 of the PCM) and the PCM:

* written atomically (a temp file in the folder, renamed), created 0600 in a 0700 folder;
* read with ``O_NOFOLLOW`` and ``O_NONBLOCK``, only if it is a regular file (a FIFO or a device planted
  under a key is dropped, never waited on), at most its header's length; an entry whose size, magic, length or checksum
  is wrong (a crash, a full disk, a hand edit) is deleted and synthesised again, never played;
* evicted least recently used first (a hit touches the file's time) once the folder is over its byte cap.

A cache that cannot be written never stops the voice: the sentence is still said, and
:attr:`SpeechCache.problem` keeps the first error for the caller to show once.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
import struct
import tempfile
import threading
import zlib
from pathlib import Path

from .audio import MAX_AUDIO_BYTES
from .port import Audio, SpeechEngine, Voice

MAGIC = b"MAICPCM1"
_HEADER = struct.Struct("<8sIQI")  # magic, rate, PCM bytes, CRC-32
DEFAULT_MAX_BYTES = 256 * 1024 * 1024
SUFFIX = ".pcm"
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)


def cache_key(engine: str, voice: Voice, text: str) -> str:
    """The entry's name: the same engine, voice and text always give the same key."""
    identity = json.dumps([engine, voice.id, round(voice.speed, 4), round(voice.pitch, 4), text],
                          ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(identity.encode("utf-8")).hexdigest()


class SpeechCache:
    """A folder of synthesised sentences, at most ``max_bytes`` (least recently used evicted first)."""

    def __init__(self, folder: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.folder = folder
        self.max_bytes = max_bytes
        self.problem: str | None = None
        self.hits = 0
        self.misses = 0
        self._lock = threading.Lock()

    def _path(self, key: str) -> Path:
        return self.folder / f"{key}{SUFFIX}"

    def get(self, key: str) -> Audio | None:
        path = self._path(key)
        try:
            # non-blocking: a FIFO planted under the key opens at once (and is then refused), never waits
            fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _NONBLOCK)
        except OSError:
            self._drop_special(path)
            self.misses += 1
            return None
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                os.close(fd)
                raise ValueError("not a regular file")
            with os.fdopen(fd, "rb") as handle:
                header = handle.read(_HEADER.size)
                if len(header) != _HEADER.size:
                    raise ValueError("truncated header")
                magic, rate, length, crc = _HEADER.unpack(header)
                if magic != MAGIC or length > MAX_AUDIO_BYTES or length % 2 or not 4000 <= rate <= 192000:
                    raise ValueError("not a cache entry")
                pcm = handle.read(length + 1)
            if len(pcm) != length or zlib.crc32(pcm) != crc:
                raise ValueError("length or checksum does not match")
        except (OSError, ValueError, struct.error):
            self._drop(path)
            self.misses += 1
            return None
        with contextlib.suppress(OSError):
            os.utime(path)  # recently used: evicted last
        self.hits += 1
        return Audio(pcm, rate)

    def put(self, key: str, audio: Audio) -> None:
        data = _HEADER.pack(MAGIC, audio.rate, len(audio.pcm), zlib.crc32(audio.pcm)) + audio.pcm
        if len(data) > self.max_bytes:
            return
        try:
            self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".entry.", suffix=".tmp", dir=self.folder)
            try:
                with os.fdopen(fd, "wb") as handle:
                    handle.write(data)
                os.replace(tmp, self._path(key))
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
            self.evict()
        except OSError as exc:
            if self.problem is None:
                self.problem = f"the speech cache {self.folder} cannot be written ({exc.strerror or exc})"

    def entries(self) -> list[tuple[float, int, Path]]:
        """(last use, bytes, path) of every entry, oldest first."""
        found: list[tuple[float, int, Path]] = []
        try:
            names = os.listdir(self.folder)
        except OSError:
            return found
        for name in names:
            if not name.endswith(SUFFIX):
                continue
            path = self.folder / name
            try:
                info = os.lstat(path)
            except OSError:
                continue
            found.append((info.st_mtime, info.st_size, path))
        found.sort()
        return found

    def size(self) -> int:
        return sum(size for _, size, _ in self.entries())

    def evict(self) -> int:
        """Delete the least recently used entries until the folder is within its cap; how many went."""
        with self._lock:
            entries = self.entries()
            total = sum(size for _, size, _ in entries)
            removed = 0
            for _, size, path in entries:
                if total <= self.max_bytes:
                    break
                self._drop(path)
                total -= size
                removed += 1
            return removed

    @classmethod
    def _drop_special(cls, path: Path) -> None:
        """What cannot be opened as an entry and is not a regular file (a FIFO, a socket) goes."""
        try:
            mode = os.lstat(path).st_mode
        except OSError:
            return
        if not stat.S_ISREG(mode):
            cls._drop(path)

    @staticmethod
    def _drop(path: Path) -> None:
        with contextlib.suppress(OSError):
            path.unlink()


class CachedEngine:
    """An engine whose sentences are looked up in a :class:`SpeechCache` first (same port)."""

    def __init__(self, engine: SpeechEngine, cache: SpeechCache) -> None:
        self.engine = engine
        self.cache = cache
        self.name = engine.name
        self.accepts_any_voice = bool(getattr(engine, "accepts_any_voice", False))
        self.shifts_pitch = bool(getattr(engine, "shifts_pitch", False))

    def voices(self) -> list[str]:
        return self.engine.voices()

    def warm(self) -> None:
        """Load the engine's model now, where it has one (the offline voice)."""
        warm = getattr(self.engine, "warm", None)
        if callable(warm):
            warm()

    def synthesize(self, text: str, voice: Voice) -> Audio:
        key = cache_key(self.engine.name, voice, text)
        found = self.cache.get(key)
        if found is not None:
            return found
        audio = self.engine.synthesize(text, voice)
        self.cache.put(key, audio)
        return audio
