"""``FrameWriter``: server-sent frames written to a prepared stream, those of one event-loop step in one send.

A turn yields its events in bursts (a model's chunk becomes a few ``text_delta``\\s and an ``action`` in the
same step); a send per frame costs a system call each (about a third of the server's CPU per turn).  The
first frame goes at once (with the response's headers, so the first event is never delayed); later ones
are gathered until the turn next waits (for its model) and sent together, in order.  Any route that writes
an event stream can use it; :meth:`close` sends what is left and raises a failed send's error.
"""

from __future__ import annotations

import asyncio

from aiohttp import web


class FrameWriter:
    def __init__(self, response: web.StreamResponse) -> None:
        self._response = response
        self._pending: list[bytes] = []
        self._flush: asyncio.Task[None] | None = None
        self._error: BaseException | None = None
        self._sent_first = False

    async def write(self, frame: bytes) -> None:
        if self._error is not None:
            raise self._error
        if not self._sent_first:
            self._sent_first = True
            await self._response.write(frame)
            return
        self._pending.append(frame)
        if self._flush is None:
            self._flush = asyncio.get_running_loop().create_task(self._send())

    async def _send(self) -> None:
        await asyncio.sleep(0)  # the rest of this step's frames join
        data = b"".join(self._pending)
        self._pending.clear()
        self._flush = None
        try:
            await self._response.write(data)  # handed to the transport before any wait: order is kept
        except (ConnectionError, RuntimeError) as exc:
            self._error = exc

    async def close(self) -> None:
        """Send what is pending (a failed send's error is raised here)."""
        flush = self._flush
        if flush is not None:
            await flush
        if self._error is not None:
            raise self._error
        if self._pending:
            data = b"".join(self._pending)
            self._pending.clear()
            await self._response.write(data)

    def cancel(self) -> None:
        """Drop what is pending (the turn ended by an error or a cancellation)."""
        if self._flush is not None:
            self._flush.cancel()
            self._flush = None
        self._pending.clear()
