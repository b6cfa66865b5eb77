"""User settings: ``$MAIC_HOME/config.yaml``, then environment variables, then flags.

Precedence, lowest to highest: built-in defaults < ``config.yaml`` <
``MAIC_*`` environment variables < command-line flags.  API keys are never
read from or written to maic's own files: providers' usual variables
(``OPENAI_API_KEY`` …) are left to litellm.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from ..errors import InputError
from ..yamlfile import load_model
from .paths import maic_home

ENV_VARS = {"model": "MAIC_MODEL", "api_base": "MAIC_API_BASE", "language": "MAIC_LANGUAGE", "voice": "MAIC_VOICE",
            "voice_api_base": "MAIC_VOICE_API_BASE", "small": "MAIC_SMALL"}
# A provider key in the environment picks that provider's small default model.
PROVIDER_DEFAULTS = [
    ("OPENAI_API_KEY", "openai/gpt-4o-mini"),
    ("ANTHROPIC_API_KEY", "anthropic/claude-3-5-haiku-latest"),
    ("GEMINI_API_KEY", "gemini/gemini-2.0-flash"),
    ("GROQ_API_KEY", "groq/llama-3.1-8b-instant"),
    ("MISTRAL_API_KEY", "mistral/mistral-small-latest"),
    ("DEEPSEEK_API_KEY", "deepseek/deepseek-chat"),
]


class Settings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    model: str | None = None
    api_base: str | None = None
    agents: list[str] | None = None
    agents_dir: list[Path] = Field(default_factory=list)
    name: str | None = None
    bio: str | None = None
    language: str | None = None
    max_turns: int | None = Field(default=None, ge=1, le=50)
    temperature: float | None = Field(default=None, ge=0, le=2)
    structured: Literal["auto", "off", "json_schema", "json_object"] | None = None
    # The class's voice (speech/spec.py: off, local, espeak, openai-compatible, openai/tts-1 …) and where an
    # OpenAI-compatible speech server is: the user's own settings, never a persona's or a lesson's.
    voice: str | None = Field(default=None, max_length=200)
    voice_api_base: str | None = Field(default=None, max_length=500)
    small: bool | None = None  # the model is small: compact prompts, and a lesson's gate on its speech


# An empty config.yaml (or one holding only comments) is a YAML null: no settings, not an error.
CONFIG_FILE = TypeAdapter(Settings | None)


def config_path() -> Path:
    return maic_home() / "config.yaml"


def load_settings(overrides: dict[str, Any] | None = None) -> Settings:
    """Merge config.yaml, environment and the given (flag) overrides; ``None`` flags are unset."""
    path = config_path()
    merged: dict[str, Any] = {}
    from_file = load_model(path, CONFIG_FILE) if path.is_file() else None
    if from_file is not None:
        merged.update(from_file.model_dump(exclude_none=True))
    origin = dict.fromkeys(merged, str(path))
    for field, var in ENV_VARS.items():
        if os.environ.get(var):
            merged[field], origin[field] = os.environ[var], var
    flags = {k: v for k, v in (overrides or {}).items() if v is not None and v != []}
    merged.update(flags)
    origin.update({k: "--" + k.replace("_", "-") for k in flags})
    try:
        return Settings.model_validate(merged)
    except ValidationError as exc:
        problem = exc.errors()[0]
        field = str(problem["loc"][0]) if problem["loc"] else "settings"
        where = origin.get(field, field)  # a flag, a variable, or config.yaml (then name the field)
        label = where if where.startswith("--") or where in ENV_VARS.values() else f"{where}: {field}"
        raise InputError(f"{label}: {problem['msg']}") from None


def provider_default_model() -> str | None:
    """The model a provider key in the environment implies, if any."""
    for variable, model in PROVIDER_DEFAULTS:
        if os.environ.get(variable):
            return model
    return None
