"""``--voice openai-compatible --voice-api-base URL``: any server with OpenAI's ``POST /v1/audio/speech``.

Kokoro-FastAPI, Lemonade, LocalAI, a litellm proxy and OpenAI itself answer this request: JSON
``{model, input, voice, response_format, speed}`` in, audio bytes out.  maic asks for WAV (decoded with
the standard library) and also reads raw PCM or mp3 (speech/audio.py).  The request is made with the
standard library (the call is blocking; the caller runs it off the event loop), with a time limit, at
most :data:`~maic_cli.speech.audio.MAX_AUDIO_BYTES` read, and no redirects followed (a key is never
carried to another host).  The key, if the server wants one, is ``MAIC_VOICE_API_KEY`` from the
environment: never from a file.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from typing import Any

from .audio import MAX_AUDIO_BYTES, decode
from .port import Audio, SpeechError, Voice

OPENAI_VOICES = ["alloy", "ash", "ballad", "coral", "echo", "fable", "onyx", "nova", "sage", "shimmer", "verse"]
OPENAI_PCM_RATE = 24000  # OpenAI's response_format "pcm": 24 kHz 16-bit mono
TIMEOUT_SECONDS = 60.0
KEY_VARIABLE = "MAIC_VOICE_API_KEY"


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


_OPENER = urllib.request.build_opener(_NoRedirect)


def post_speech(url: str, body: dict[str, Any], *, engine: str, key: str | None,
                timeout: float = TIMEOUT_SECONDS) -> bytes:
    """POST ``body`` as JSON to ``url``; the answer's bytes (bounded), or :class:`SpeechError` (one line)."""
    headers = {"Content-Type": "application/json", "Accept": "audio/wav, audio/*"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    request = urllib.request.Request(url, data=json.dumps(body).encode("utf-8"), headers=headers, method="POST")
    try:
        with _OPENER.open(request, timeout=timeout) as response:
            data: bytes = response.read(MAX_AUDIO_BYTES + 1)
    except urllib.error.HTTPError as exc:
        raise SpeechError(engine, f"HTTP {exc.code}: {_error_text(exc)}") from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise SpeechError(engine, f"cannot reach {url.split('/audio/')[0]}: {reason}") from None
    if len(data) > MAX_AUDIO_BYTES:
        raise SpeechError(engine, f"the audio is larger than {MAX_AUDIO_BYTES // 2**20} MiB")
    return data


def _error_text(exc: urllib.error.HTTPError) -> str:
    try:
        raw = exc.read(4096).decode("utf-8", "replace")
    except OSError:
        return str(exc.reason)
    try:
        found = json.loads(raw)
        message = found.get("error", found) if isinstance(found, dict) else found
        if isinstance(message, dict):
            message = message.get("message") or message.get("detail") or message
        return str(message)[:300]
    except ValueError:
        return raw[:300] or str(exc.reason)


class OpenAICompatibleEngine:
    """A ``/v1/audio/speech`` server at ``api_base`` serving ``model``."""

    def __init__(self, api_base: str, model: str, *, voices: list[str] | None = None) -> None:
        self.api_base = api_base.rstrip("/")
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
                           key=os.environ.get(KEY_VARIABLE) or None)
        return decode(data, self.name, pcm_rate=OPENAI_PCM_RATE)
