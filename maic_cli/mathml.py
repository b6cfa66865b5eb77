"""A formula's LaTeX as MathML a browser shows as mathematics, safe to put in a page; and its source tidied to be
typeset.

Shared by every page and package that shows a formula (the HTML exports' slides, the web player, an OpenMAIC
classroom's text boxes): :func:`latex_to_mathml` is the one LaTeX→MathML conversion.  It uses ``latex2mathml``
(imported on first use) and never trusts what comes out: the converter passes ``\\text{<script>}``, ``\\href``
and ``\\style`` through as markup, so its output is rebuilt here from a whitelist of MathML elements and
attributes, every text escaped (a tag it does not know is shown as text, not dropped).  A source too long, too
deeply nested or not understood is a ``<math>`` of its text, escaped.  Bounded: at most :data:`MAX_SOURCE`
characters are converted.

:func:`tidy_formula` makes a formula written as plain text (``6 CO2 + 6 H2O -> C6H12O6``, ``1/2 = 2/4``) into the
LaTeX it means (subscripts, an arrow, upright words, stacked fractions); real LaTeX passes unchanged.
"""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser

from .untrusted import clean

MAX_SOURCE = 2000  # characters of LaTeX converted; a longer formula is shown as its text
MAX_DEPTH = 40  # brace nesting converted
MATHML_NS = "http://www.w3.org/1998/Math/MathML"
ELEMENTS = frozenset({
    "math", "mrow", "mi", "mn", "mo", "mtext", "ms", "mspace", "msub", "msup", "msubsup", "mfrac", "msqrt", "mroot",
    "mstyle", "merror", "mpadded", "mphantom", "menclose", "munder", "mover", "munderover", "mtable", "mtr", "mtd",
    "mlabeledtr", "semantics", "annotation", "mmultiscripts", "mprescripts", "none", "mfenced",
})
ATTRIBUTES = frozenset({
    "display", "mathvariant", "width", "height", "depth", "lspace", "rspace", "stretchy", "fence", "separator",
    "accent", "accentunder", "linethickness", "columnalign", "rowalign", "columnspacing", "rowspacing",
    "columnlines", "rowlines", "frame", "displaystyle", "scriptlevel", "movablelimits", "largeop", "symmetric",
    "minsize", "maxsize", "form", "notation", "bevelled", "open", "close", "separators", "mathsize", "encoding",
})
_SAFE_VALUE = re.compile(r"^[\w .#%+-]{0,40}$")
_VOID = frozenset({"mspace", "none", "mprescripts"})


class _Rebuild(HTMLParser):
    """The converter's output again, whitelisted: known elements with known attributes, all text escaped."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.open: list[str] = []

    def _start(self, tag: str, attrs: list[tuple[str, str | None]], *, void: bool) -> None:
        if tag not in ELEMENTS:
            self.out.append(html.escape(self.get_starttag_text() or ""))
            return
        kept = "".join(f' {name}="{html.escape(value)}"' for name, value in attrs
                       if name in ATTRIBUTES and value is not None and _SAFE_VALUE.match(value))
        if tag == "math":
            kept = f' xmlns="{MATHML_NS}"' + kept
        if void or tag in _VOID:
            self.out.append(f"<{tag}{kept}/>")
        else:
            self.out.append(f"<{tag}{kept}>")
            self.open.append(tag)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._start(tag, attrs, void=False)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._start(tag, attrs, void=True)

    def handle_endtag(self, tag: str) -> None:
        if tag in self.open:
            while self.open:
                last = self.open.pop()
                self.out.append(f"</{last}>")
                if last == tag:
                    return
        elif tag not in ELEMENTS:
            self.out.append(html.escape(f"</{tag}>"))

    def handle_data(self, data: str) -> None:
        self.out.append(html.escape(data))

    def result(self) -> str:
        self.close()
        return "".join(self.out) + "".join(f"</{tag}>" for tag in reversed(self.open))


def _depth(source: str) -> int:
    depth = deepest = 0
    for char in source:
        if char == "{":
            depth += 1
            deepest = max(deepest, depth)
        elif char == "}":
            depth = max(0, depth - 1)
    return deepest


def plain_math(text: str, *, display: bool = False) -> str:
    """``text`` as a ``<math>`` of one escaped text run (what a formula falls back to)."""
    mode = "block" if display else "inline"
    return f'<math xmlns="{MATHML_NS}" display="{mode}"><mtext>{html.escape(clean(text))}</mtext></math>'


def latex_to_mathml(source: str, *, display: bool = False) -> str:
    """``source`` (LaTeX, untrusted) as a ``<math>`` element: safe to put in a page as it is."""
    text = clean(source).strip()
    if not text or len(text) > MAX_SOURCE or _depth(text) > MAX_DEPTH:
        return plain_math(text[:MAX_SOURCE] + ("…" if len(text) > MAX_SOURCE else ""), display=display)
    try:
        from latex2mathml.converter import convert

        made = convert(_MATHRM.sub(r"\\text{\1}", text), display="block" if display else "inline")
    except Exception:  # noqa: BLE001 - the converter fails many ways (unknown command, braces, recursion): text
        return plain_math(text, display=display)
    rebuild = _Rebuild()
    rebuild.feed(made)
    out = rebuild.result()
    return out if out.startswith("<math") else plain_math(text, display=display)


_MATHRM = re.compile(r"\\mathrm\{([^{}\\]*)\}")  # latex2mathml sets \mathrm{C} italic; \text{C} is upright
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
