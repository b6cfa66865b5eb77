"""Build a client from a model spec: :func:`make_llm` picks the implementation the spec names.

The string is parsed once, where the user gave it (:meth:`ModelSpec.parse`, which also decides
whether a litellm string is served by litellm, maic's direct client or a Router); the spec is what
is passed here.  Model strings: any litellm string (``openai/gpt-4o-mini``, ``ollama/llama3``, …),
``scripted:FILE``, ``replay:FILE``, ``local`` (the built-in offline model, with the
``offline`` extra) or ``demo`` (canned replies, no model).  litellm is imported only when a litellm
model is actually called.  The litellm and direct clients come wrapped in a
:class:`~maic_cli.llm.retrying.RetryingClient`; :func:`~maic_cli.llm.port.close_llm` releases what
any client holds open.
"""


from __future__ import annotations

from pathlib import Path
from typing import Any

from ..untrusted import register_secret
from .port import LLMClient
from .spec import ModelSpec


def make_llm(spec: ModelSpec, *, api_base: str | None = None, api_key: str | None = None,
             temperature: float | None = None, extra: dict[str, Any] | None = None,
             structured: str = "auto", rate_limit_retries: int | None = None) -> LLMClient:
    """The client ``spec`` names (a ``router`` spec is served as a litellm one: a Router is built by
    its caller, cli/batch_plan.py, from the ``--router`` file)."""
    model = spec.raw
    if spec.kind == "local":
        from .local import LocalLlamaClient

        return LocalLlamaClient(name=model) if temperature is None else LocalLlamaClient(
            name=model, temperature=temperature)
    if spec.kind == "demo":
        from .demo import DemoLLM

        return DemoLLM()
    if spec.kind == "replay":
        from .replay import ReplayLLM

        return ReplayLLM.from_file(Path(spec.target))
    if spec.kind == "scripted":
        from .scripted import ScriptedLLM

        return ScriptedLLM.from_file(Path(spec.target))
    from .retrying import RetryingClient

    inner: LLMClient
    register_secret(api_key)  # an explicit key is redacted from provider error text like an env one
    if spec.kind == "direct":
        from .direct import DirectClient

        inner = DirectClient(model, api_base=api_base, api_key=api_key, temperature=temperature, extra=extra,
                             structured=structured)
    else:
        from .litellm_client import LitellmClient

        inner = LitellmClient(model, api_base=api_base, api_key=api_key, temperature=temperature, extra=extra,
                              structured=structured)
    return RetryingClient(inner, rate_limit_retries=rate_limit_retries)
