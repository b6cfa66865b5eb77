"""The bounds of a sentence said through litellm: one deadline, a byte cap as the answer streams, no redirect.

litellm's own ``timeout`` is per attempt and it retries; it reads a whole answer into memory before maic
sees it.  So maic hands litellm the HTTP client it calls through (``client=``): an ``httpx.Client`` whose
:class:`BoundedTransport`

* sends only to the origin the voice names (a request for another host is refused: the lesson's text never
  goes where a server redirects it), and answers no redirect (a 3xx ends the sentence);
* gives every request what is left of the sentence's deadline, and checks the deadline and the byte cap at
  every chunk of the body as it arrives (a drip or a flood is cut off, never held);
* refuses a success that says it is text (``text/html``): not audio; and any answer compressed in transit
  (httpx would unpack it whole, whatever it unpacks to): it asks for none.

The reason it stopped is kept in :attr:`BoundedTransport.problem`, since litellm and the OpenAI SDK turn
the error into their own ("Connection error").  :func:`bounded_client` builds the client litellm takes for
a provider (``openai``: an ``openai.OpenAI``; ``azure``: an ``openai.AzureOpenAI``; ``elevenlabs``:
litellm's ``HTTPHandler`` around it, made in speech/litellm_speech.py, the one speech module that imports
litellm); Gemini and Vertex, whose audio comes through litellm's completion bridge (which
takes no client), get ``None`` and only the overall deadline (speech/litellm_speech.py).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from typing import Any

import httpx

from .bounded_http import CONNECT_SECONDS, ERROR_BYTES, basic_auth, is_encoded, is_text_type

ORIGINS = {"openai": "https://api.openai.com/v1", "elevenlabs": "https://api.elevenlabs.io"}


def _origin(url: str | httpx.URL) -> tuple[str, str, int | None]:
    """Scheme, host (as httpx sends it: an IDN in punycode) and port."""
    parsed = httpx.URL(url) if isinstance(url, str) else url
    port = parsed.port or {"http": 80, "https": 443}.get(parsed.scheme)
    return parsed.scheme, parsed.host.lower(), port


class _Capped(httpx.SyncByteStream):
    def __init__(self, inner: httpx.SyncByteStream, owner: BoundedTransport, limit: int) -> None:
        self.inner = inner
        self.owner = owner
        self.limit = limit

    def __iter__(self) -> Iterator[bytes]:
        total = 0
        for chunk in self.inner:
            total += len(chunk)
            if total > self.limit:
                self.owner.stop(f"the audio is larger than {self.limit // 2**20} MiB")
                raise httpx.ReadError("over the cap")
            if time.monotonic() >= self.owner.deadline:
                self.owner.stop(f"no whole answer within {self.owner.seconds:g} s")
                raise httpx.ReadTimeout("deadline")
            yield chunk

    def close(self) -> None:
        self.inner.close()


class BoundedTransport(httpx.BaseTransport):
    """httpx's transport, bounded for one sentence to ``base`` (see the module's docstring)."""

    def __init__(self, base: str, *, seconds: float, max_bytes: int) -> None:
        self.inner = httpx.HTTPTransport(retries=0)
        self.origin = _origin(base)
        self.seconds = seconds
        self.deadline = time.monotonic() + seconds
        self.max_bytes = max_bytes
        self.problem: str | None = None
        self.requests = 0

    def stop(self, problem: str) -> None:
        self.problem = self.problem or problem

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.requests += 1
        if _origin(request.url) != self.origin:
            self.stop(f"refused to send the text to another host ({request.url.host})")
            raise httpx.ConnectError("another origin")
        left = self.deadline - time.monotonic()
        if left <= 0:
            self.stop(f"no whole answer within {self.seconds:g} s")
            raise httpx.ConnectTimeout("deadline")
        request.headers["Accept-Encoding"] = "identity"  # httpx would unzip whatever size it unpacks to
        request.extensions["timeout"] = {"connect": min(CONNECT_SECONDS, left), "read": left, "write": left,
                                         "pool": left}
        try:
            response = self.inner.handle_request(request)
        except httpx.TimeoutException:
            self.stop(f"no whole answer within {self.seconds:g} s")
            raise
        status = response.status_code
        kind = response.headers.get("content-type", "")
        length = response.headers.get("content-length", "")
        if 300 <= status < 400:
            response.close()
            self.stop(f"HTTP {status}: a redirect, not followed")
            raise httpx.ConnectError("redirect")
        ok = 200 <= status < 300
        if ok and is_text_type(kind):
            response.close()
            self.stop(f"the server answered {kind.split(';')[0][:60]}, not audio")
            raise httpx.ReadError("not audio")
        encoding = is_encoded(response.headers.get("content-encoding", ""))
        if encoding:  # an error answer too: httpx would unpack it whole
            response.close()
            self.stop(f"the server answered {encoding}-compressed, which is not read (asked for none)")
            raise httpx.ReadError("compressed")
        if ok and length.isdigit() and int(length) > self.max_bytes:
            response.close()
            self.stop(f"the audio is larger than {self.max_bytes // 2**20} MiB")
            raise httpx.ReadError("over the cap")
        stream = response.stream
        assert isinstance(stream, httpx.SyncByteStream)
        return httpx.Response(status, headers=response.headers,
                              stream=_Capped(stream, self, self.max_bytes if ok else ERROR_BYTES),
                              extensions=response.extensions)

    def close(self) -> None:
        self.inner.close()


def bounded_client(provider: str, api_base: str | None, auth: tuple[str, str] | None, *, seconds: float,
                   max_bytes: int, azure_version: str = "") -> tuple[Any, BoundedTransport] | None:
    """The client litellm is handed for ``provider`` and its transport (for ``elevenlabs`` the ``httpx.Client``
    that speech/litellm_speech.py wraps in litellm's handler); ``None`` for a provider whose answer goes through
    a client maic cannot hand it."""
    base: str | None
    if provider == "openai":
        base = (api_base or os.environ.get("OPENAI_BASE_URL") or os.environ.get("OPENAI_API_BASE")
                or ORIGINS["openai"])
    elif provider == "elevenlabs":
        base = api_base or ORIGINS["elevenlabs"]
    elif provider == "azure" and (api_base or os.environ.get("AZURE_API_BASE")):
        base = api_base or os.environ.get("AZURE_API_BASE")
    else:
        return None
    assert base is not None
    transport = BoundedTransport(base, seconds=seconds, max_bytes=max_bytes)
    http = httpx.Client(transport=transport, follow_redirects=False, timeout=httpx.Timeout(seconds))
    if provider == "elevenlabs":
        return http, transport
    if provider == "azure":
        from openai import AzureOpenAI

        version = os.environ.get("AZURE_API_VERSION") or azure_version
        azure_key = os.environ.get("AZURE_API_KEY") or os.environ.get("AZURE_OPENAI_API_KEY") or "no-key"
        # the SDK takes an httpx (legacy) client as well as its own httpx2 one
        azure = AzureOpenAI(api_key=azure_key, azure_endpoint=base, api_version=version,
                            http_client=http, max_retries=0, timeout=seconds)  # type: ignore[call-overload]
        return azure, transport
    from openai import OpenAI

    key = os.environ.get("OPENAI_API_KEY")
    headers = {"Authorization": basic_auth(auth)} if auth is not None and not key else None
    return OpenAI(api_key=key or "no-key", base_url=base, http_client=http,  # type: ignore[arg-type]
                  max_retries=0, timeout=seconds, default_headers=headers), transport
