"""A loopback OpenAI-compatible speech server for tests and benchmarks: ``POST /v1/audio/speech``.

It answers on ``127.0.0.1`` with real audio bytes: a tone as long as the input's words (a WAV by
default, or raw 24 kHz PCM, or whatever bytes a test sets in :attr:`LoopbackSpeechServer.body`), or an
HTTP error with an OpenAI-shaped JSON body.  Every request's JSON body and headers are recorded, so a
test checks what litellm (``openai/tts-1`` at an ``api_base``) or maic's own client really sent.
aiohttp's server on its own event loop in a daemon thread, like ``testing/openai_server.py``.
"""

from __future__ import annotations

import asyncio
import math
import socket
import struct
import threading
from typing import Any

from aiohttp import web

from ..speech.audio import wav_bytes
from ..speech.port import Audio

RATE = 24000
SECONDS_A_WORD = 0.3


def tone(seconds: float, frequency: float = 180.0, rate: int = RATE) -> Audio:
    """A sine tone with a few harmonics (voiced speech, as far as a pitch tracker can tell)."""
    count = int(seconds * rate)
    samples = (int(6000 * (math.sin(2 * math.pi * frequency * i / rate)
                           + 0.5 * math.sin(4 * math.pi * frequency * i / rate))) for i in range(count))
    return Audio(b"".join(struct.pack("<h", s) for s in samples), rate)


class LoopbackSpeechServer:
    """Start with :meth:`start` (or as a context manager); ``base_url`` ends in ``/v1``."""

    def __init__(self, *, status: int = 200, error: str = "", body: bytes | None = None,
                 answer: str = "wav") -> None:
        self.status = status
        self.error = error
        self.body = body
        self.answer = answer  # "wav" or "pcm" (when body is None)
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._address: tuple[str, int] | None = None

    @property
    def base_url(self) -> str:
        assert self._address is not None, "server not started"
        host, port = self._address
        return f"http://{host}:{port}/v1"

    def start(self) -> LoopbackSpeechServer:
        loop = asyncio.new_event_loop()
        app = web.Application()
        app.router.add_post("/v1/audio/speech", self._speech)
        runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=1.0)
        loop.run_until_complete(runner.setup())
        sock = socket.create_server(("127.0.0.1", 0))
        self._address = sock.getsockname()[:2]
        loop.run_until_complete(web.SockSite(runner, sock).start())

        def serve() -> None:
            asyncio.set_event_loop(loop)
            try:
                loop.run_forever()
            finally:
                loop.run_until_complete(runner.cleanup())
                loop.close()

        self._loop = loop
        self._thread = threading.Thread(target=serve, name="loopback-speech-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._loop is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=10)
            self._loop = self._thread = None

    def __enter__(self) -> LoopbackSpeechServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    async def _speech(self, request: web.Request) -> web.Response:
        try:
            body = await request.json()
        except ValueError:
            body = {}
        self.requests.append(body if isinstance(body, dict) else {})
        self.headers.append(dict(request.headers))
        if self.status != 200:
            return web.json_response({"error": {"message": self.error or f"loopback error {self.status}",
                                                "type": "invalid_request_error"}}, status=self.status)
        if self.body is not None:
            return web.Response(body=self.body, content_type="application/octet-stream")
        words = len(str(body.get("input", "")).split()) if isinstance(body, dict) else 1
        audio = tone(max(1, words) * SECONDS_A_WORD)
        if self.answer == "pcm":
            return web.Response(body=audio.pcm, content_type="audio/pcm")
        return web.Response(body=wav_bytes(audio), content_type="audio/wav")
