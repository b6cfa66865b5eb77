"""The header's one-line notice when a class does not run on a real model, and how to get one."""

from __future__ import annotations

from ..llm.spec import ModelSpec

REAL_MODEL_HINT = "for a real class: --model openai/gpt-4o-mini, MAIC_MODEL or OPENAI_API_KEY"


def model_notice(model: str) -> str | None:
    """One line for the header when the class runs on something other than a real model."""
    kind = ModelSpec.parse(model).kind
    if kind == "local":
        return f"small offline model (SmolLM2-135M, CPU); {REAL_MODEL_HINT}"
    if kind == "demo":
        from ..llm.local import INSTALL_HINT, offline_available

        if offline_available():
            return f"demo model: canned replies, no AI; {REAL_MODEL_HINT}"
        return f"demo model: canned replies, no AI. Offline model: {INSTALL_HINT.split('  (')[0]}; {REAL_MODEL_HINT}"
    return None
