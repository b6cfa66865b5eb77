"""A loopback OpenAI-compatible speech server for tests and benchmarks: ``POST /v1/audio/speech``.

It answers on ``127.0.0.1`` with real audio bytes: a tone as long as the input's words (a WAV by
default, or raw 24 kHz PCM, or whatever bytes a test sets in :attr:`LoopbackSpeechServer.body`), or an
HTTP error with an OpenAI-shaped JSON body.  Every request's JSON body and headers are recorded, so a
test checks what litellm (``openai/tts-1`` at an ``api_base``) or maic's own client really sent.
aiohttp's server on its own event loop in a daemon thread, like ``testing/openai_server.py``.

A server that misbehaves, for the tests of the speech room's bounds (:attr:`LoopbackSpeechServer.behaviour`):
``echo-auth`` answers 401 quoting the ``Authorization`` header it got; ``drip`` sends a WAV one byte every
:attr:`~LoopbackSpeechServer.drip_seconds`; ``silent`` never answers; ``flood`` streams
:attr:`~LoopbackSpeechServer.flood_bytes` (a WAV header, then zeros, never held in memory); ``redirect`` answers
307 to :attr:`~LoopbackSpeechServer.redirect_to`; ``html`` answers 200 ``text/html``; ``gzip`` answers a
few hundred KB that unzip to :attr:`~LoopbackSpeechServer.flood_bytes`.
"""

from __future__ import annotations

import asyncio
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


def _zipped_zeros(size: int) -> bytes:
    """gzip of a WAV header and ``size`` zero bytes, made a MB at a time (a few hundred KB of answer)."""
    import zlib

    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    parts = [packer.compress(wav_bytes(tone(0.01))[:44])]
    block = bytes(2**20)
    for _ in range(size // len(block)):
        parts.append(packer.compress(block))
    parts.append(packer.flush())
    return b"".join(parts)


class LoopbackSpeechServer(LoopbackServer):
    """Start with :meth:`start` (or as a context manager); ``base_url`` ends in ``/v1``."""

    name = "loopback-speech-server"

    def __init__(self, *, status: int = 200, error: str = "", body: bytes | None = None,
                 answer: str = "wav", behaviour: str = "") -> None:
        super().__init__()
        self.behaviour = behaviour  # "" (a good server), echo-auth, drip, silent, flood, redirect, html
        self.drip_seconds = 2.0
        self.flood_bytes = 400 * 2**20
        self.redirect_to = ""
        self.sent_bytes = 0  # what a drip or a flood managed to send
        self.bodies: list[bytes] = []  # answered in turn, one a request (a provider of many rates), when given
        self.status = status
        self.error = error
        self.body = body
        self.answer = answer  # "wav" or "pcm" (when body is None)
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []

    def routes(self, app: web.Application) -> None:
        app.router.add_post("/v1/audio/speech", self._speech)
        # Azure's /openai/deployments/NAME/audio/speech, ElevenLabs' /v1/text-to-speech/VOICE: the same answer
        app.router.add_post("/{path:.+}", self._speech)

    async def _speech(self, request: web.Request) -> web.StreamResponse:
        try:
            body = await request.json()
        except ValueError:
            body = {}
        self.requests.append(body if isinstance(body, dict) else {})
        self.headers.append(dict(request.headers))
        if self.behaviour:
            return await self._misbehave(request)
        if self.status != 200:
            return web.json_response({"error": {"message": self.error or f"loopback error {self.status}",
                                                "type": "invalid_request_error"}}, status=self.status)
        if self.bodies:
            return web.Response(body=self.bodies[(len(self.requests) - 1) % len(self.bodies)],
                                content_type="audio/wav")
        if self.body is not None:
            return web.Response(body=self.body, content_type="application/octet-stream")
        words = len(str(body.get("input", "")).split()) if isinstance(body, dict) else 1
        audio = tone(max(1, words) * SECONDS_A_WORD)
        if self.answer == "pcm":
            return web.Response(body=audio.pcm, content_type="audio/pcm")
        return web.Response(body=wav_bytes(audio), content_type="audio/wav")

    async def _misbehave(self, request: web.Request) -> web.StreamResponse:
        if self.behaviour == "echo-auth":
            sent = " ".join(request.headers.get(name, "") for name in ("Authorization", "api-key", "xi-api-key"))
            return web.json_response({"error": {"message": f"bad key: {sent.strip()}",
                                                "type": "invalid_request_error"}}, status=401)
        if self.behaviour == "redirect":
            return web.Response(status=307, headers={"Location": self.redirect_to})
        if self.behaviour == "gzip":  # a WAV of zeros that unzips to flood_bytes
            return web.Response(body=_zipped_zeros(self.flood_bytes), headers={"Content-Encoding": "gzip",
                                                                               "Content-Type": "audio/wav"})
        if self.behaviour == "html":
            return web.Response(body=b"<html><body>" + b"<p>Sign in</p>" * 2000 + b"</body></html>",
                                content_type="text/html")
        if self.behaviour == "silent":
            await asyncio.sleep(3600)
            return web.Response(status=204)
        try:
            return await self._stream(request)
        except (ConnectionError, asyncio.CancelledError):  # the client stopped reading: what it should do
            return web.Response(status=499)

    async def _stream(self, request: web.Request) -> web.StreamResponse:
        stream = web.StreamResponse(headers={"Content-Type": "audio/wav"})
        data = wav_bytes(tone(1.0))
        if self.behaviour == "flood":
            stream.content_length = self.flood_bytes
            await stream.prepare(request)
            chunk = data[:44] + bytes(2**20 - 44)
            while self.sent_bytes < self.flood_bytes:
                piece = chunk[: self.flood_bytes - self.sent_bytes]
                await stream.write(piece)
                self.sent_bytes += len(piece)
                chunk = bytes(2**20)
            return stream
        # drip: one byte at a time, forever slower than any sentence
        stream.content_length = len(data)
        await stream.prepare(request)
        for index in range(len(data)):
            await stream.write(data[index:index + 1])
            self.sent_bytes += 1
            await asyncio.sleep(self.drip_seconds)
        return stream
