"""The ``maic serve`` web application: its routes and the checks every route passes (serve/server.py runs it).

:func:`build_app` makes the ``web.Application``: the shared :class:`~.service.TurnService` under
:data:`TURN_SERVICE`, the token check, the body limits and the error answers (middlewares, so they
hold for every route), and the routes.  A route module adds itself by appending a registrar to
:data:`ROUTE_REGISTRARS` below (a function taking the app and adding its routes); ``/healthz`` and
``/metrics`` are the app's own.

Every route but ``/healthz`` wants ``Authorization: Bearer TOKEN`` when the server has a token
(``MAIC_SERVE_TOKEN``); the token is never logged.  What a request's head alone decides (the token, a
browser's page on a tokenless server, the body's length and encoding) is serve/door.py's.  A body is refused
with 413 before it is read when its ``Content-Length`` is past :data:`~.limits.MAX_BODY_BYTES` and
while it streams in otherwise; a body must arrive within :data:`~.limits.BODY_READ_TIMEOUT` seconds
(408), a request's headers within :data:`~.limits.IDLE_TIMEOUT` of the connection opening (it is
closed otherwise), and past :data:`~.limits.MAX_CONCURRENT_TURNS` turns, or past
:data:`~.limits.MAX_BODIES_HELD` bytes of bodies being served at once (a parsed body weighs several times its
bytes), a request is 503.  Every
refusal is JSON, ``{"error": "one line"}``, and counted in ``/metrics``.

An event-stream route writes its frames through :class:`~.frames.FrameWriter` (one send per burst) inside
:func:`heartbeats` (a comment line every ``--heartbeat`` seconds, so no proxy times out a slow model call),
as ``/v1/turn`` does; :func:`read_body_json` gives it the body as bounded JSON.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import aclosing, asynccontextmanager, suppress
from typing import Any

from aiohttp import web

from ..untrusted import one_line
from .door import SERVE_TOKEN, expect_continue, refusal_for_head
from .frames import FrameWriter
from .limits import BODY_READ_TIMEOUT, MAX_BODIES_HELD, MAX_BODY_BYTES, BodyError, read_json
from .openmaic_api import add_openmaic_routes
from .service import Busy, TurnService
from .wire import EVENT_CONTENT_TYPE, TURN_FORMAT_VERSION, decode_request, event_frame

TURN_SERVICE: web.AppKey[TurnService] = web.AppKey("turn_service", TurnService)
BODY_TIMEOUT: web.AppKey[float] = web.AppKey("body_timeout", float)
HEARTBEAT: web.AppKey[float] = web.AppKey("heartbeat", float)
BODIES_HELD: web.AppKey[list[int]] = web.AppKey("bodies_held", list)  # bytes of the bodies being served now
HEARTBEAT_SECONDS = 15.0  # a comment line this often on a turn's stream, so no proxy times out a slow model call
log = logging.getLogger("maic.serve")

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def refusal(request: web.Request, status: int, message: str, *, close: bool = False,
            headers: dict[str, str] | None = None) -> web.Response:
    """A 4xx/5xx answer of one line, counted in the metrics; ``close``: the connection closes with it (a body
    left unread or half sent cannot be skipped to reach a next request)."""
    request.app[TURN_SERVICE].metrics.refused(status)
    response = web.json_response({"error": one_line(message)[:300]}, status=status, headers=headers)
    if close:
        response.force_close()
    return response


@web.middleware
async def guard(request: web.Request, handler: Handler) -> web.StreamResponse:
    """The token, then the body (length announced, length read, time taken), then the route."""
    refused = refusal_for_head(request)  # the token, a browser's page, the body's length and encoding (door.py)
    if refused is not None:
        return refusal(request, refused.status, refused.message, close=refused.close, headers=refused.headers)
    held = request.app[BODIES_HELD]  # bytes of the bodies read or being read for requests in progress
    size = 0 if not request.body_exists else MAX_BODY_BYTES if request.content_length is None \
        else request.content_length  # a chunked body may be as large as any
    if size and held[0] and held[0] + size > MAX_BODIES_HELD:  # one body alone passes: it is within its bound
        return refusal(request, 503, f"this instance holds {held[0] // 2**20} MB of requests; ask again",
                       close=True, headers={"Retry-After": "1"})
    held[0] += size
    try:
        return await _read_then_route(request, handler)
    finally:
        held[0] -= size


async def _read_then_route(request: web.Request, handler: Handler) -> web.StreamResponse:
    if request.body_exists:
        timeout = request.app[BODY_TIMEOUT]
        try:
            async with asyncio.timeout(timeout):
                await request.read()  # cached for the route; client_max_size stops a chunked body at the limit
        except web.HTTPRequestEntityTooLarge:
            return refusal(request, 413, f"body larger than {MAX_BODY_BYTES} bytes", close=True)
        except TimeoutError:
            return refusal(request, 408, f"body not received within {timeout:g} s", close=True)
        except web.RequestPayloadError as exc:  # chunks that lie about their size, a broken encoding
            return refusal(request, 400, f"body could not be read: {str(exc)[:120]}", close=True)
    try:
        return await handler(request)
    except BodyError as exc:
        return refusal(request, exc.status, str(exc))
    except Busy as exc:
        return refusal(request, 503, str(exc), headers={"Retry-After": "1"})
    except web.HTTPException as exc:  # the router's 404 and 405, as one JSON line like every refusal
        if exc.status < 400:
            raise
        return refusal(request, exc.status, exc.reason)


async def read_body_json(request: web.Request) -> Any:
    """The request's body as bounded JSON (serve/limits.py); :class:`BodyError` answers 4xx."""
    return read_json(await request.read())


@asynccontextmanager
async def heartbeats(response: web.StreamResponse, interval: float, comment: bytes = b": heartbeat\n\n"
                     ) -> AsyncIterator[None]:
    """While the block runs, ``comment`` is written to the prepared event stream every ``interval`` seconds
    (between whole frames: a write is one call), so a proxy's idle timeout never cuts a slow turn."""
    async def beat() -> None:
        while True:
            await asyncio.sleep(interval)
            await response.write(comment)

    task = asyncio.create_task(beat())
    try:
        yield
    finally:
        task.cancel()
        with suppress(asyncio.CancelledError, ConnectionError):
            await task


async def turn_route(request: web.Request) -> web.StreamResponse:
    """``POST /v1/turn``: one turn as ``text/event-stream`` (serve/wire.py)."""
    service = request.app[TURN_SERVICE]
    turn = decode_request(await read_body_json(request))
    async with service.turn_slot():
        response = web.StreamResponse(headers={"Content-Type": EVENT_CONTENT_TYPE, "Cache-Control": "no-cache",
                                               "X-Accel-Buffering": "no"})
        await response.prepare(request)
        frames = FrameWriter(response)  # one send per burst of events, the first at once
        try:
            async with heartbeats(response, request.app[HEARTBEAT]), aclosing(service.run_turn(turn)) as events:
                async for event in events:
                    await frames.write(event_frame(event))
                await frames.close()
            await response.write_eof()
        except ConnectionError:  # the client left (or read its done and closed): the turn is closed above
            log.debug("client gone before the end of its stream")
        finally:
            frames.cancel()
    return response


async def healthz(request: web.Request) -> web.Response:
    return web.json_response({"status": "ok"})


async def info_route(request: web.Request) -> web.Response:
    """``GET /v1/info``: what plays the turns here (a thin client names its transcript after it)."""
    service = request.app[TURN_SERVICE]
    return web.json_response({"format": TURN_FORMAT_VERSION, "model": service.spec.raw,
                              "small": service.spec.compact_prompts,
                              "director": service.director.name if service.director is not None else None})


async def metrics_route(request: web.Request) -> web.Response:
    text = request.app[TURN_SERVICE].metrics.render()
    return web.Response(text=text, content_type="text/plain", charset="utf-8",
                        headers={"X-Content-Type-Options": "nosniff"})


def add_turn_routes(app: web.Application) -> None:
    app.router.add_post("/v1/turn", turn_route, expect_handler=expect_continue)
    app.router.add_get("/v1/info", info_route)


# Route modules register here (one line each): a function that adds its routes to the app.
ROUTE_REGISTRARS: list[Callable[[web.Application], None]] = [
    add_turn_routes,
    lambda app: add_openmaic_routes(app, app[TURN_SERVICE], app[HEARTBEAT]),  # POST /api/chat (openmaic_api.py)
]


def build_app(service: TurnService, *, token: str | None = None, body_timeout: float = BODY_READ_TIMEOUT,
              heartbeat: float = HEARTBEAT_SECONDS) -> web.Application:
    """The application: ``service`` shared by every route, ``token`` wanted by every route but /healthz,
    a body received within ``body_timeout`` seconds."""
    app = web.Application(middlewares=[guard], client_max_size=MAX_BODY_BYTES)
    app[TURN_SERVICE] = service
    app[SERVE_TOKEN] = token or None
    app[BODY_TIMEOUT] = body_timeout
    app[HEARTBEAT] = heartbeat
    app[BODIES_HELD] = [0]
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/metrics", metrics_route)
    for register in ROUTE_REGISTRARS:
        register(app)
    return app
