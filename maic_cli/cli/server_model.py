"""Which model a thin client (``maic chat --server``) names its class after: the server's, told by its
``/v1/info``.  A provider model is named as it is (its client here is built but never called for a turn);
the offline model where this machine has it too; anything else (a scripted or replayed file on the server,
the demo) as ``demo``, which needs nothing here."""

from __future__ import annotations

from ..llm.spec import ModelSpec


def client_model(server_model: object) -> str:
    if not isinstance(server_model, str):
        return "demo"
    spec = ModelSpec.parse(server_model, client="auto")
    if spec.kind in ("litellm", "direct"):
        return server_model
    if spec.kind == "local":
        from ..llm.local import offline_available

        return server_model if offline_available() else "demo"
    return "demo"
