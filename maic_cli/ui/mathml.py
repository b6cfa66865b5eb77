"""A lesson's LaTeX formula as MathML that a browser shows as mathematics, safe to put in any page maic writes.

:func:`mathml` converts with latex2mathml (pure Python, MIT) and then rebuilds its output from a whitelist:
latex2mathml copies ``\\text{…}`` into the markup unescaped and ``\\href{…}`` into an attribute, so a formula from
a lesson someone sent could carry a tag or a ``javascript:`` link.  Its output is parsed as XML and written again
with only MathML elements and presentation attributes, every text and value escaped; anything else (another
element, a link, an event handler) is dropped, its text kept.  A formula it cannot read (unbalanced braces, a
double superscript), nests deeper than :data:`MAX_DEPTH` or is longer than :data:`MAX_LATEX` gives ``None``: the
caller shows the source instead.  latex2mathml is imported on the first formula, never at startup.

The HTML exports and OpenMAIC's classroom (``formats/openmaic_write.py``) use it.
"""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree
from html import escape

MAX_LATEX = 2_000  # characters of a formula that are converted (a lesson's formulas are a line)
MAX_DEPTH = 40  # braces, \left … \right and environments nested (latex2mathml recurses on each)

_NAMESPACE = "{http://www.w3.org/1998/Math/MathML}"
_ELEMENTS = frozenset(
    "math mrow mi mn mo ms mtext mspace msup msub msubsup mfrac msqrt mroot mover munder munderover mtable mtr "
    "mtd mstyle mpadded mphantom menclose merror mfenced mmultiscripts mprescripts none semantics annotation".split())
_ATTRIBUTES = frozenset(
    "display mathvariant mathsize width height depth lspace rspace stretchy fence separator accent accentunder "
    "largeop movablelimits symmetric minsize maxsize form linethickness columnalign columnlines columnspacing "
    "rowalign rowlines rowspacing frame framespacing displaystyle scriptlevel notation open close separators "
    "align equalrows equalcolumns voffset encoding".split())


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
    kept = tag in _ELEMENTS
    if kept:
        attributes = "".join(f' {name}="{escape(value)}"' for name, value in sorted(node.attrib.items())
                             if name in _ATTRIBUTES)
        if tag == "math":
            attributes = f' xmlns="http://www.w3.org/1998/Math/MathML"{attributes}'
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
        made = convert(source, display="block" if display else "inline")
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
