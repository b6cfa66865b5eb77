"""Model specs: a model string parsed once, and every question about it answered here.

A model string is one of: any litellm string (``openai/gpt-4o-mini``,
``ollama/llama3``), ``local`` (or ``smollm2``: the built-in offline model),
``demo`` (canned replies), ``scripted:FILE`` or ``replay:FILE``.  How it is
served can change the kind: ``--client direct`` serves a litellm string with
maic's own OpenAI-compatible client, ``--router FILE`` with a litellm Router.  ``--client auto``
(``maic run``'s default) follows the server: an OpenAI-compatible provider string
(:data:`OPENAI_COMPATIBLE`) with an ``--api-base`` — vLLM, a llama.cpp server, Ollama's
``/v1``, a litellm proxy — goes to the direct client, everything else through litellm.

Everything that needs to know about a model (which client to build, whether the
class runs on a real model, whether it wants the compact prompts, how a
transcript names its producer, the slug in a batch run id) asks the spec.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

ModelKind = Literal["litellm", "local", "demo", "scripted", "replay", "router", "direct"]

OFFLINE_MODELS = ("local", "smollm2")  # names of the built-in offline model
OFFLINE_LABEL = "SmolLM2-135M-Instruct (llama.cpp, CPU)"
_FILE_KINDS: tuple[ModelKind, ...] = ("scripted", "replay")
# litellm providers that post OpenAI's /chat/completions to the --api-base as it is given.
OPENAI_COMPATIBLE = ("openai", "hosted_vllm", "litellm_proxy")


def follows_the_server(model: str, api_base: str | None) -> bool:
    """``--client auto``: the direct client serves ``model`` (an OpenAI-compatible server at ``api_base``)."""
    provider, slash, _ = model.partition("/")
    return bool(api_base) and bool(slash) and provider in OPENAI_COMPATIBLE


@dataclass(frozen=True)
class ModelSpec:
    raw: str  # the string as the user gave it
    kind: ModelKind
    target: str  # the provider's model name, or the file of a scripted/replay model
    small: bool = False  # the user marked it small (--small, config.yaml's small: true): compact prompts, the gate

    @classmethod
    def parse(cls, model: str, *, client: str = "litellm", router: bool = False,
              api_base: str | None = None, small: bool = False) -> ModelSpec:
        """Read a model string; ``client``/``router`` are how a litellm string is served (``client``
        ``auto``: direct for an OpenAI-compatible ``api_base``, see :func:`follows_the_server`); ``small``:
        the user says the model is small (it gets what the built-in one gets)."""
        prefix, colon, rest = model.partition(":")
        if colon and prefix in _FILE_KINDS:
            return cls(model, "scripted" if prefix == "scripted" else "replay", rest, small)
        if model in OFFLINE_MODELS:
            return cls(model, "local", model, small)
        if model == "demo":
            return cls(model, "demo", model, small)
        if router:
            return cls(model, "router", model, small)
        direct = client == "direct" or (client == "auto" and follows_the_server(model, api_base))
        return cls(model, "direct" if direct else "litellm", model, small)

    # -- what it is ------------------------------------------------------------------------
    @property
    def is_real(self) -> bool:
        """A language model on a provider (not the offline model, canned or recorded replies)."""
        return self.kind in ("litellm", "router", "direct")

    @property
    def uses_litellm(self) -> bool:
        return self.kind in ("litellm", "router")

    @property
    def sends_key(self) -> bool:
        """Calls go over the network to a provider that may receive an API key."""
        return self.is_real

    @property
    def per_class(self) -> bool:
        """A client holds one class's state (a script's position, a replay's cursor): never shared."""
        return self.kind in ("scripted", "replay", "demo")

    @property
    def file(self) -> Path | None:
        return Path(self.target) if self.kind in _FILE_KINDS else None

    @property
    def compact_prompts(self) -> bool:
        """The small-model prompt variant (and, in a lesson, the gate on its speech): the built-in model,
        also when served elsewhere (``openai/smollm2`` on a llama.cpp server), or a model marked small."""
        return self.small or self.raw.rsplit("/", 1)[-1].lower() in OFFLINE_MODELS

    # -- how it is named ---------------------------------------------------------------------
    @property
    def produced_by(self) -> str:
        """How a transcript names what produced its replies."""
        if self.kind == "scripted":
            return f"scripted model ({self.target}): canned replies, not a language model"
        if self.kind == "replay":
            return f"replayed replies ({self.target})"
        if self.kind == "demo":
            return "demo model: canned replies, not a language model"
        if self.kind == "local":
            return f"offline model: {OFFLINE_LABEL}"
        return f"litellm model {self.raw}"

    @property
    def slug(self) -> str:
        """A file-name-safe short name (batch run ids): a scripted/replay file by its stem."""
        name = f"{self.kind}-{Path(self.target).stem}" if self.kind in _FILE_KINDS else self.raw
        return re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-")[:60]
