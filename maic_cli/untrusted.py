"""Untrusted text: what a file, a provider or a model wrote is data, never terminal commands.

:func:`clean` is applied to every such string before it is printed or written to a
report.  It removes terminal control sequences — CSI, OSC, DCS, SOS, PM, APC (7-bit and
8-bit forms), other escapes, a lone ESC, and every C0/C1 control except newline and
tab.  A string sequence (OSC, DCS …) ends at BEL, ST or the end of the line, so an
unterminated one cannot swallow the lines after it.  Characters that change text
direction or are invisible (bidi overrides and isolates, zero-width space, BOM, soft
hyphen, tag characters …) are shown as ``<U+202E>``, not obeyed; a lone surrogate (which no
file or terminal can encode) becomes U+FFFD.  Exceptions keep
text whole where these characters are part of writing: a zero-width joiner between two
pictographs (woman + ZWJ + school is the teacher emoji), a zero-width (non-)joiner
between two letters of a script that needs it (Persian, Hindi …), the tag characters of
a subdivision flag (Scotland's), and one variation selector after a character (a run
of them can only hide data).  Elsewhere — inside a Latin word, say — they only hide a
difference, so they are shown.  Every pattern is a
plain regular expression without nested repetition, so cleaning is linear in the
length of the text.

:func:`markdown_text` makes such text inert in Markdown (and the HTML a Markdown viewer passes
through): for report.md, which any viewer may render.

:func:`redact` removes API keys (values of the provider key variables, keys the
process registered, ``sk-…`` tokens) from provider error text, and the credentials in use
(:func:`secrets_in_use`: an LRS's token, password, user:password pair and its base64) at
any length — a short one only where it stands alone, not inside a longer word.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Callable, Iterable, Iterator
from contextvars import ContextVar
from functools import lru_cache

# -- terminal control sequences -------------------------------------------------------------

_STRING_BODY = r"[^\x00-\x08\x0a-\x1f\x7f-\x9f]*"  # printable text and tab: ends at any control
_ESCAPES = re.compile(
    r"(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])" + _STRING_BODY + r"(?:\x07|\x1b\\|\x9c)?"  # OSC DCS SOS PM APC
    r"|(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"  # CSI
    r"|\x1b[ -/]*[0-~]?"  # any other escape, and a lone ESC
)
_SEQUENCE_START = re.compile(r"[\x1b\x90\x98\x9b\x9d\x9e\x9f]")
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_SURROGATES = re.compile("[\ud800-\udfff]")  # a lone half of a pair (a JSON "\\ud800" escape): not encodable

# -- invisible and direction-changing characters ----------------------------------------------

_PICTOGRAPHS = ("\u00a9\u00ae\u203c\u2049\u2122\u2139\u2194-\u2199\u21a9\u21aa\u231a\u231b\u2328\u23cf"
                "\u23e9-\u23f3\u23f8-\u23fa\u24c2\u25aa\u25ab\u25b6\u25c0\u25fb-\u25fe\u2600-\u27bf"
                "\u2934\u2935\u2b05-\u2b07\u2b1b\u2b1c\u2b50\u2b55\u3030\u303d\u3297\u3299"
                "\U0001f000-\U0001faff")
# Scripts written with zero-width (non-)joiners: Arabic (Persian, Urdu …) and the Indic scripts.
_JOINING_SCRIPTS = "\u0600-\u06ff\u0750-\u077f\u08a0-\u08ff\u0900-\u0dff\ufb50-\ufdff\ufe70-\ufefc"
_SELECTORS = "\ufe00-\ufe0f\U000e0100-\U000e01ef"
_INVISIBLE = ("\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\u3164\ufeff"
              "\uffa0\ufff9-\ufffb\U000e0001\U000e0020-\U000e007f")
_SHOWN = re.compile(
    "(?P<keep>\U0001f3f4[\U000e0030-\U000e0039\U000e0061-\U000e007a]{2,7}\U000e007f"  # a subdivision flag
    f"|(?<=[{_PICTOGRAPHS}\ufe0f])\u200d(?=[{_PICTOGRAPHS}])"  # a joiner inside an emoji
    f"|(?<=[{_JOINING_SCRIPTS}])[\u200c\u200d](?=[{_JOINING_SCRIPTS}]))"  # inside a Persian or Hindi word
    f"|(?<=[{_SELECTORS}])[{_SELECTORS}]"  # a second variation selector in a row
    f"|[{_INVISIBLE}]"
)
# The end of a piece that may still change meaning when the next piece arrives.
_UNFINISHED_JOIN = re.compile("[\u200c\u200d]\\Z|\U0001f3f4[\U000e0020-\U000e007e]{0,7}\\Z")


def _show(match: re.Match[str]) -> str:
    if match.group("keep"):
        return match.group(0)
    return "".join(f"<U+{ord(char):04X}>" for char in match.group(0))


def _strip_controls(text: str) -> str:
    text = _CONTROLS.sub("", _ESCAPES.sub("", text))
    return text if text.isascii() else _SURROGATES.sub("\ufffd", text)


def _show_invisible(text: str) -> str:
    return text if text.isascii() else _SHOWN.sub(_show, text)


def clean(text: str) -> str:
    """``text`` without terminal control sequences, with invisible characters made visible."""
    return _show_invisible(_strip_controls(text))


def one_line(text: str) -> str:
    """:func:`clean`, and line breaks become spaces: for error lines quoting untrusted text."""
    return clean(text).replace("\n", " ")


_MD_HTML = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
_MD_MARKUP = re.compile(r"[\\`]|\](?=[(\[:])")


def markdown_text(text: str) -> str:
    """:func:`one_line`, inert in Markdown: HTML and entities escaped (no tag, no script, no autolink),
    backslashes and backticks escaped (no code span), and a ``]`` that would end a link text or a
    link label escaped (no link, no reference definition).  A table cell's ``|`` is the caller's."""
    text = one_line(text)
    if any(char in text for char in "&<>"):
        text = "".join(_MD_HTML.get(char, char) for char in text)
    return _MD_MARKUP.sub(lambda match: "\\" + match.group(), text)


class StreamCleaner:
    """:func:`clean` for text that arrives in pieces: an escape sequence, a joiner or a flag
    split across pieces is held back until the next piece decides it (at most
    ``HOLD_LIMIT`` characters), so the pieces clean exactly as the whole would."""

    HOLD_LIMIT = 256

    def __init__(self) -> None:
        self._raw = ""  # the start of an escape sequence that may continue
        self._held = ""  # a joiner or flag that may continue
        self._before = ""  # the last character shown: what the next one is joined to

    def feed(self, text: str) -> str:
        data = self._raw + text
        cut = _escape_start(data, self.HOLD_LIMIT)
        self._raw = data[cut:]
        return self._show(_strip_controls(data[:cut]), final=False)

    def flush(self) -> str:
        raw, self._raw = self._raw, ""
        shown = self._show(_strip_controls(raw), final=True)
        self._before = ""  # the next message starts afresh
        return shown

    def _show(self, text: str, *, final: bool) -> str:
        data = self._held + text
        cut = len(data)
        if not final:
            unfinished = _UNFINISHED_JOIN.search(data, max(0, len(data) - 9))
            cut = unfinished.start() if unfinished else cut
        done, self._held = data[:cut], data[cut:]
        if not done:
            return ""
        before, self._before = self._before, done[-1]
        return _show_invisible(before + done)[len(_show_invisible(before)):]


def _escape_start(data: str, limit: int) -> int:
    """Where an escape sequence that the next piece may continue starts (else ``len(data)``)."""
    starts = [m.start() for m in _SEQUENCE_START.finditer(data, max(0, len(data) - limit))]
    if starts:
        match = _ESCAPES.match(data, starts[-1])
        if match is None or match.end() == len(data):
            return starts[-1]
    return len(data)


# -- secrets --------------------------------------------------------------------------------

PROVIDER_KEY_VARIABLES = (
    "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "GROQ_API_KEY",
    "MISTRAL_API_KEY", "DEEPSEEK_API_KEY", "HOSTED_VLLM_API_KEY", "AZURE_API_KEY", "AZURE_OPENAI_API_KEY",
    "OPENROUTER_API_KEY", "TOGETHERAI_API_KEY", "COHERE_API_KEY", "XAI_API_KEY", "FIREWORKS_AI_API_KEY",
    "PERPLEXITYAI_API_KEY", "HUGGINGFACE_API_KEY", "HF_TOKEN", "REPLICATE_API_KEY", "CEREBRAS_API_KEY",
    "NVIDIA_NIM_API_KEY", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
)
"""Where provider keys live; any other ``*_API_KEY`` variable is treated as a key too."""

REDACTED = "[redacted]"
MIN_SECRET_LENGTH = 8  # shorter values would blank out ordinary words
_SK_TOKEN = re.compile(r"\bsk-[A-Za-z0-9_\-]{16,}")
_registered: set[str] = set()


_in_use: ContextVar[frozenset[str]] = ContextVar("maic_secrets_in_use", default=frozenset())


def register_secret(value: str | None) -> None:
    """A key given explicitly (``api_key=…``, a router file): redact it from now on."""
    if value and len(value) >= MIN_SECRET_LENGTH:
        _registered.add(value)


@contextlib.contextmanager
def secrets_in_use(values: Iterable[str]) -> Iterator[None]:
    """Within: every one of ``values`` is redacted, whatever its length (what a request sends: a token,
    a password, the basic-auth pair and its base64).  Scoped, so a short one blanks nothing after."""
    token = _in_use.set(_in_use.get() | {value for value in values if value})
    try:
        yield
    finally:
        _in_use.reset(token)


def _secrets() -> tuple[str, ...]:
    names = set(PROVIDER_KEY_VARIABLES) | {name for name in os.environ if name.endswith("_API_KEY")}
    values = {os.environ.get(name) or "" for name in names} | _registered
    found = {v for v in values if len(v) >= MIN_SECRET_LENGTH} | _in_use.get()
    return tuple(sorted(found, key=lambda v: (-len(v), v)))


def _alone(secret: str) -> str:
    """A short secret matches only where it stands alone (not inside a longer word); a long one anywhere."""
    escaped = re.escape(secret)
    if len(secret) >= MIN_SECRET_LENGTH:
        return escaped
    return rf"(?<![A-Za-z0-9]){escaped}(?![A-Za-z0-9])"


@lru_cache(maxsize=8)
def _secret_pattern(secrets: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile("|".join([*map(_alone, secrets), _SK_TOKEN.pattern]))


def redactor() -> Callable[[str], str]:
    """:func:`redact` for many strings: the keys in use are looked up once."""
    pattern = _secret_pattern(_secrets())
    return lambda text: pattern.sub(REDACTED, text)


def redact(text: str) -> str:
    """``text`` with every known key and every ``sk-…`` token replaced by ``[redacted]``."""
    return redactor()(text)
