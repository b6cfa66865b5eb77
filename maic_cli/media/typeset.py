"""A formula typeset as a picture for the video frames, by matplotlib's mathtext (imported on first use).

matplotlib is in the ``video`` extra; where it is missing, or mathtext cannot read a source, :func:`formula_image`
gives ``None`` and the frame writes the formula as readable text instead (``ui/latex.py``).  The source is
tidied first (``6 CO2 -> C6H12O6`` gets its subscripts and arrow, ``3/4`` is stacked: :func:`maic_cli.mathml.
tidy_formula`).  Bounded: a source longer than :data:`MAX_SOURCE` is not typeset, each picture is drawn once
(cached) at :data:`BASE_PX` and scaled by the frame.
"""

from __future__ import annotations

import io
import warnings
from functools import lru_cache
from typing import Any

from ..mathml import tidy_formula

MAX_SOURCE = 300  # characters typeset; a longer formula is written as text
BASE_PX = 64  # the font size a formula is drawn at, before the frame scales it


def math_source(source: str) -> str:
    """``source`` ready for mathtext: tidied, its dollars escaped, in one math run."""
    text = tidy_formula(source.strip().strip("$"))
    return "$" + text.replace("$", r"\$") + "$"


@lru_cache(maxsize=128)
def formula_image(source: str, color: str = "#1f2328") -> Any:
    """The formula as an RGBA Pillow image (``BASE_PX`` type), or None: too long, not understood, no matplotlib."""
    if not source.strip() or len(source) > MAX_SOURCE:
        return None
    try:
        from matplotlib import mathtext
        from matplotlib.font_manager import FontProperties
        from PIL import Image
    except ImportError:
        return None
    out = io.BytesIO()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            mathtext.math_to_image(math_source(source), out, prop=FontProperties(size=BASE_PX), dpi=72,
                                   format="png", color=color)
        image = Image.open(io.BytesIO(out.getvalue()))
        image.load()
    except Exception:  # noqa: BLE001 - mathtext fails many ways on a hostile source: the text is shown instead
        return None
    if image.width > 8000 or image.height > 2000:
        return None
    return _inked(image.convert("L"), color)


def _inked(grey: Any, color: str) -> Any:
    """The formula drawn dark on white, as ``color`` on transparent (so it sits on a highlight as on white)."""
    from PIL import Image, ImageColor, ImageOps

    ink = ImageColor.getrgb(color)[:3]
    darkest = 0.299 * ink[0] + 0.587 * ink[1] + 0.114 * ink[2]
    scale = 255 / max(1.0, 255 - darkest)
    alpha = ImageOps.invert(grey).point(lambda v: min(255, round(v * scale)))
    out = Image.new("RGBA", grey.size, ink)
    out.putalpha(alpha)
    return out
