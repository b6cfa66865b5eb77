"""Text for a voice: what an agent wrote, made into words a speech engine reads aloud as a teacher would.

An engine reads what it is given: ``**`` as "asterisk asterisk", ``wb_3`` as "w b underscore three",
``https[:]//a[.]org`` letter by letter, ``$\\frac{3}{4}$`` as a dollar sign and a backslash.
:func:`for_speech` turns a sentence into speakable words:

* markup is dropped: Markdown emphasis, headings, bullets, tables, links (their text is kept), HTML tags
  and entities, fenced code (not read at all: a listing is for the eyes), inline code's punctuation;
* board element ids (``wb_3``), URLs, e-mail and file addresses, plain or made inert by maic
  (``https[:]//a[.]org``, ``ana[at]b[.]com``), become "the board" / "a link" / nothing;
* formulas are read as words: ``3/4`` "three quarters", ``x^2`` and ``x²`` "x squared", ``x^n`` "x to the
  power of n", ``=`` "equals", ``≤`` "is less than or equal to", ``√x`` "the square root of x", LaTeX's
  ``\\frac{a}{b}`` "a over b", ``\\alpha`` "alpha", ``$5`` "5 dollars", ``50%`` "50 percent";
* emoji and other symbols are dropped; whitespace is one space.

The result holds letters, digits, spaces and sentence punctuation only (``. , ; : ! ? ' " ( ) -``), so
applying it twice changes nothing (tests/test_speech_normalize.py checks both with hypothesis).  Every
pattern is a plain regular expression without nested repetition, on a bounded input.
"""

from __future__ import annotations

import html
import re
import unicodedata

from ..untrusted import clean

MAX_INPUT = 8000  # characters of one sentence looked at
MAX_SPOKEN = 4000  # characters handed to an engine (OpenAI's speech input takes 4096)

_SMALL = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"]
_PARTS = {2: ("half", "halves"), 3: ("third", "thirds"), 4: ("quarter", "quarters"), 5: ("fifth", "fifths"),
          6: ("sixth", "sixths"), 7: ("seventh", "sevenths"), 8: ("eighth", "eighths"), 9: ("ninth", "ninths"),
          10: ("tenth", "tenths")}
_SUPERSCRIPTS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻ⁿ", "0123456789+-n")
_SUBSCRIPTS = str.maketrans("₀₁₂₃₄₅₆₇₈₉", "0123456789")
_LATEX_WORDS = {
    "times": " times ", "cdot": " times ", "div": " divided by ", "pm": " plus or minus ", "mp": " minus or plus ",
    "leq": " is less than or equal to ", "le": " is less than or equal to ", "geq": " is greater than or equal to ",
    "ge": " is greater than or equal to ", "neq": " is not equal to ", "ne": " is not equal to ",
    "approx": " is approximately ", "equiv": " is equivalent to ", "infty": " infinity ", "sum": " the sum of ",
    "int": " the integral of ", "prod": " the product of ", "lim": " the limit ", "to": " to ", "rightarrow": " to ",
    "in": " in ", "partial": " partial ", "nabla": " del ", "log": " log ", "ln": " l n ", "sin": " sine ",
    "cos": " cosine ", "tan": " tangent ", "degree": " degrees ", "circ": " degrees ", "ldots": " and so on ",
    "cdots": " and so on ", "dots": " and so on ",
}
_GREEK = ("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau "
          "upsilon phi chi psi omega").split()
_SYMBOLS = {
    "≤": " is less than or equal to ", "≥": " is greater than or equal to ", "≠": " is not equal to ",
    "≈": " is approximately ", "±": " plus or minus ", "×": " times ", "·": " times ", "÷": " divided by ",
    "∞": " infinity ", "→": " to ", "⇒": " implies ", "←": " from ", "∑": " the sum of ", "∫": " the integral of ",
    "∈": " in ", "°": " degrees ", "%": " percent ", "&": " and ", "@": " at ", "+": " plus ", "=": " equals ",
    "<": " is less than ", ">": " is greater than ", "√": " the square root of ", "∆": " delta ", "Δ": " delta ",
    "−": "-", "–": ", ", "—": ", ", "…": "...", "“": '"', "”": '"', "‘": "'", "’": "'",
}
_UNITS = {"km/h": "kilometres per hour", "m/s": "metres per second", "mph": "miles per hour",
          "m/s^2": "metres per second squared", "m/s²": "metres per second squared"}

_FENCE = re.compile(r"```[^`]*(?:```|$)|~~~[^~]*(?:~~~|$)")
_INLINE_CODE = re.compile(r"`([^`\n]{0,200})`")
_IMAGE_OR_LINK = re.compile(r"!?\[([^\]\n]{0,300})\]\([^)\s]{0,500}\)")
_TAG = re.compile(r"</?[A-Za-z][^<>\n]{0,300}>")
_ENTITY = re.compile(r"&(?:[A-Za-z]{2,10}|#\d{1,6}|#x[0-9A-Fa-f]{1,6});")
_URL = re.compile(r"\b[a-z][a-z0-9+.-]{1,15}(?:://|\[:\]//)\S+|\bwww(?:\.|\[\.\])\S+", re.IGNORECASE)
_EMAIL = re.compile(r"[\w.+-]{1,64}(?:@|\[at\])[\w-]{1,63}(?:(?:\.|\[\.\])[\w-]{1,63})+")
_INERT_DOT = re.compile(r"\b[\w-]+(?:\[\.\][\w-]+)+\S*")
_PATH = re.compile(r"(?<![\w.])(?:~|\.{1,2})?/(?:[\w.-]+/)+[\w.-]*|\b[A-Za-z]:\\\S+")
_ELEMENT = re.compile(r"\b(?:wb|el|elem|scene|slide)_[A-Za-z0-9_-]{1,40}\b")
_HEADING = re.compile(r"(?m)^[ \t]{0,3}(?:#{1,6}|>+|[-*+])[ \t]+")
_EMPHASIS = re.compile(r"(\*\*|__|~~)(?=\S)([^*_~\n]{1,300}?)(?<=\S)\1"
                       r"|(?<![\w*])\*(?=\S)([^*\n]{1,300}?)(?<=\S)\*(?!\w)")
_DISPLAY_MATH = re.compile(r"\$\$([^$]{1,2000})\$\$|\\\[(.{1,500}?)\\\]|\\\((.{1,500}?)\\\)", re.DOTALL)
_INLINE_MATH = re.compile(r"\$(?=[^\s$])([^$\n]{1,500}?)(?<=[^\s$])\$(?!\d)")
_DOLLARS = re.compile(r"\$(\d[\d,]*(?:\.\d+)?)")
_FRAC = re.compile(r"\\[dt]?frac\s*\{([^{}]{0,100})\}\s*\{([^{}]{0,100})\}")
_SQRT = re.compile(r"\\sqrt\s*\{([^{}]{0,100})\}")
_COMMAND = re.compile(r"\\([A-Za-z]{1,20})")
_POWER = re.compile(r"\^\s*(?:\{([^{}]{1,40})\}|(-?[A-Za-z0-9.]{1,10}))")
_SUB = re.compile(r"(?<=[A-Za-z0-9)])_(?:\{([^{}]{1,40})\}|([A-Za-z0-9]{1,10}))")
_NUM_FRAC = re.compile(r"(?<![\w/.])(\d{1,6})\s*/\s*(\d{1,6})(?![\w/]|\.\d)")
_LETTER_FRAC = re.compile(r"(?<![\w/])([A-Za-z]|\d{1,6}|\))\s*/\s*([A-Za-z]|\d{1,6}|\()(?![\w/]|\.\d)")
_MINUS = re.compile(r"(?<![\w-])-(?=\s*[\d(])|(?<=[\w)])\s+-\s+(?=[\w(])|(?<=\d)-(?=\d)")
_TIMES = re.compile(r"(?<=[\w)])\s*\*\s*(?=[\w(])")
_OPERATORS = re.compile(r"==|!=|<=|>=|->|=>|\+\+")
_OPERATOR_WORDS = {"==": " equals ", "!=": " is not equal to ", "<=": " is less than or equal to ",
                   ">=": " is greater than or equal to ", "->": " to ", "=>": " implies ", "++": " plus plus "}
_KEPT = re.compile(r"[^\w\s.,;:!?'\"()-]")
_SPACE_BEFORE_PUNCT = re.compile(r"\s+([.,;:!?])")
_REPEATED_PUNCT = re.compile(r"([.,;:!?])[.,;:!?]*")
_LONE_DASH = re.compile(r"(?<!\w)-+(?!\w)|(?<=\w)-+(?!\w)|(?<!\w)-+(?=\w)")
_EMPTY_BRACKETS = re.compile(r"\(\s*\)")
_SPACES = re.compile(r"\s+")
_LINE_END = re.compile(r"(?<=[\w)*`])[ \t]*\n\s*")


def fraction_words(numerator: int, denominator: int) -> str:
    """``3, 4`` → "three quarters"; ``1, 2`` → "one half"; beyond ten → "17 over 20"."""
    if 1 <= numerator <= 10 and denominator in _PARTS:
        singular, plural = _PARTS[denominator]
        return f"{_SMALL[numerator]} {singular if numerator == 1 else plural}"
    return f"{numerator} over {denominator}"


def _power(match: re.Match[str]) -> str:
    exponent = (match.group(1) or match.group(2) or "").strip()
    if exponent == "2":
        return " squared "
    if exponent == "3":
        return " cubed "
    return f" to the power of {exponent} "


def _latex(text: str) -> str:
    text = _FRAC.sub(lambda m: f" {m.group(1)} over {m.group(2)} ", text)
    text = _SQRT.sub(lambda m: f" the square root of {m.group(1)} ", text)

    def command(match: re.Match[str]) -> str:
        name = match.group(1)
        if name in _LATEX_WORDS:
            return _LATEX_WORDS[name]
        if name.lower() in _GREEK:
            return f" {name.lower()} "
        if name in ("left", "right", "big", "Big", "bigl", "bigr", "displaystyle", "mathrm", "text", "mathbf",
                    "operatorname", "quad", "qquad"):
            return " "
        return f" {name} "

    return _COMMAND.sub(command, text)


def _math(text: str) -> str:
    """A formula's symbols as words (inside ``$…$``, and wherever they stand in prose)."""
    text = _latex(text.replace("−", "-"))
    text = text.translate(_SUBSCRIPTS)
    text = re.sub(r"([⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻ⁿ]{1,6})", lambda m: "^{" + m.group(1).translate(_SUPERSCRIPTS) + "}", text)
    text = _POWER.sub(_power, text)
    text = _SUB.sub(lambda m: f" sub {m.group(1) or m.group(2)} ", text)
    text = _NUM_FRAC.sub(lambda m: " " + fraction_words(int(m.group(1)), int(m.group(2))) + " ", text)
    text = _LETTER_FRAC.sub(lambda m: f" {m.group(1)} over {m.group(2)} ", text)
    text = _OPERATORS.sub(lambda m: _OPERATOR_WORDS[m.group(0)], text)
    text = _TIMES.sub(" times ", text)
    text = _MINUS.sub(" minus ", text)
    return "".join(_SYMBOLS.get(ch, ch) for ch in text)


def _unicode_words(text: str) -> str:
    """Greek letters by name; mathematical, full-width and ligature letters as the letters they are; other
    symbols and emoji dropped; letters with accents kept."""
    out: list[str] = []
    for ch in text:
        if ch.isascii() or ch.isspace():
            out.append(ch)
            continue
        folded = unicodedata.normalize("NFKC", ch)
        if folded != ch and folded.isascii() and folded.isalnum():
            out.append(folded)  # 𝕳𝖊𝖑𝖑𝖔, Ｆｕｌｌ, ﬁ: the letters they are (an engine would spell out their names)
            continue
        category = unicodedata.category(ch)
        name = unicodedata.name(ch, "")
        if name.startswith("GREEK ") and " LETTER " in name:
            out.append(" " + name.rsplit(" ", 1)[-1].lower() + " ")
        elif category[0] in "LN" or category == "Mn":
            out.append(ch)
        elif category[0] == "P":
            out.append(" ")
        else:
            out.append(" ")  # emoji, arrows, box drawing, other symbols: nothing to say
    return "".join(out)


def for_speech(text: str) -> str:
    """One sentence (or a few) as words for a speech engine: no markup, no ids, no addresses, formulas read."""
    text = clean(text[:MAX_INPUT])
    text = _FENCE.sub(" ", text)
    text = _INLINE_CODE.sub(lambda m: " " + re.sub(r"[^\w\s+=<>*/^-]+", " ", m.group(1)) + " ", text)
    text = _IMAGE_OR_LINK.sub(lambda m: f" {m.group(1)} ", text)
    text = _TAG.sub(" ", text)
    text = _ENTITY.sub(lambda m: html.unescape(m.group(0)), text)
    text = _URL.sub(" a link ", text)
    text = _EMAIL.sub(" an e-mail address ", text)
    text = _INERT_DOT.sub(" a link ", text)
    text = _PATH.sub(" a file ", text)
    text = _ELEMENT.sub(" the board ", text)
    for unit, words in _UNITS.items():
        text = text.replace(unit, f" {words} ")
    text = _HEADING.sub(" ", text)
    text = _LINE_END.sub(". ", text)  # a heading or a bullet ends where its line does
    text = _EMPHASIS.sub(lambda m: m.group(2) or m.group(3) or "", text)
    text = _DISPLAY_MATH.sub(lambda m: " " + _math(m.group(1) or m.group(2) or m.group(3) or "") + " ", text)
    text = _INLINE_MATH.sub(lambda m: " " + _math(m.group(1)) + " ", text)
    text = _DOLLARS.sub(lambda m: f" {m.group(1)} dollars ", text)
    text = _math(text)
    text = _unicode_words(unicodedata.normalize("NFC", text))
    text = text.replace("|", ", ").replace("_", " ")
    text = _KEPT.sub(" ", text)
    text = _LONE_DASH.sub(" ", text)
    text = _EMPTY_BRACKETS.sub(" ", text)
    text = _SPACES.sub(" ", text).strip()
    text = _SPACE_BEFORE_PUNCT.sub(r"\1", text)
    text = _REPEATED_PUNCT.sub(r"\1", text)
    text = text.lstrip(".,;:!? ")
    if text.endswith((",", ";", ":")):
        text = text.rstrip(",;: ")
    if len(text) > MAX_SPOKEN:
        text = text[:MAX_SPOKEN].rsplit(" ", 1)[0]
    return text
