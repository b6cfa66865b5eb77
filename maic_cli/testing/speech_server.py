"""A loopback OpenAI-compatible speech server for tests and benchmarks: ``POST /v1/audio/speech``.

It answers on ``127.0.0.1`` with real audio bytes: a tone as long as the input's words (a WAV by
default, or raw 24 kHz PCM, or whatever bytes a test sets in :attr:`LoopbackSpeechServer.body`), or an
HTTP error with an OpenAI-shaped JSON body.  Every request's JSON body and headers are recorded, so a
test checks what litellm (``openai/tts-1`` at an ``api_base``) or maic's own client really sent.
aiohttp's server on its own event loop in a daemon thread, like ``testing/openai_server.py``.
"""

from __future__ import annotations

import math
import struct
from typing import Any

from aiohttp import web

from ..speech.audio import wav_bytes
from ..speech.port import Audio
from .loopback import LoopbackServer

RATE = 24000
SECONDS_A_WORD = 0.3


def tone(seconds: float, frequency: float = 180.0, rate: int = RATE) -> Audio:
    """A sine tone with a few harmonics (voiced speech, as far as a pitch tracker can tell)."""
    count = int(seconds * rate)
    samples = (int(6000 * (math.sin(2 * math.pi * frequency * i / rate)
                           + 0.5 * math.sin(4 * math.pi * frequency * i / rate))) for i in range(count))
    return Audio(b"".join(struct.pack("<h", s) for s in samples), rate)


class LoopbackSpeechServer(LoopbackServer):
    """Start with :meth:`start` (or as a context manager); ``base_url`` ends in ``/v1``."""

    name = "loopback-speech-server"

    def __init__(self, *, status: int = 200, error: str = "", body: bytes | None = None,
                 answer: str = "wav") -> None:
        super().__init__()
        self.status = status
        self.error = error
        self.body = body
        self.answer = answer  # "wav" or "pcm" (when body is None)
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []

    def routes(self, app: web.Application) -> None:
        app.router.add_post("/v1/audio/speech", self._speech)

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
