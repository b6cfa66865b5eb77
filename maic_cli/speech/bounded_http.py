"""One speech request over HTTP, bounded: a total deadline and a byte cap checked as the answer streams.

:func:`post` is what maic's own OpenAI-compatible client sends (``speech/openai_speech.py``): the standard
library's ``http.client`` (which never follows a redirect), with

* one deadline for the whole exchange — connecting, the first byte and the last — enforced by a timer that
  shuts the socket down when it passes (a server that drips one byte every few seconds is cut off at the
  deadline, not once per byte);
* at most ``max_bytes`` read, checked chunk by chunk as the answer arrives (a ``Content-Length`` over the cap
  is refused before anything is read); an error answer is read to 4 KiB;
* an answer that says it is text (``text/html``, JSON, XML) refused as not audio, and one compressed in
  transit (``Content-Encoding: gzip``: a few MB can unpack to gigabytes) refused: none is asked for.

The URL credentials of ``--voice-api-base`` are taken out of the URL (:func:`split_credentials`) and sent
as basic auth; every secret a request sends, whatever its length, is redacted from every line said while it
is under way (:func:`sent_secrets`, untrusted.py ``secrets_in_use``).
"""

from __future__ import annotations

import base64
import http.client
import json
import socket
import threading
import time
from dataclasses import dataclass
from urllib.parse import quote, unquote, urlsplit, urlunsplit

from .port import SpeechError

DEADLINE_SECONDS = 60.0  # one sentence: connecting, waiting and reading, all told
CONNECT_SECONDS = 10.0
ERROR_BYTES = 4096
_TEXT_TYPES = ("text/", "application/json", "application/xml", "application/xhtml", "application/javascript",
               "application/problem")


@dataclass(frozen=True)
class Answer:
    status: int
    content_type: str
    data: bytes


def split_credentials(url: str) -> tuple[str, tuple[str, str] | None]:
    """``url`` without its ``user:password@`` part, and that pair (``None``: none given)."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url, None
    userinfo, _, hostport = parts.netloc.rpartition("@")
    user, _, password = userinfo.partition(":")
    return urlunsplit((parts.scheme, hostport, parts.path, parts.query, parts.fragment)), (unquote(user),
                                                                                          unquote(password))


def basic_auth(pair: tuple[str, str]) -> str:
    return "Basic " + base64.b64encode(f"{pair[0]}:{pair[1]}".encode()).decode("ascii")


def sent_secrets(*values: str | None) -> set[str]:
    """Each secret as sent and as an echo may show it (JSON-escaped, percent-encoded), any length."""
    found: set[str] = set()
    for value in values:
        if value:
            found.update({value, json.dumps(value)[1:-1], quote(value, safe="")})
            if value.startswith(("Bearer ", "Basic ")):
                found.add(value.split(" ", 1)[1])
    return {form for form in found if form.strip()}


def is_text_type(content_type: str) -> bool:
    """An answer that says it is a page or a message, not audio."""
    kind = content_type.split(";")[0].strip().lower()
    return kind.startswith(_TEXT_TYPES) or kind.endswith(("+json", "+xml", "/html"))


def is_encoded(content_encoding: str) -> str:
    """The compression a ``Content-Encoding`` names (``""``: none)."""
    kind = content_encoding.strip().lower()
    return "" if kind in ("", "identity") else kind[:20]


def shown(url: str) -> str:
    """The server as a line may name it: scheme, host, port and path, no user, password or query."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc.rpartition("@")[2], parts.path, "", ""))


def post(url: str, body: bytes, headers: dict[str, str], *, engine: str, max_bytes: int,
         seconds: float | None = None) -> Answer:
    """POST ``body`` to ``url``; the answer (status, content type, at most ``max_bytes``), all within
    ``seconds``; :class:`SpeechError` (one line) if the server cannot be reached, is too slow or too large."""
    seconds = DEADLINE_SECONDS if seconds is None else seconds
    parts = urlsplit(url)
    where = shown(url).split("/audio/")[0]
    connection_class = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    deadline = time.monotonic() + seconds
    try:
        connection = connection_class(parts.hostname or "", parts.port, timeout=min(CONNECT_SECONDS, seconds))
    except (ValueError, http.client.HTTPException) as exc:
        raise SpeechError(engine, f"cannot reach {where}: {exc}") from None
    expired = threading.Event()

    def cut() -> None:
        expired.set()
        sock = connection.sock
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    timer = threading.Timer(seconds, cut)
    timer.daemon = True
    timer.start()
    try:
        path = urlunsplit(("", "", parts.path or "/", parts.query, ""))
        connection.request("POST", path, body=body, headers=headers)
        if connection.sock is not None:
            connection.sock.settimeout(max(0.01, deadline - time.monotonic()))
        response = connection.getresponse()
        ok = 200 <= response.status < 300
        limit = max_bytes if ok else ERROR_BYTES
        content_type = response.getheader("Content-Type") or ""
        if ok and is_text_type(content_type):
            raise SpeechError(engine, f"{where} answered {content_type.split(';')[0][:60]}, not audio")
        encoding = is_encoded(response.getheader("Content-Encoding") or "")
        if ok and encoding:
            raise SpeechError(engine, f"{where} answered {encoding}-compressed audio, which is not read (asked for "
                              "none: a small compressed answer can unpack to gigabytes)")
        length = response.getheader("Content-Length") or ""
        if ok and length.isdigit() and int(length) > max_bytes:
            raise SpeechError(engine, f"the audio is larger than {max_bytes // 2**20} MiB")
        data = _read(response, limit, deadline, truncate=not ok)
        if expired.is_set():
            raise TimeoutError("deadline")
        if ok and len(data) > max_bytes:
            raise SpeechError(engine, f"the audio is larger than {max_bytes // 2**20} MiB")
        return Answer(response.status, content_type, data)
    except ValueError as exc:  # a header or a host that cannot be sent (never echoed: it may hold a secret)
        raise SpeechError(engine, f"cannot send the request to {where} ({type(exc).__name__})") from None
    except (OSError, http.client.HTTPException) as exc:
        if expired.is_set() or time.monotonic() >= deadline:
            raise SpeechError(engine, f"{where} did not answer in full within {seconds:g} s") from None
        reason = getattr(exc, "reason", None) or exc.strerror or exc if isinstance(exc, OSError) else exc
        raise SpeechError(engine, f"cannot reach {where}: {reason}") from None
    finally:
        timer.cancel()
        connection.close()


def _read(response: http.client.HTTPResponse, limit: int, deadline: float, *, truncate: bool) -> bytes:
    chunks: list[bytes] = []
    total = 0
    while True:
        if time.monotonic() >= deadline:
            raise TimeoutError("deadline")
        chunk = response.read1(65536)
        if not chunk:
            return b"".join(chunks)
        total += len(chunk)
        chunks.append(chunk)
        if total > limit:
            data = b"".join(chunks)
            return data[:limit] if truncate else data
