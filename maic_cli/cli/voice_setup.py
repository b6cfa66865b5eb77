"""What ``maic voices`` and ``maic agents show`` share: the voice named once, and the class it is cast for.

The voice string comes from ``--voice``, ``MAIC_VOICE`` or ``voice:`` in config.yaml (``store/config.py``),
the server from ``--voice-api-base``, ``MAIC_VOICE_API_BASE`` or ``voice_api_base:``; it is parsed once
into a :class:`~maic_cli.speech.spec.VoiceSpec`.  A persona never names either.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:
    from ..engine.models import AgentConfig
    from ..speech.port import Voice
    from ..speech.spec import VoiceSpec
    from ..store.config import Settings
    from ..store.personas import Registry

VoiceOption = typer.Option(None, "--voice", help="The voice engine: local (offline, the voices extra), espeak, "
                           "openai-compatible (with --voice-api-base), a provider's speech model such as "
                           "openai/tts-1, or off. Default: MAIC_VOICE, voice: in config.yaml, else off.")
VoiceApiBaseOption = typer.Option(None, "--voice-api-base", help="Base URL (…/v1) of an OpenAI-compatible "
                                  "speech server (Kokoro, Lemonade, a litellm proxy).")


def settings_for(voice: str | None, voice_api_base: str | None, agents_dir: list[object] | None = None) -> Settings:
    from ..store.config import load_settings

    return load_settings({"voice": voice, "voice_api_base": voice_api_base, "agents_dir": agents_dir or None})


def voice_spec(settings: Settings, *, voice_flag: str | None) -> VoiceSpec:
    from ..speech.spec import resolve

    return resolve(voice_flag, settings.voice, api_base=settings.voice_api_base)


def offline_fallback(spec: VoiceSpec) -> VoiceSpec:
    """``off`` becomes the offline voice where a command must say something (``maic voices say``)."""
    from ..speech import espeak_engine, piper_engine
    from ..speech.spec import VoiceSpec

    if spec.enabled:
        return spec
    if piper_engine.available() or espeak_engine.executable() is None:
        return VoiceSpec.parse("local")
    return VoiceSpec.parse("espeak")


def the_class(registry: Registry, settings: Settings, agent_id: str | None = None) -> list[AgentConfig]:
    """The agents a chat would seat (config.yaml's ``agents:`` or the default class), plus ``agent_id``."""
    from ..store.personas import DEFAULT_CLASS

    ids = list(settings.agents or [i for i in DEFAULT_CLASS if i in registry.agents])
    if agent_id and agent_id not in ids:
        ids.append(agent_id)
    return registry.require(ids)


def describe(voice: Voice) -> str:
    """``en_US-joe-medium, speed 0.92, pitch -2.0``."""
    return f"{voice.id}, speed {voice.speed:.2f}, pitch {voice.pitch:+.1f}"


def origin(agent: AgentConfig) -> str:
    """``persona (id, pitch)``: what the persona chose; ``derived``: from its id and role."""
    chosen = agent.voice
    fields = [name for name in ("id", "speed", "pitch") if chosen is not None and getattr(chosen, name) is not None]
    return f"persona ({', '.join(fields)})" if fields else "derived"
