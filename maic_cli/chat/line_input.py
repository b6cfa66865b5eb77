"""Lines from stdin for plain ``maic chat``: read off the event loop, decoded leniently.

A daemon thread does each blocking read with ``os.read`` on the file descriptor, so no
lock of ``sys.stdin`` is held while it waits: Ctrl-C at the prompt acts at once and the
program can exit without waiting for Enter (``asyncio.to_thread`` would make it wait).
Bytes that are not valid in the stream's encoding become U+FFFD instead of ending the
chat, and the lines after them are read as usual.  A line is kept up to one character past
:data:`MAX_LEARNER_CHARS` (the rest up to its newline is read and dropped), so a learner's
line costs bounded memory and the chat can refuse it in one line.
"""

from __future__ import annotations

import asyncio
import codecs
import io
import os
import threading
from typing import IO, Any

CHUNK = 65536
# The most characters a learner's line may have (typed, pasted or piped): a question or a short paragraph of
# code fits; past it the chat says so in one line and sends nothing (a 1 MB paste was 500k prompt tokens).
MAX_LEARNER_CHARS = 4000


def too_long(line: str) -> str | None:
    """Why a typed line is refused unsent (``None``: it is within :data:`MAX_LEARNER_CHARS`)."""
    if len(line.rstrip("\r\n")) <= MAX_LEARNER_CHARS:
        return None
    return f"a line is at most {MAX_LEARNER_CHARS:,} characters: nothing was sent (say it in shorter parts)"


class LineReader:
    """``readline`` over a text stream's bytes (its file descriptor where it has one).

    ``None`` (a closed stdin) is an empty input; a stream with neither a descriptor nor
    bytes underneath (``StringIO``) is read as text.
    """

    def __init__(self, stream: IO[str] | None) -> None:
        self._stream = stream
        self._fd = _fileno(stream)
        self._binary: Any = getattr(stream, "buffer", None)
        encoding = getattr(stream, "encoding", None) or "utf-8"
        self._decoder = codecs.getincrementaldecoder(encoding)(errors="replace")
        self._eof = stream is None
        self._text = ""
        self._pos = 0

    def _chunk(self) -> str:
        if self._fd is None and self._binary is None:
            text = self._stream.readline() if self._stream is not None else ""
            self._eof = not text
            return text
        data = os.read(self._fd, CHUNK) if self._fd is not None else self._binary.read1(CHUNK)
        self._eof = not data
        return self._decoder.decode(data, final=self._eof)

    def readline(self) -> str:
        """The next line with its newline, the last one without, or ``""`` at the end of input; a line longer
        than :data:`MAX_LEARNER_CHARS` comes back cut one character past it (and without its newline)."""
        parts: list[str] = []
        kept = 0
        while True:
            end = self._text.find("\n", self._pos)
            if end >= 0:
                if kept <= MAX_LEARNER_CHARS:
                    parts.append(self._text[self._pos:end + 1])
                self._pos = end + 1
                line = "".join(parts)
                return line if len(line) <= MAX_LEARNER_CHARS + 1 else line[:MAX_LEARNER_CHARS + 1]
            if kept <= MAX_LEARNER_CHARS:
                piece = self._text[self._pos:self._pos + MAX_LEARNER_CHARS + 1 - kept]
                parts.append(piece)
                kept += len(piece)
            self._text, self._pos = "", 0
            if self._eof:
                return "".join(parts)
            self._text = self._chunk()

    async def next_line(self) -> str | None:
        """The next line, or ``None`` at the end of input, read in a daemon thread."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[str] = loop.create_future()

        def deliver(line: str | None, error: BaseException | None) -> None:
            if future.done():  # cancelled: nobody waits for this line any more
                return
            if error is not None:
                future.set_exception(error)
            else:
                future.set_result(line or "")

        def read() -> None:
            line, error = None, None
            try:
                line = self.readline()
            except Exception as exc:  # noqa: BLE001 - handed to the waiting coroutine
                error = exc
            try:
                loop.call_soon_threadsafe(deliver, line, error)
            except RuntimeError:  # the loop has closed (Ctrl-C): the program is leaving
                pass

        threading.Thread(target=read, name="maic-stdin", daemon=True).start()
        return await future or None


def _fileno(stream: IO[str] | None) -> int | None:
    try:
        return stream.fileno() if stream is not None else None
    except (OSError, ValueError, io.UnsupportedOperation):
        return None
