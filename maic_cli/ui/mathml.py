"""A lesson's LaTeX formula as MathML that a browser shows as mathematics, safe to put in any page maic writes;
and a formula written as plain text tidied into the LaTeX it means.  The one LaTeX→MathML conversion of maic:
the HTML exports' slides (``ui/slide_html.py``), the web player, OpenMAIC's classroom
(``formats/openmaic_write.py``) and the video's typeset formulas (``media/typeset.py``, for :func:`tidy_formula`).

:func:`mathml` converts with latex2mathml (pure Python, MIT) and then rebuilds its output from a whitelist:
latex2mathml copies ``\\text{…}`` into the markup unescaped and ``\\href{…}`` into an attribute, so a formula from
a lesson someone sent could carry a tag or a ``javascript:`` link.  Its output is parsed as XML and written again
with only MathML elements and presentation attributes, every text and value escaped; anything else (another
element, a link, an event handler) is dropped, its text kept.  A formula it cannot read (unbalanced braces, a
double superscript), nests deeper than :data:`MAX_DEPTH` or is longer than :data:`MAX_LATEX` gives ``None``: the
caller shows the source instead (:func:`latex_to_mathml` does: a ``<math>`` of the source as text).  The source
travels in an ``annotation``.  latex2mathml is imported on the first formula, never at startup.

:func:`tidy_formula` makes a formula written as plain text (``6 CO2 + 6 H2O -> C6H12O6``, ``1/2 = 2/4``) into the
LaTeX it means (subscripts, an arrow, upright words, stacked fractions); real LaTeX passes unchanged.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ElementTree
from html import escape

from ..untrusted import clean

MAX_LATEX = 2_000  # characters of a formula that are converted (a lesson's formulas are a line)
MAX_DEPTH = 40  # braces, \left … \right and environments nested (latex2mathml recurses on each)
MATHML_NS = "http://www.w3.org/1998/Math/MathML"

_NAMESPACE = "{" + MATHML_NS + "}"
ELEMENTS = frozenset(
    "math mrow mi mn mo ms mtext mspace msup msub msubsup mfrac msqrt mroot mover munder munderover mtable mtr "
    "mtd mstyle mpadded mphantom menclose merror mfenced mmultiscripts mprescripts none semantics annotation".split())
ATTRIBUTES = frozenset(
    "display mathvariant mathsize width height depth lspace rspace stretchy fence separator accent accentunder "
    "largeop movablelimits symmetric minsize maxsize form linethickness columnalign columnlines columnspacing "
    "rowalign rowlines rowspacing frame framespacing displaystyle scriptlevel notation open close separators "
    "align equalrows equalcolumns voffset encoding".split())
_MATHRM = re.compile(r"\\mathrm\{([^{}\\]*)\}")  # latex2mathml sets \mathrm{C} italic; \text{C} is upright


def _depth(latex: str) -> int:
    depth = deepest = 0
    for index, char in enumerate(latex):
        if char == "{" or latex.startswith(("\\left", "\\begin"), index):
            depth += 1
            deepest = max(deepest, depth)
        elif char == "}" or latex.startswith(("\\right", "\\end"), index):
            depth -= 1
    return deepest


def _write(node: ElementTree.Element, out: list[str]) -> None:
    tag = node.tag.removeprefix(_NAMESPACE)
    kept = tag in ELEMENTS
    if kept:
        attributes = "".join(f' {name}="{escape(value)}"' for name, value in sorted(node.attrib.items())
                             if name in ATTRIBUTES)
        if tag == "math":
            attributes = f' xmlns="{MATHML_NS}"{attributes}'
        out.append(f"<{tag}{attributes}>")
    if node.text:
        out.append(escape(node.text, quote=False))
    for child in node:
        _write(child, out)
        if child.tail:
            out.append(escape(child.tail, quote=False))
    if kept:
        out.append(f"</{tag}>")


def mathml(latex: str, display: bool = False) -> str | None:
    """``latex`` as a ``<math>`` element (``display``: set on its own line), or ``None`` when it cannot be."""
    source = latex.strip()
    if not source or len(source) > MAX_LATEX or _depth(source) > MAX_DEPTH:
        return None
    from latex2mathml.converter import convert

    try:
        made = convert(_MATHRM.sub(r"\\text{\1}", source), display="block" if display else "inline")
        root = ElementTree.fromstring(made)
    # latex2mathml's errors share no base class (and its parser may raise IndexError, KeyError …): a formula it
    # cannot read, or XML it wrote badly, is shown as its source.
    except Exception:  # noqa: BLE001
        return None
    if root.tag.removeprefix(_NAMESPACE) != "math":
        return None
    # The source travels with it, as MathML says (and a reader or a copy gets the LaTeX).
    annotation = f'<annotation encoding="application/x-tex">{escape(source, quote=False)}</annotation>'
    out: list[str] = []
    _write(root, out)
    head, body = out[0], "".join(out[1:-1])
    return f"{head}<semantics><mrow>{body}</mrow>{annotation}</semantics></math>"


def plain_math(text: str, *, display: bool = False) -> str:
    """``text`` as a ``<math>`` of one escaped text run (what a formula that cannot be set falls back to)."""
    mode = "block" if display else "inline"
    return f'<math xmlns="{MATHML_NS}" display="{mode}"><mtext>{escape(clean(text))}</mtext></math>'


def latex_to_mathml(source: str, *, display: bool = False) -> str:
    """``source`` (LaTeX, untrusted) as a ``<math>`` element, always: :func:`mathml`, else the source as text."""
    text = clean(source).strip()
    made = mathml(text, display=display) if text else None
    if made is not None:
        return made
    cut = text[:MAX_LATEX] + ("…" if len(text) > MAX_LATEX else "")
    return plain_math(cut, display=display)


_LATEX_MARK = re.compile(r"[\\^_{}$]")
_CHEMICAL = re.compile(r"(?<![\w])((?:[A-Z][a-z]?\d*){1,12})(?![\w])")
_ELEMENT = re.compile(r"([A-Z][a-z]?)(\d*)")
_WORD = re.compile(r"(?<![\\\w])([A-Za-z][a-z]+)(?![\w])")
_FRACTION = re.compile(r"(?<![\w.])(\d+)/(\d+)(?![\w.])")
_ARROWS = (("<->", r" \leftrightarrow "), ("->", r" \rightarrow "), ("=>", r" \Rightarrow "), ("<=", r" \leq "),
           (">=", r" \geq "), ("!=", r" \neq "), ("*", r" \times "))


def _chemical(match: re.Match[str]) -> str:
    token = match.group(1)
    if not any(char.isdigit() for char in token):
        return token  # a name or a variable, not a compound
    return "".join(rf"\mathrm{{{symbol}}}" + (f"_{{{count}}}" if count else "")
                   for symbol, count in _ELEMENT.findall(token))


def tidy_formula(source: str) -> str:
    """A formula written as plain text, as the LaTeX it means; a source with LaTeX in it is returned as it is."""
    text = " ".join(source.split())
    if _LATEX_MARK.search(text):
        return text
    text = _WORD.sub(r"\\mathrm{\1}", text)
    text = _CHEMICAL.sub(_chemical, text)
    text = _FRACTION.sub(r"\\frac{\1}{\2}", text)
    for plain, latex in _ARROWS:
        text = text.replace(plain, latex)
    return " ".join(text.split())
