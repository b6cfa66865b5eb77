"""Junk in a model's text: e-mail addresses, URLs, file paths, hashes and random tokens.

A 135M model drew ``#20f3ab5aef…-shakir@yahoo.com/changetexts (A) wiBwLlGvMn…`` on the
board and opened an answer with a home folder path: text no teacher says.  This module
finds such spans (pure, linear-time regular expressions, no nested repetition) and
makes them inert.

* :func:`find_junk` lists the spans, each with its kind;
* :func:`first_junk` is where the first one starts (small models' replies are cut before
  the sentence that holds it, engine/agent_reply.py);
* :func:`make_inert` rewrites what a terminal, a Markdown viewer or a browser would turn
  into a link, whatever the model: ``https://a.org/x`` → ``https[:]//a[.]org/x``,
  ``ana@b.com`` → ``ana[at]b[.]com``, ``www.x.org`` → ``www[.]x[.]org`` (the usual
  "defanged" form: still readable, never clickable, and no Markdown or HTML markup —
  the exports escape markup themselves).  Paths, hashes and tokens open nothing, so
  they are left as they are for hosted models (small models never show them at all).

Ordinary teaching prose is not junk: fractions (3/4, km/h), times (10:30), decimals,
formulas (C6H12O6, E=mc^2), code (``for i in range(3):``, ``os.path.join``, camelCase
names) and file names (``hello.py``).  tests/test_junk.py measures that on a list of
such sentences.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

JunkKind = Literal["url", "email", "path", "hash", "token"]

# A longer word is read in pieces of this size: some patterns backtrack within a piece (quadratic in
# it), so bounded pieces keep the whole scan linear; a longer URL is still caught by its head.
MAX_WORD = 256

_URL = r"(?:\b[a-z][a-z0-9+.-]{1,15}://|\bwww\.)[^\s<>\"'`]+"
_TLDS = "com|org|net|edu|gov|io|xyz|biz|ru|cn|uk"
_DOMAIN = rf"(?<![\w.-])[a-z0-9][a-z0-9-]*(?:\.[a-z0-9-]+)*\.(?:{_TLDS})\b(?![(\w])(?:/[^\s<>\"'`]*)?"
_EMAIL = r"(?<![\w.+-])[\w.+-]{1,64}@[\w-]+(?:\.[\w-]+)+"
# (email and domain start only where their run starts: a long run is scanned once, not once a character)
# A path starts at a root (/ ~/ ./ ../ or a drive letter) and has two segments or more.
_PATH = r"(?<![\w/.:])(?:~|\.{1,2})?/[^\s/]+(?:/[^\s/]*)+|\b[a-z]:\\[^\s]+"
_HASH = (r"(?<![\w-])#?(?:[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}"  # a UUID
         r"|(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{10,})(?![\w-])")  # a hex digest: digits and letters
_WORD = r"[A-Za-z0-9+/=_-]{8,}"
# A web query (``/date?id=…``, ``index.php?page=2``) and the head of a UUID cut short (``f7b8c64e-5d93-…``):
# both seen in the offline model's speech, neither in teaching prose.
_QUERY = r"[\w./-]*\?[a-z_][\w-]*=[^\s]*"
_UUID_HEAD = r"(?<![\w-])(?=[0-9a-f]{0,7}[a-f])[0-9a-f]{8}-[0-9a-f]{4}-"

_PATTERNS: tuple[tuple[JunkKind, re.Pattern[str]], ...] = (
    ("email", re.compile(_EMAIL, re.IGNORECASE)),
    ("url", re.compile(_URL, re.IGNORECASE)),
    ("url", re.compile(_DOMAIN, re.IGNORECASE)),
    ("path", re.compile(_PATH, re.IGNORECASE)),
    ("hash", re.compile(_HASH, re.IGNORECASE)),
    ("path", re.compile(_QUERY, re.IGNORECASE)),  # a query string: its address part may be cut off
    ("hash", re.compile(_UUID_HEAD, re.IGNORECASE)),
    ("token", re.compile(_WORD)),
)
_WORDS = re.compile(rf"\S{{1,{MAX_WORD}}}")
_LINK = re.compile(rf"://[^\s/]|^www\.[^\s.]|\.(?:{_TLDS})\b", re.IGNORECASE)
_TRAILING = ".,;:!?)]}'\"”’…"
_HUMPS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_FORMULA = re.compile(r"(?:[A-Z][a-z]?\d*)+")  # C12H22O11: a chemical formula, not a token


@dataclass(frozen=True)
class Junk:
    kind: JunkKind
    start: int
    end: int
    text: str


def _random_token(word: str) -> bool:
    """A word that reads as random letters: many short upper/lower/digit humps (``wiBwLlGvMn``,
    ``a8F3kQ9zX``), unlike camelCase names (``getElementById``), formulas or plain words."""
    core = word.strip("+/=_-")
    if len(core) < 8 or _FORMULA.fullmatch(core) or (core.isalpha() and (core.islower() or core.isupper())):
        return False
    if core.isdigit() or "_" in core or "-" in core:
        return False
    humps = _HUMPS.findall(core)
    if len(humps) < 4:
        return False
    mean = sum(len(h) for h in humps) / len(humps)
    return mean < 3 or (len(core) >= 20 and any(c.isdigit() for c in core) and mean < 5)


def _word_junk(word: str, offset: int) -> list[Junk]:
    found: list[Junk] = []
    for kind, pattern in _PATTERNS:
        for match in pattern.finditer(word):
            start, end = match.span()
            if kind == "token" and not _random_token(match.group()):
                continue
            if kind in ("url", "path"):
                while end > start and word[end - 1] in _TRAILING:
                    end -= 1  # the sentence's own punctuation is not part of it
                if kind == "url" and not _LINK.search(word[start:end]):
                    continue  # "www" or "https://" and nothing more: no address left
            if end <= start or any(start < j.end - offset and j.start - offset < end for j in found):
                continue
            found.append(Junk(kind, offset + start, offset + end, word[start:end]))
    return found


def find_junk(text: str) -> list[Junk]:
    """The junk spans in ``text``, in order, not overlapping (linear: each word is read alone, in
    pieces of at most ``MAX_WORD`` characters, and none of these kinds holds a space)."""
    found: list[Junk] = []
    for word in _WORDS.finditer(text):
        found += sorted(_word_junk(word.group(), word.start()), key=lambda j: j.start)
    return found


def has_junk(text: str) -> bool:
    return bool(find_junk(text))


def first_junk(text: str) -> int | None:
    """Where the first junk span of ``text`` starts (``None``: no junk)."""
    found = find_junk(text)
    return found[0].start if found else None


_DOTS = re.compile(r"\[\.\]|\.")  # a dot, or one already bracketed (kept: defanging twice changes nothing)


def _defang(word: str) -> str:
    """A word that holds a link or an address, with nothing left a viewer could link: every ``://``,
    ``@`` and ``.`` in it (but its closing punctuation) bracketed; a defanged word stays as it is."""
    body = word.rstrip(_TRAILING)
    inert = _DOTS.sub("[.]", body.replace("://", "[:]//").replace("@", "[at]"))
    return inert + word[len(body):]


_AT = re.compile(r"[\w.+-]@[\w-]")
_SPACES = re.compile(r"\S+")
# What every link and address holds: ``://``, ``www.`` or an ``@`` between word characters (the markers),
# or else a dot before a top-level domain (what _DOMAIN needs; _URL needs a marker, _EMAIL the ``@``).
_TLD_DOT = re.compile(rf"\.(?:{_TLDS})", re.IGNORECASE)


def _has_marker(text: str) -> bool:
    return "://" in text or "www." in text.lower() or _AT.search(text) is not None


def _has_link(word: str) -> bool:
    """Whether a whole word (of any length) holds a URL, a domain or an address: its markers, or a
    link found in overlapping windows of ``MAX_WORD`` (one straddling two pieces is seen too)."""
    if _has_marker(word):
        return True
    if _TLD_DOT.search(word) is None:  # no marker and no dot before a domain: no pattern below can match
        return False
    return any(j.kind in ("url", "email") for i in range(0, len(word), MAX_WORD)
               for j in _word_junk(word[max(0, i - 32):i + MAX_WORD], 0))


def make_inert(text: str) -> str:
    """``text`` with every word that holds a URL, a domain or an e-mail address defanged (see the
    module doc; the whole word, so no part of it stays a link)."""
    if not _has_marker(text) and _TLD_DOT.search(text) is None:  # what no word of it holds, the text lacks
        return text
    out, last = [], 0
    for word in _SPACES.finditer(text):
        if _has_link(word.group()):
            out += [text[last:word.start()], _defang(word.group())]
            last = word.end()
    return "".join(out) + text[last:] if out else text


# -- board text a small model may draw ------------------------------------------------------

_TERMS = re.compile(r"(?<!\\)\b[^\W_]+\b")  # words and numbers; LaTeX commands (\frac) are markup, not words
GROUNDED_SHARE = 0.8  # of a drawing's words found in its sources (a plural or a joining word may differ)


def drawn_text(params: dict[str, object]) -> str:
    """Every string an action's ``params`` would put on the board (nested lists included; ids excluded)."""
    parts: list[str] = []

    def walk(value: object, depth: int) -> None:
        if depth > 4 or len(parts) > 200:
            return
        if isinstance(value, str):
            parts.append(value)
        elif isinstance(value, list):
            for item in value[:100]:
                walk(item, depth + 1)
        elif isinstance(value, dict):
            for key, item in list(value.items())[:50]:
                if key not in ("elementId", "lineId", "endLineId", "shape", "chartType", "language", "operation"):
                    walk(item, depth + 1)

    walk(params, 0)
    return "\n".join(parts)


def terms(text: str) -> set[str]:
    return {t.lower() for t in _TERMS.findall(text[:20_000])}


def drawn_from(drawn: str, sources: str) -> bool:
    """Whether board text ``drawn`` comes from ``sources`` (the agent's speech, the learner's
    message, the lesson): at least ``GROUNDED_SHARE`` of its words are there, and it holds no junk."""
    if has_junk(drawn):
        return False
    words = terms(drawn)
    if not words:
        return True  # symbols only ("=", "→"): nothing invented
    known = terms(sources)
    return sum(w in known for w in words) >= GROUNDED_SHARE * len(words)


def inert_params(value: object, depth: int = 0) -> object:
    """An action's params with every string made inert (ids too: an id is never a link)."""
    if isinstance(value, str):
        return make_inert(value)
    if depth > 6:
        return value
    if isinstance(value, list):
        return [inert_params(v, depth + 1) for v in value]
    if isinstance(value, dict):
        return {k: inert_params(v, depth + 1) for k, v in value.items()}
    return value
