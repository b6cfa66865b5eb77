"""``HttpTurns``: the thin client's :class:`~maic_cli.engine.round.TurnClient`, a turn asked of ``maic serve``.

``maic chat --server URL`` and ``maic run --server URL`` keep the class, the session file, the lesson
and the transcript where they are and send one ``POST /v1/turn`` per turn (serve/wire.py), with
``MAIC_SERVER_TOKEN`` as the bearer token.  The class's agents are sent with the turn (the server need
not know the client's persona files).  The server's model, prompt set and prompt variant play it.

A turn is *buffered*: its events (but ``thinking``, which changes nothing in the class and lets a view say
who is thinking) reach the runner only once its ``done`` has arrived, so a turn whose
connection fails before its first event, or whose instance dies mid-stream (a stream that ends before
``done``, a 502/503/504 from a load balancer, a timeout), is asked again (the turn is stateless) with
nothing half-said in the class; the ``done`` of a retried turn carries ``retried`` (the transcript
records it).  After :data:`DEFAULT_RETRIES` retries, or at once for any other 4xx/5xx (401: the token,
413: the class is too big, 422: a request this server cannot read), the turn is an ``error`` event and
a ``done`` that leaves the director where it was: one line, and the session survives, as for a
provider's error in process.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncGenerator, Mapping
from contextlib import aclosing, suppress
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import aiohttp
from aiohttp.http_exceptions import HttpProcessingError, LineTooLong

from ..engine.events import DoneEvent, ErrorEvent, Event
from ..engine.models import AgentConfig, DirectorState, TurnRequest
from ..errors import InputError
from ..untrusted import one_line, register_secret
from .wire import EVENT_CONTENT_TYPE, encode_request, read_event

if TYPE_CHECKING:
    from ..engine.policies import DirectorPolicy
    from ..engine.prompt_set import PromptSet
    from ..llm.port import LLMClient

DEFAULT_RETRIES = 3
RETRY_STATUS = frozenset({408, 502, 503, 504})  # a proxy with no live instance, a busy instance: ask again
CONNECT_TIMEOUT = 10.0
IDLE_TIMEOUT = 300.0  # seconds without a byte from the server before the attempt is given up (a long model call)
READ_BUFFER = 2**20  # a done event carries the director state: lines of up to ~2 MB
MAX_TURN_BYTES = 32 * 2**20  # what one turn's stream may hold before the client stops reading it


class _Retry(Exception):
    """This attempt failed in a way asking again may fix."""


class _Refused(Exception):
    """The server answered, and asking again will not change its answer."""


class HttpTurns:
    """Turns played on the ``maic serve`` instance (or load balancer) at ``url``."""

    def __init__(self, url: str, token: str | None = None, *, retries: int = DEFAULT_RETRIES,
                 backoff: float = 0.2, connect_timeout: float = CONNECT_TIMEOUT,
                 idle_timeout: float = IDLE_TIMEOUT) -> None:
        self.base = url.rstrip("/")
        self.endpoint = self.base + "/v1/turn"
        self.where = urlsplit(self.base).netloc or self.base  # how a line names the server (never the token)
        self._headers = {"Accept": EVENT_CONTENT_TYPE, "Content-Type": "application/json"}
        if token:
            self._headers["Authorization"] = f"Bearer {token}"
        self.retries = retries
        self.backoff = backoff
        self._timeout = aiohttp.ClientTimeout(total=None, connect=connect_timeout, sock_read=idle_timeout)
        self.retried = 0  # attempts asked again, over this client's life
        # The class named no director and the client no model (maic chat --server alone): the server's model
        # decides the default director, as it would in process; else the client's choice is sent.
        self.server_picks_director = False

    async def turn(self, request: TurnRequest, llm: LLMClient, registry: Mapping[str, AgentConfig] | None, *,
                   prompts: PromptSet | None, policy: DirectorPolicy | None) -> AsyncGenerator[Event, None]:
        """One turn on the server (``llm`` and ``prompts`` are the server's own there: not sent)."""
        if self.server_picks_director:
            request = request.model_copy(update={"config": request.config.model_copy(update={"director": None})})
        body = encode_request(with_agents(request, registry))
        failures = 0
        while True:
            events: list[Event] = []
            try:
                async with aclosing(self._attempt(body)) as attempt:
                    async for item in attempt:
                        if isinstance(item, list):
                            events = item
                        else:
                            yield item  # a thinking event, live: it changes nothing in the class
                break
            except _Retry as exc:
                failures += 1
                self.retried += 1
                if failures > self.retries:
                    for event in self._failed(request, f"{exc} (asked {failures} times)"):
                        yield event
                    return
                await asyncio.sleep(self.backoff * failures)
            except _Refused as exc:
                for event in self._failed(request, str(exc)):
                    yield event
                return
        for event in events:
            if failures and event.type == "done":
                event = event.model_copy(update={"retried": failures})
            yield event

    def describe(self, timeout: float = 10.0) -> dict[str, object]:
        """The server's ``GET /v1/info`` (its model), before a class starts; a refusal or no answer is one
        line (:class:`~maic_cli.errors.InputError`), before anything is written."""
        import urllib.error
        import urllib.request

        asked = urllib.request.Request(self.base + "/v1/info", headers=self._headers)
        class NoRedirect(urllib.request.HTTPRedirectHandler):  # a 3xx is an error line, never followed: it
            def redirect_request(self, *args: Any, **kwargs: Any) -> None:  # would carry the token elsewhere
                return None

        opener = urllib.request.build_opener(NoRedirect)
        try:
            with opener.open(asked, timeout=timeout) as answer:
                info = json.loads(answer.read(65536))
        except urllib.error.HTTPError as exc:
            said = ""
            with suppress(ValueError, AttributeError, OSError):
                said = str(json.loads(exc.read(4096)).get("error") or "")
            raise InputError(f"--server {self.where}: {exc.code} {one_line(said or str(exc.reason))[:200]}"
                             + (" (MAIC_SERVER_TOKEN)" if exc.code == 401 else "")) from None
        except (urllib.error.URLError, OSError, ValueError) as exc:
            reason = getattr(exc, "reason", exc)
            raise InputError(f"--server {self.where}: no maic serve answered ({one_line(str(reason))[:160]})") from None
        if not isinstance(info, dict) or not isinstance(info.get("model"), str):
            raise InputError(f"--server {self.where}: not a maic serve (its /v1/info says no model)")
        return info

    def _failed(self, request: TurnRequest, message: str) -> list[Event]:
        state = request.director_state or DirectorState()
        return [ErrorEvent(message=one_line(f"server {self.where}: {message}")[:500]),
                DoneEvent(director_state=state.model_copy(deep=True))]

    async def _attempt(self, body: bytes) -> AsyncGenerator[Event | list[Event], None]:
        """One request: its ``thinking`` events as they come (the view shows who is thinking), then the
        turn's other events up to its ``done`` in one list (:class:`_Retry`, :class:`_Refused`)."""
        try:
            async with aiohttp.ClientSession(timeout=self._timeout, read_bufsize=READ_BUFFER) as session, \
                    session.post(self.endpoint, data=body, headers=self._headers,
                                 allow_redirects=False) as response:  # a redirect is not a maic serve
                if response.status != 200:
                    reason = await _reason(response)
                    if response.status in RETRY_STATUS:
                        raise _Retry(f"{response.status} {reason}")
                    raise _Refused(f"{response.status} {reason}")
                if not response.headers.get("Content-Type", "").startswith(EVENT_CONTENT_TYPE):
                    raise _Refused("answered something other than a maic event stream (is the URL a maic serve?)")
                events: list[Event] = []
                received = 0
                try:
                    async for line in response.content:
                        received += len(line)
                        if received > MAX_TURN_BYTES:
                            raise _Refused(f"sent more than {MAX_TURN_BYTES} bytes for one turn")
                        try:
                            event = read_event(line)
                        except ValueError:
                            raise _Refused("sent an event this maic cannot read (a newer server?)") from None
                        if event is not None and event.type == "thinking":
                            yield event
                        elif event is not None:
                            events.append(event)
                            if event.type == "done":
                                yield events
                                return
                except (ValueError, LineTooLong):  # aiohttp: a line past the read buffer
                    raise _Refused(f"sent a line longer than {READ_BUFFER} bytes") from None
                raise _Retry("the stream ended before the turn was done")
        except (aiohttp.ClientConnectionError, aiohttp.ClientPayloadError, TimeoutError) as exc:
            raise _Retry(f"connection failed ({type(exc).__name__}: {one_line(str(exc))[:160]})") from None
        except (aiohttp.ClientError, HttpProcessingError) as exc:  # not HTTP as maic serve speaks it
            raise _Refused(f"answered something this maic cannot read ({type(exc).__name__})") from None


async def _reason(response: aiohttp.ClientResponse) -> str:
    """The one line a refusal says (``{"error": …}``), bounded."""
    raw = await response.content.read(4096)
    try:
        said = json.loads(raw).get("error")
    except (ValueError, AttributeError):
        said = None
    return one_line(said if isinstance(said, str) else response.reason or "")[:300]


def turns_from_flag(url: str | None) -> HttpTurns | None:
    """``--server URL`` (with ``MAIC_SERVER_TOKEN``) as a turn client; ``None``: turns run here."""
    if url is None:
        return None
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.query or parts.fragment:
        raise InputError(f"--server {one_line(url)[:120]}: use the server's address, http(s)://HOST:PORT")
    if parts.username or parts.password:
        raise InputError("--server: put the token in MAIC_SERVER_TOKEN, not in the address")
    token = os.environ.get("MAIC_SERVER_TOKEN") or None
    register_secret(token)  # never in a line maic prints
    return HttpTurns(url, token)


def with_agents(request: TurnRequest, registry: Mapping[str, AgentConfig] | None) -> TurnRequest:
    """``request`` with the class's agents inside it (the server does not read the client's persona files)."""
    config = request.config
    missing = {i: registry[i] for i in config.agent_ids if i not in config.agent_configs and registry and i in registry}
    if not missing:
        return request
    return request.model_copy(update={"config": config.model_copy(
        update={"agent_configs": {**config.agent_configs, **missing}})})
