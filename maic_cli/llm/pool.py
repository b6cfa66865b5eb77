"""Clients for many classes at once (``maic run``).

A provider model gets one shared client for the whole batch (its connections and
its rate-limit backoff are shared too); a fake that holds one class's state — a
script's position, a replay's cursor — gets a fresh client per class.  Closing
the pool closes what the shared clients hold open.
"""

from __future__ import annotations

from collections.abc import Callable

from .port import LLMClient, close_llm
from .spec import ModelSpec


class ClientPool:
    def __init__(self, build: Callable[[ModelSpec], LLMClient]) -> None:
        self._build = build
        self._shared: dict[str, LLMClient] = {}

    def get(self, spec: ModelSpec) -> LLMClient:
        if spec.per_class:
            return self._build(spec)
        if spec.raw not in self._shared:
            self._shared[spec.raw] = self._build(spec)
        return self._shared[spec.raw]

    async def aclose(self) -> None:
        for client in self._shared.values():
            await close_llm(client)
        self._shared.clear()
