"""What a request's head must be before the server reads its body: the token, where a browser's page is, the
length and the encoding of the body — and the ``Expect: 100-continue`` answer that follows from them.

:func:`refusal_for_head` is the one place these are decided; the app's guard (serve/app.py) answers with what
it returns, and :func:`expect_continue` (every POST route's ``expect_handler``) invites a body with ``100
Continue`` only when nothing in the head refuses it, so a client waiting on 100 never uploads 30 MB, or any
byte without its token, to be refused.

- **The token**: exactly one ``Authorization: Bearer TOKEN`` header (two are ambiguous), compared in constant
  time as bytes (a header of bytes no token holds is a wrong token, never an error).
- **A browser's page**: a tokenless server listens on loopback only, where any web page the learner opens
  could post to it (or a DNS name rebound to 127.0.0.1 could) and spend the server's key.  A browser names the
  page in ``Origin`` on every POST; a page not on this machine is refused (403).  Other clients send none.
  Nor may a name that is not this machine's reach it (``Host``: a DNS name rebound to 127.0.0.1 would let a
  page read ``/v1/info`` and ``/metrics``, since a browser sends no ``Origin`` on its own GETs): a tokenless
  server answers only ``localhost``, 127.0.0.0/8 and ``::1`` (403).
- **The body**: past :data:`~.limits.MAX_BODY_BYTES` by its ``Content-Length`` (413), or compressed (415: a
  body is never inflated; 4 MB of gzip is 4 GB of zeros).
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from aiohttp import web

from .limits import MAX_BODY_BYTES
from .server import is_loopback

SERVE_TOKEN: web.AppKey[str | None] = web.AppKey("serve_token", str)
OPEN_PATHS = frozenset({"/healthz"})  # answered without a token (a load balancer's readiness probe)


@dataclass(frozen=True)
class HeadRefusal:
    status: int
    message: str
    close: bool = True  # the body is left unread: the connection closes with the answer
    headers: dict[str, str] = field(default_factory=dict)


def bearer_ok(request: web.Request, token: str) -> bool:
    given = request.headers.getall("Authorization", [])
    if len(given) != 1:
        return False
    scheme, _, value = given[0].partition(" ")
    offered = value.strip().encode("utf-8", "surrogateescape")
    return scheme.lower() == "bearer" and hmac.compare_digest(offered, token.encode())


def foreign_page(request: web.Request) -> str | None:
    """The ``Origin`` a browser named, when that page is not on this machine."""
    origin = request.headers.get("Origin")
    if origin is None:
        return None
    try:
        host = urlsplit(origin).hostname or ""
    except ValueError:  # an address no browser sends
        return origin
    return None if host and is_loopback(host) else origin


def foreign_host(request: web.Request) -> str | None:
    """The ``Host`` a request named, when it is not a name of this machine (``None``: no ``Host``, or ours)."""
    named = request.headers.get("Host")
    if named is None:
        return None
    try:
        host = urlsplit("//" + named.strip()).hostname or ""
    except ValueError:  # an address no client sends
        return named
    return None if host and is_loopback(host) else named


def refusal_for_head(request: web.Request) -> HeadRefusal | None:
    """Why the request is refused from its head alone (``None``: read its body)."""
    token = request.app[SERVE_TOKEN]
    if request.path not in OPEN_PATHS:
        if token is not None and not bearer_ok(request, token):
            return HeadRefusal(401, "missing or wrong bearer token", close=False,
                               headers={"WWW-Authenticate": "Bearer"})
        if token is None and (page := foreign_page(request)) is not None:
            return HeadRefusal(403, f"a web page at {page[:80]} may not use a tokenless server (set MAIC_SERVE_TOKEN)")
        if token is None and (named := foreign_host(request)) is not None:
            return HeadRefusal(403, f"Host {named[:80]} is not this machine: a tokenless server answers only "
                                    "localhost (set MAIC_SERVE_TOKEN to serve other names)")
    if request.content_length is not None and request.content_length > MAX_BODY_BYTES:
        return HeadRefusal(413, f"body of {request.content_length} bytes; the limit is {MAX_BODY_BYTES}")
    encoding = request.headers.get("Content-Encoding", "identity").strip().lower()
    if request.body_exists and encoding != "identity":
        return HeadRefusal(415, f"Content-Encoding {encoding[:40]}: send the body uncompressed")
    return None


async def expect_continue(request: web.Request) -> None:
    """``Expect: 100-continue``: ``100 Continue`` only for a body the server will read; otherwise nothing is
    sent and the guard answers the head's refusal at once.  Any other expectation is 417."""
    if request.headers.get("Expect", "").strip().lower() != "100-continue":
        raise web.HTTPExpectationFailed(text="only Expect: 100-continue is understood")
    if request.version >= (1, 1) and refusal_for_head(request) is None:
        await request.writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        request.writer.output_size = 0  # the answer proper has not started
