"""A provider's voice through litellm's ``speech()``: ``openai/tts-1``, ``openai/gpt-4o-mini-tts``,
``azure/DEPLOYMENT``, ``elevenlabs/MODEL``, ``gemini/…-tts``, ``vertex_ai/…``.

This is the second module that imports litellm (tests/test_architecture.py allows exactly
``llm/litellm_client.py`` and this one): the speech room sits beside ``llm`` and may not import it, and
one blocking call, imported inside the engine's first synthesis, is all it needs (``maic --help`` and
a silent class never load litellm).

maic asks every provider for WAV (``response_format="wav"``: OpenAI and Azure answer WAV, litellm maps
it to ElevenLabs' ``wav_24000`` and to Gemini's PCM wrapped in WAV) and decodes it with the standard
library; raw PCM (24 kHz) and mp3 are read too (speech/audio.py).  The key is the provider's usual
environment variable (:data:`~maic_cli.speech.spec.PROVIDER_KEYS`), checked before a class starts
(:func:`missing_key`); litellm reads it itself, maic never passes a key from a file.  Every error is
one :class:`SpeechError` line, redacted (every key sent, whatever its length).

Each sentence has one deadline, :data:`DEADLINE_SECONDS`, for everything (litellm's retries are off), and
its answer is capped as it streams where litellm takes maic's HTTP client (speech/litellm_bounds.py).
"""

from __future__ import annotations

import os
import threading
from typing import Any

from ..untrusted import secrets_in_use
from .audio import MAX_AUDIO_BYTES, decode
from .bounded_http import sent_secrets
from .openai_speech import OPENAI_PCM_RATE, OPENAI_VOICES
from .port import Audio, SpeechError, Voice
from .spec import VoiceSpec

DEADLINE_SECONDS = 60.0
# Each provider's voices that maic casts from (a voice id outside these is still accepted for providers whose
# list is open: an ElevenLabs library voice, a Google Cloud voice name).
PROVIDER_VOICES = {
    "openai": OPENAI_VOICES,
    "azure": OPENAI_VOICES,
    # litellm maps these OpenAI names to ElevenLabs premade voices (Rachel, Domi, Aria, Drew, Roger, Dave …)
    "elevenlabs": ["alloy", "amber", "ash", "august", "blue", "coral", "lily", "onyx", "sage", "verse"],
    "gemini": ["Kore", "Charon", "Puck", "Fenrir", "Aoede", "Leda", "Orus", "Zephyr"],
    "vertex_ai": ["Kore", "Charon", "Puck", "Fenrir", "Aoede", "Leda", "Orus", "Zephyr"],
}
OPEN_VOICE_LISTS = ("elevenlabs", "vertex_ai")
# The variables litellm reads a speech key from besides the one maic checks: redacted at any length while a
# sentence is under way.
_KEYS_READ = ("OPENAI_API_KEY", "AZURE_API_KEY", "AZURE_OPENAI_API_KEY", "AZURE_AD_TOKEN", "ELEVENLABS_API_KEY",
              "GEMINI_API_KEY", "GOOGLE_API_KEY")
TTS1_VOICES = [v for v in OPENAI_VOICES if v not in ("ballad", "verse")]


def missing_key(spec: VoiceSpec) -> str | None:
    """The variable a provider voice needs and the environment lacks (``None``: nothing missing).

    A voice served at ``--voice-api-base`` (a litellm proxy, a local server) is not checked: it may need no
    key.  A provider maic does not know is left to the call, which says what is wrong.
    """
    if spec.kind != "litellm" or spec.api_base:
        return None
    variables = spec.key_variables
    if not variables or any(os.environ.get(name) for name in variables):
        return None
    return variables[0]


def _import_litellm() -> Any:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # never fetch the price list from the network
    os.environ.setdefault("LITELLM_LOG", "ERROR")
    import litellm

    litellm.suppress_debug_info = True
    litellm.telemetry = False
    return litellm


class LitellmSpeechEngine:
    """One litellm speech model; ``api_base`` (a flag or config.yaml, never a file) where it is served."""

    def __init__(self, spec: VoiceSpec) -> None:
        self.spec = spec
        self.name = spec.name
        self.provider = spec.provider
        model = spec.model.partition("/")[2].lower()
        base = TTS1_VOICES if self.provider == "openai" and model.startswith("tts-1") else None
        self._voices = list(base or PROVIDER_VOICES.get(self.provider, OPENAI_VOICES))
        self.accepts_any_voice = self.provider in OPEN_VOICE_LISTS or bool(spec.api_base)

    def voices(self) -> list[str]:
        return list(self._voices)

    def synthesize(self, text: str, voice: Voice) -> Audio:
        litellm = _import_litellm()
        from .litellm_bounds import bounded_client

        seconds = DEADLINE_SECONDS
        options: dict[str, Any] = {"response_format": "wav", "timeout": seconds, "max_retries": 0}
        if self.provider in ("openai", "azure", "elevenlabs") and abs(voice.speed - 1.0) > 1e-3:
            options["speed"] = round(min(4.0, max(0.25, voice.speed)), 3)
        if self.spec.api_base:
            options["api_base"] = self.spec.api_base
        bounded = bounded_client(self.provider, self.spec.api_base, self.spec.auth, seconds=seconds,
                                 max_bytes=MAX_AUDIO_BYTES, azure_version=litellm.AZURE_DEFAULT_API_VERSION)
        if bounded is not None:
            options["client"] = bounded[0]
            if self.provider == "elevenlabs":
                from litellm.llms.custom_httpx.http_handler import HTTPHandler

                options["client"] = HTTPHandler(client=bounded[0])
        transport = bounded[1] if bounded is not None else None
        sent = sent_secrets(*(os.environ.get(name) for name in (*self.spec.key_variables, *_KEYS_READ)),
                            *(self.spec.auth or ()))
        outcome: dict[str, Any] = {}

        def call() -> None:
            try:
                outcome["data"] = _content(litellm.speech(model=self.spec.model, input=text, voice=voice.id,
                                                          **options))
            except Exception as exc:  # noqa: BLE001 - said as one line in the caller's thread
                outcome["error"] = exc

        worker = threading.Thread(target=call, name="maic-speech", daemon=True)
        with secrets_in_use(sent):
            worker.start()
            worker.join(seconds + 1.0)  # the transport stops itself at the deadline; this is for the rest
            if transport is not None and not worker.is_alive():
                transport.close()
            if worker.is_alive():
                raise SpeechError(self.name, f"no whole answer within {seconds:g} s")
            if transport is not None and transport.problem:
                raise SpeechError(self.name, transport.problem)
            error = outcome.get("error")
            if isinstance(error, SpeechError):
                raise SpeechError(self.name, error.detail)
            if error is not None:
                raise SpeechError(self.name, _describe(error))
            return decode(outcome["data"], self.name, pcm_rate=OPENAI_PCM_RATE)


def _content(response: Any) -> bytes:
    data = getattr(response, "content", None)
    if data is None and hasattr(response, "read"):
        data = response.read()
    if not isinstance(data, bytes | bytearray):
        raise SpeechError("litellm", "the provider's answer held no audio")
    if len(data) > MAX_AUDIO_BYTES:
        raise SpeechError("litellm", f"the audio is larger than {MAX_AUDIO_BYTES // 2**20} MiB")
    return bytes(data)


def _describe(exc: Exception) -> str:
    """litellm's error in one line: its status and message, without the long provider preamble."""
    status = getattr(exc, "status_code", None)
    message = str(getattr(exc, "message", "") or exc)
    message = message.replace("litellm.", "").split("\n")[0]
    return f"HTTP {status}: {message}" if isinstance(status, int) else f"{type(exc).__name__}: {message}"
