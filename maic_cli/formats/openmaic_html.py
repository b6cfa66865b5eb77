"""A text box's HTML from an OpenMAIC classroom, read as paragraphs and list items in time linear in its length.

The HTML came in a zip from anyone.  CPython's ``html.parser`` is no place for it: it raises an
``AssertionError`` on a marked section it does not know (``<![<![``) and rescans an unfinished tag from each
``<`` (a box of ``<a`` × 50,000 takes 5 s, of ``<a <`` × 25,000 a minute).  Here one pass, as a browser's
tokenizer reads it, never going back: text, start and end tags (a quoted attribute value runs to its closing
quote; a tag, comment or quote the input ends inside is dropped with the rest, as a browser drops it),
comments, and ``<!…>`` / ``<?…>`` / ``</ …>`` as bogus comments to the next ``>``; ``script`` and ``style``
are raw text to their end tag and dropped.  A ``<`` that starts nothing is text.  Character references are
decoded (``html.unescape``).  Only tags that break a line matter: ``p``, ``li``, ``div``, headings, ``br`` and
``tr``.
"""

from __future__ import annotations

import re
from html import unescape

MAX_HTML = 100_000  # characters of one text box's HTML that are read

_TAG = re.compile(r"<(/?)([A-Za-z][^\s/>]*)")
_ATTRIBUTES = re.compile(r"""(?:[^>"']++|"[^"]*+"|'[^']*+')*+>""")  # possessive: one pass, no going back
_BREAKS = frozenset({"p", "li", "div", "h1", "h2", "h3", "h4", "h5", "h6", "br", "tr"})
_RAW = frozenset({"script", "style"})


def _tokens(html: str) -> list[tuple[str, str]]:
    """``(text | start | end, value)`` of ``html`` (tag names lower-cased), in one pass."""
    out: list[tuple[str, str]] = []
    lower = html.lower()
    at, size = 0, len(html)
    while at < size:
        lt = html.find("<", at)
        if lt < 0:
            out.append(("text", html[at:]))
            break
        if lt > at:
            out.append(("text", html[at:lt]))
        tag = _TAG.match(html, lt)
        if tag is not None:
            rest = _ATTRIBUTES.match(html, tag.end())
            if rest is None:
                break  # the input ends inside the tag (or inside a quote of it): dropped with the rest
            name = tag.group(2).lower()
            at = rest.end()
            if tag.group(1):
                out.append(("end", name))
                continue
            out.append(("start", name))
            if name in _RAW:  # its text is raw to its end tag, and not shown
                close = lower.find(f"</{name}", at)
                if close < 0:
                    break
                at = close
            continue
        if html.startswith("<!--", lt):
            close = html.find("-->", lt + 4)
            if close < 0:
                break
            at = close + 3
        elif html.startswith(("<!", "<?", "</"), lt):  # a bogus comment, to the next ">"
            close = html.find(">", lt + 2)
            if close < 0:
                break
            at = close + 1
        else:
            out.append(("text", "<"))
            at = lt + 1
    return out


def html_blocks(html: str, keep_space: bool = False) -> list[tuple[str, str]]:
    """``(p | li, text)`` of each paragraph or list item of ``html``, in order (``keep_space``: as written, for
    code; else with runs of white space as one space)."""
    blocks: list[tuple[str, str]] = []
    kind: str | None = None
    buffer: list[str] = []

    def flush() -> None:
        raw = unescape("".join(buffer))
        joined = raw.rstrip().replace("\n", " ") if keep_space else " ".join(raw.split())
        if joined.strip():
            blocks.append((kind or "p", joined))
        buffer.clear()

    for token, value in _tokens(html[:MAX_HTML]):
        if token == "text":
            buffer.append(value)
        elif value in _BREAKS and not (token == "end" and value == "br"):
            flush()
            if token == "start":
                if value == "li":
                    kind = "li"
                elif value != "br":
                    kind = "li" if kind == "li" and value == "p" else "p"
            elif value == "li":
                kind = None
    flush()
    return blocks
