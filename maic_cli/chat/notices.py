"""The header's one-line notice when a class does not run on a real model, and how to get one.

On the built-in offline model with no lesson, the notice says plainly that the model is small and
offers the built-in lessons, where the class is grounded in hand-written content (``maic lesson list``).
"""

from __future__ import annotations

from ..llm.spec import ModelSpec

REAL_MODEL_HINT = "for a real class: --model openai/gpt-4o-mini, MAIC_MODEL or OPENAI_API_KEY"
LESSON_HINT = "best with a lesson: maic chat --lesson photosynthesis (maic lesson list)"


def model_notice(spec: ModelSpec, *, lesson: bool = False) -> str | None:
    """One line for the header when the class runs on something other than a real model
    (``lesson``: the class plays a lesson, so the lessons are not offered again)."""
    kind = spec.kind
    if kind == "local":
        if not lesson:
            return f"small offline model (SmolLM2-135M): weak at free questions; {LESSON_HINT}; {REAL_MODEL_HINT}"
        return f"small offline model (SmolLM2-135M, CPU); {REAL_MODEL_HINT}"
    if kind == "demo":
        from ..llm.local import INSTALL_HINT, offline_available

        if offline_available():
            return f"demo model: canned replies, no AI; {REAL_MODEL_HINT}"
        return f"demo model: canned replies, no AI. Offline model: {INSTALL_HINT.split('  (')[0]}; {REAL_MODEL_HINT}"
    return None
