"""``--voice openai-compatible --voice-api-base URL``: any server with OpenAI's ``POST /v1/audio/speech``.

Kokoro-FastAPI, Lemonade, LocalAI, a litellm proxy and OpenAI itself answer this request: JSON
``{model, input, voice, response_format, speed}`` in, audio bytes out.  maic asks for WAV (decoded with
the standard library) and also reads raw PCM or mp3 (speech/audio.py).  The request is made with the
standard library (the call is blocking; the caller runs it off the event loop), within one deadline for
the whole answer, at most :data:`~maic_cli.speech.audio.MAX_AUDIO_BYTES` read as it streams, and no
redirects followed (a key is never carried to another host): speech/bounded_http.py.  The key, if the
server wants one, is ``MAIC_VOICE_API_KEY`` from the environment: never from a file; a ``user:password@``
in the URL is sent as basic auth, never shown.
"""

from __future__ import annotations

import json
import os
from typing import Any

from ..untrusted import secrets_in_use
from .audio import MAX_AUDIO_BYTES, decode
from .bounded_http import basic_auth, post, sent_secrets
from .port import Audio, SpeechError, Voice

OPENAI_VOICES = ["alloy", "ash", "ballad", "coral", "echo", "fable", "onyx", "nova", "sage", "shimmer", "verse"]
OPENAI_PCM_RATE = 24000  # OpenAI's response_format "pcm": 24 kHz 16-bit mono
KEY_VARIABLE = "MAIC_VOICE_API_KEY"


def post_speech(url: str, body: dict[str, Any], *, engine: str, key: str | None,
                auth: tuple[str, str] | None = None, seconds: float | None = None) -> bytes:
    """POST ``body`` as JSON to ``url``; the answer's bytes (bounded in time and size, speech/bounded_http.py),
    or :class:`SpeechError` (one line, every secret sent redacted whatever its length)."""
    headers = {"Content-Type": "application/json", "Accept": "audio/wav, audio/*", "Accept-Encoding": "identity"}
    if key and not _sendable(key):
        raise SpeechError(engine, f"{KEY_VARIABLE} holds a line break, a control character or a letter outside "
                          "Latin-1, which cannot be sent in an HTTP header (set it again, on one line)")
    if key:
        headers["Authorization"] = f"Bearer {key}"
    elif auth is not None:
        headers["Authorization"] = basic_auth(auth)
    secrets = sent_secrets(key, headers.get("Authorization"), *(auth or ()))
    with secrets_in_use(secrets):
        answer = post(url, json.dumps(body).encode("utf-8"), headers, engine=engine, max_bytes=MAX_AUDIO_BYTES,
                      seconds=seconds)
        if not 200 <= answer.status < 300:
            raise SpeechError(engine, f"HTTP {answer.status}: {_error_text(answer.data)}")
    return answer.data


def _sendable(value: str) -> bool:
    return all(0x20 <= ord(char) <= 0xff and ord(char) != 0x7f for char in value)


def _error_text(data: bytes) -> str:
    raw = data.decode("utf-8", "replace")
    try:
        found = json.loads(raw)
        message = found.get("error", found) if isinstance(found, dict) else found
        if isinstance(message, dict):
            message = message.get("message") or message.get("detail") or message
        return str(message)[:300]
    except ValueError:
        return raw[:300] or "no message"


class OpenAICompatibleEngine:
    """A ``/v1/audio/speech`` server at ``api_base`` serving ``model``."""

    def __init__(self, api_base: str, model: str, *, voices: list[str] | None = None,
                 auth: tuple[str, str] | None = None) -> None:
        self.api_base = api_base.rstrip("/")
        self.auth = auth  # user and password taken out of --voice-api-base's URL
        self.model = model
        self.name = f"openai-compatible/{model}"
        self._voices = voices or list(OPENAI_VOICES)
        self.accepts_any_voice = True  # a server's own voices (Kokoro's af_bella …) are its business

    def voices(self) -> list[str]:
        return list(self._voices)

    def synthesize(self, text: str, voice: Voice) -> Audio:
        body = {"model": self.model, "input": text, "voice": voice.id, "response_format": "wav",
                "speed": round(min(4.0, max(0.25, voice.speed)), 3)}
        data = post_speech(f"{self.api_base}/audio/speech", body, engine=self.name,
                           key=os.environ.get(KEY_VARIABLE) or None, auth=self.auth)
        return decode(data, self.name, pcm_rate=OPENAI_PCM_RATE)
