"""A litellm Router as the LLM: several deployments of a model, litellm's own load balancing.

``--router FILE`` takes litellm's Router configuration (YAML or JSON):
``model_list`` (each entry a ``model_name`` group and ``litellm_params`` for one
deployment — a vLLM or Ollama server, a litellm proxy, another provider key),
and optionally ``router_settings`` (``routing_strategy``, ``num_retries``,
``fallbacks``, ``timeout``, rpm/tpm limits …) passed to ``litellm.Router``.
Models are then named by their group: ``maic run --router r.yaml --model my-group``.
"""

from __future__ import annotations

from typing import Any

from ..errors import InputError
from .litellm_client import LitellmClient, import_litellm


def build_router(config: dict[str, Any], source: str) -> tuple[Any, set[str]]:
    """The Router, and the model group names it serves."""
    model_list = config.get("model_list")
    if not isinstance(model_list, list) or not model_list:
        raise InputError(f"{source}: model_list: a list of deployments is required")
    for index, entry in enumerate(model_list):
        if not isinstance(entry, dict) or "model_name" not in entry or "litellm_params" not in entry:
            raise InputError(f"{source}: model_list.{index}: each deployment needs model_name and litellm_params")
    litellm = import_litellm()
    settings = dict(config.get("router_settings") or {})
    settings.setdefault("num_retries", 3)
    try:
        return litellm.Router(model_list=model_list, **settings), {m["model_name"] for m in model_list}
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
