"""A formula typeset as a picture for the video frames, by matplotlib's mathtext (imported on first use).

matplotlib is in the ``video`` extra; where it is missing, or mathtext cannot read a source, :func:`formula_image`
gives ``None`` and the frame writes the formula as readable text instead (``ui/latex.py``).  The source is
tidied first (``6 CO2 -> C6H12O6`` gets its subscripts and arrow, ``3/4`` is stacked: :func:`maic_cli.ui.mathml.
tidy_formula`).  Bounded: a source longer than :data:`MAX_SOURCE` is not typeset, each picture is drawn once
(kept) at :data:`BASE_PX` and scaled by the frame, and a frame (:data:`FRAME_CHARS`) and an export
(:data:`EXPORT_CHARS`, :func:`export_budget`) typeset at most so many characters of new formulas; past that a
formula is written as text.
"""

from __future__ import annotations

import io
import warnings
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ..ui.mathml import tidy_formula

MAX_SOURCE = 300  # characters typeset; a longer formula is written as text
FRAME_CHARS = 1_500  # characters of new formulas typeset for one frame (under a second of mathtext)
EXPORT_CHARS = 8_000  # and for a whole export: a lesson of a thousand long formulas still ends in seconds
BASE_PX = 64  # the font size a formula is drawn at, before the frame scales it


def math_source(source: str) -> str:
    """``source`` ready for mathtext: tidied, its dollars escaped, in one math run."""
    text = tidy_formula(source.strip().strip("$"))
    return "$" + text.replace("$", r"\$") + "$"


class _Budget:
    """How many characters of formulas may still be typeset: in this frame, and in this export (if one runs)."""

    frame = FRAME_CHARS
    export: int | None = None


_CACHE: OrderedDict[tuple[str, str], Any] = OrderedDict()  # (source, colour) → the picture, or None (not readable)


def new_frame() -> None:
    """A new frame begins: it may typeset :data:`FRAME_CHARS` characters of formulas not drawn before."""
    _Budget.frame = FRAME_CHARS


@contextmanager
def export_budget(chars: int = EXPORT_CHARS) -> Iterator[None]:
    """An export typesets at most ``chars`` characters of formulas in all; the rest are written as text."""
    before = _Budget.export
    _Budget.export = chars
    try:
        yield
    finally:
        _Budget.export = before


def formula_image(source: str, color: str = "#1f2328") -> Any:
    """The formula as an RGBA Pillow image (``BASE_PX`` type), or None: too long, not understood, no matplotlib,
    or the frame's or the export's typesetting budget spent (each picture is made once and kept)."""
    key = (source, color)
    if key in _CACHE:
        _CACHE.move_to_end(key)
        return _CACHE[key]
    if not source.strip() or len(source) > MAX_SOURCE:
        return None
    cost = max(20, len(source))
    if cost > _Budget.frame or (_Budget.export is not None and cost > _Budget.export):
        return None  # not kept: a later frame with budget left may typeset it
    _Budget.frame -= cost
    if _Budget.export is not None:
        _Budget.export -= cost
    image = _typeset(source, color)
    _CACHE[key] = image
    while len(_CACHE) > 256:
        _CACHE.popitem(last=False)
    return image


def _typeset(source: str, color: str) -> Any:
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


def cache_clear() -> None:
    """Forget every picture made (tests: after matplotlib is hidden or shown again)."""
    _CACHE.clear()


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
