"""``POST /api/chat``: OpenMAIC's stateless chat API, answered by maic's class on the server's model.

One request is one director → agent cycle, as in OpenMAIC: the body (serve/openmaic_request.py) becomes maic's
turn (serve/openmaic_class.py), the server runs it with its own model, and the turn's events go back as
OpenMAIC's events (serve/openmaic_events.py) on a ``text/event-stream``.

- **Refused before any stream** (as OpenMAIC's route does, a JSON body ``{success: false, errorCode, error}``):
  a body that is not JSON, too deep or past a bound of the server (serve/limits.py: 400 or 413), a missing
  ``messages``, ``storeState`` or ``config.agentIds`` (400 ``MISSING_REQUIRED_FIELD``), a field of the wrong type
  or past a bound of OpenMAIC's request, or a class of agents nobody knows (400 ``INVALID_REQUEST``).  The
  server's guard answers first for a missing token (401), a ``Content-Length`` past its limit (413, unread) and
  an instance with every turn slot taken (503).
- **Once streaming**, every stream ends with ``done`` and closes at once: a failure inside the turn is an
  ``error`` event and then ``done`` (the client's director state handed back unchanged), never a stream that
  stops without one.  A heartbeat comment keeps quiet proxies from closing a slow turn.
- **The model is the server's**: the request's ``apiKey``, ``baseUrl``, ``model`` and ``providerType`` are never
  read (serve/openmaic_request.py drops them), so they are never dialled, logged or echoed.
- **A client that goes away** cancels its turn and the model call under it: the connection is watched while the
  turn runs, not only when a frame is written.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass

from aiohttp import web

from ..engine.events import Event
from ..engine.models import StoreState
from .door import expect_continue
from .limits import BodyError, read_json
from .openmaic_class import ClassMap, build_turn
from .openmaic_events import HEARTBEAT, HEARTBEAT_SECONDS, EventTranslator, error, frame
from .openmaic_request import RequestProblem, parse_request
from .service import TurnService

log = logging.getLogger("maic.serve.openmaic")

DISCONNECT_POLL = 0.2  # seconds between looks at the connection while a turn runs
STREAM_HEADERS = {"Content-Type": "text/event-stream", "Cache-Control": "no-cache", "Connection": "keep-alive",
                  "X-Accel-Buffering": "no"}  # (nginx: pass each frame on at once)


@dataclass
class OpenMaicChat:
    """The route's handler: the server's turn service (its model, registry, slots, metrics) and the heartbeat."""

    service: TurnService
    heartbeat: float = HEARTBEAT_SECONDS

    def refuse(self, status: int, code: str, message: str) -> web.Response:
        """OpenMAIC's error body (its ``apiError``), counted as the server counts every refusal."""
        self.service.metrics.refused(status)
        return web.json_response({"success": False, "errorCode": code, "error": message}, status=status)

    async def handle(self, request: web.Request) -> web.StreamResponse:
        try:
            body = read_json(await request.read())  # (the server's guard has bounded and read it already)
        except BodyError as exc:  # not JSON, too deep, too long: the server's bounds, OpenMAIC's shape
            return self.refuse(exc.status, "INVALID_REQUEST", str(exc))
        try:
            turn, ids = build_turn(parse_request(body), self.service.registry)
        except RequestProblem as problem:
            return self.refuse(400, problem.code, problem.message)
        async with self.service.turn_slot():  # Busy: the server's guard answers 503
            response = web.StreamResponse(status=200, headers=STREAM_HEADERS)
            await response.prepare(request)
            store = turn.store_state  # the board's elements copied (the turn keeps its own), the slides shared
            board = store.model_copy(update={"whiteboard": [e.model_copy(deep=True) for e in store.whiteboard]})
            await _Stream(request, response, self.heartbeat).run(self.service.run_turn(turn), ids, board)
        return response


def add_openmaic_routes(app: web.Application, service: TurnService, heartbeat: float = HEARTBEAT_SECONDS) -> None:
    """``POST /api/chat`` on the server's app, with its turn service and its ``--heartbeat`` (serve/app.py:
    ROUTE_REGISTRARS).  The heartbeat is OpenMAIC's own comment, ``:heartbeat``."""
    app.router.add_post("/api/chat", OpenMaicChat(service, heartbeat).handle, expect_handler=expect_continue)


class _Stream:
    """One response's frames: the turn's events, heartbeats between them, and the end."""

    def __init__(self, request: web.Request, response: web.StreamResponse, heartbeat: float) -> None:
        self.request, self.response, self.heartbeat = request, response, heartbeat
        self.lock = asyncio.Lock()

    async def send(self, data: bytes) -> None:
        async with self.lock:
            await self.response.write(data)

    async def run(self, events: AsyncIterator[Event], ids: ClassMap, board: StoreState) -> None:
        translator = EventTranslator(ids, board)
        turn = asyncio.create_task(self._pump(events, translator))
        beats = asyncio.create_task(self._beat())
        watch = asyncio.create_task(self._watch())
        try:
            await asyncio.wait({turn, watch}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (turn, beats, watch):
                task.cancel()
            for task in (turn, beats, watch):
                with contextlib.suppress(asyncio.CancelledError, ConnectionError):
                    await task
        if turn.cancelled() or not translator.finished:
            return  # the client went away: its turn is cancelled, nobody is left to read an end
        with contextlib.suppress(ConnectionError):
            await self.response.write_eof()

    async def _pump(self, events: AsyncIterator[Event], translator: EventTranslator) -> None:
        try:
            async for event in events:
                out = translator.translate(event)
                if out is not None:
                    await self.send(frame(out))
                if translator.finished:
                    break
        except (asyncio.CancelledError, ConnectionError):
            raise
        except Exception as exc:  # noqa: BLE001 - whatever failed in the turn, the stream still ends with done
            log.warning("turn failed: %s: %s", type(exc).__name__, error(str(exc))["data"]["message"])
            await self.send(frame(error(f"The turn failed ({type(exc).__name__})")))
        finally:
            closing = getattr(events, "aclose", None)
            if closing is not None:
                with contextlib.suppress(Exception):
                    await closing()  # the model call under the turn ends now, not when collected
        if not translator.finished:
            await self.send(frame(translator.done()))

    async def _beat(self) -> None:
        while True:
            await asyncio.sleep(self.heartbeat)
            await self.send(HEARTBEAT)

    async def _watch(self) -> None:
        """Returns when the client has gone (its connection closed)."""
        while True:
            transport = self.request.transport
            if transport is None or transport.is_closing():
                return
            await asyncio.sleep(DISCONNECT_POLL)
