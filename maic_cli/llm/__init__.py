"""The LLM port and its implementations; :func:`make_llm` picks one by model string.

Model strings: any litellm string (``openai/gpt-4o-mini``, ``ollama/llama3``, …),
``scripted:FILE``, ``replay:FILE``, ``local`` (the built-in offline model, with the
``offline`` extra) or ``demo`` (canned replies, no model).  litellm is imported only when a litellm
model is actually called.  The litellm and direct clients come wrapped in a
:class:`~maic_cli.llm.retrying.RetryingClient`; :func:`close_llm` releases what
any client holds open.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..untrusted import register_secret
from .port import ClosableLLM, LLMClient, LLMError, LLMRequest, StreamPiece, TurnFacts, Usage, close_llm

__all__ = ["ClosableLLM", "LLMClient", "LLMError", "LLMRequest", "StreamPiece", "TurnFacts", "Usage",
           "close_llm", "make_llm"]


OFFLINE_MODELS = ("local", "smollm2")  # names of the built-in offline model


def is_small_model(model: str) -> bool:
    """Models that get the compact prompt variant: the built-in one, also when served
    elsewhere (``openai/smollm2`` on a llama.cpp server)."""
    return model.rsplit("/", 1)[-1].lower() in OFFLINE_MODELS


def uses_litellm(model: str) -> bool:
    """Whether :func:`make_llm` would call this model through litellm."""
    return model not in (*OFFLINE_MODELS, "demo") and not model.startswith(("scripted:", "replay:"))


def make_llm(model: str, *, api_base: str | None = None, api_key: str | None = None,
             temperature: float | None = None, extra: dict[str, Any] | None = None,
             structured: str = "auto", client: str = "litellm",
             rate_limit_retries: int | None = None) -> LLMClient:
    if model in OFFLINE_MODELS:
        from .local import LocalLlamaClient

        return LocalLlamaClient(name=model) if temperature is None else LocalLlamaClient(
            name=model, temperature=temperature)
    if model == "demo":
        from .demo import DemoLLM

        return DemoLLM()
    if model.startswith("replay:"):
        from .replay import ReplayLLM

        return ReplayLLM.from_file(Path(model.removeprefix("replay:")))
    if model.startswith("scripted:"):
        from .scripted import ScriptedLLM

        return ScriptedLLM.from_file(Path(model.removeprefix("scripted:")))
    from .retrying import RetryingClient

    inner: LLMClient
    register_secret(api_key)  # an explicit key is redacted from provider error text like an env one
    if client == "direct":
        from .direct import DirectClient

        inner = DirectClient(model, api_base=api_base, api_key=api_key, temperature=temperature, extra=extra,
                             structured=structured)
    else:
        from .litellm_client import LitellmClient

        inner = LitellmClient(model, api_base=api_base, api_key=api_key, temperature=temperature, extra=extra,
                              structured=structured)
    return RetryingClient(inner, rate_limit_retries=rate_limit_retries)
