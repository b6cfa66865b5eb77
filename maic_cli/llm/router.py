"""A litellm Router as the LLM: several deployments of a model, litellm's own load balancing.

``--router FILE`` takes litellm's Router configuration (YAML or JSON):
``model_list`` (each entry a ``model_name`` group and ``litellm_params`` for one
deployment — a vLLM or Ollama server, a litellm proxy, another provider key),
and optionally ``router_settings`` (``routing_strategy``, ``num_retries``,
``fallbacks``, ``timeout``, rpm/tpm limits …) passed to ``litellm.Router``.
Models are then named by their group: ``maic run --router r.yaml --model my-group``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..errors import InputError
from ..yamlfile import load_model
from .litellm_client import LitellmClient, import_litellm


class LitellmParams(BaseModel):
    model_config = ConfigDict(extra="allow")  # api_base, api_key, rpm … are litellm's to check

    model: str = Field(min_length=1)


class Deployment(BaseModel):
    model_config = ConfigDict(extra="allow")  # model_info, … as litellm reads them

    model_name: str = Field(min_length=1)
    litellm_params: LitellmParams


class RouterConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    model_list: list[Deployment] = Field(min_length=1)
    router_settings: dict[str, Any] = Field(default_factory=dict)


def load_router(path: Path) -> tuple[Any, set[str]]:
    """The Router a ``--router`` file describes (``path:line: field: problem`` if it is wrong)."""
    return build_router(load_model(path, RouterConfig), str(path))


def build_router(config: RouterConfig, source: str) -> tuple[Any, set[str]]:
    """The Router, and the model group names it serves."""
    model_list = [deployment.model_dump() for deployment in config.model_list]
    litellm = import_litellm()
    settings = {"num_retries": 3, **config.router_settings}
    try:
        return litellm.Router(model_list=model_list, **settings), {d.model_name for d in config.model_list}
    except Exception as exc:  # noqa: BLE001 - a bad config is the user's input
        raise InputError(f"{source}: router_settings: {exc}") from None


class RouterClient(LitellmClient):
    """Streams through ``router.acompletion``; errors and retries as the litellm client's
    (retries left to the Router: its ``num_retries`` and fallbacks)."""

    def __init__(self, router: Any, names: set[str], model: str, **kwargs: Any) -> None:
        super().__init__(model, **kwargs)
        self.router = router
        if model not in names:
            raise InputError(f"--model {model}: not a model group in the router config ({', '.join(sorted(names))})")

    async def _complete(self, kwargs: dict[str, Any]) -> Any:
        # The Router's own settings decide retries (without touching the caller's kwargs, reused on retry).
        kwargs = {k: v for k, v in kwargs.items() if k not in ("num_retries", "max_retries")}
        return await self.router.acompletion(**kwargs)
