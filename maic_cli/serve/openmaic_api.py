"""``POST /api/chat``: OpenMAIC's stateless chat API, answered by maic's class on the server's model.

One request is one director → agent cycle, as in OpenMAIC: the body (serve/openmaic_request.py) becomes maic's
turn (serve/openmaic_class.py), the server runs it with its own model, and the turn's events go back as
OpenMAIC's events (serve/openmaic_events.py) on a ``text/event-stream``.

- **Refused before any stream** (as OpenMAIC's route does, a JSON body ``{success: false, errorCode, error}``):
  a body that is not JSON or too big or too deep (the server's bounded reader), a missing ``messages``,
  ``storeState`` or ``config.agentIds`` (400 ``MISSING_REQUIRED_FIELD``), a field of the wrong type or past a
  bound, or a class of agents nobody knows (400 ``INVALID_REQUEST``).
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
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from ..engine.events import Event
from ..engine.models import AgentConfig, TurnRequest
from .openmaic_class import ClassMap, build_turn
from .openmaic_events import HEARTBEAT, HEARTBEAT_SECONDS, EventTranslator, error, frame
from .openmaic_request import RequestProblem, parse_request

log = logging.getLogger("maic.serve.openmaic")

TurnRunner = Callable[[TurnRequest], AsyncIterator[Event]]
BodyReader = Callable[[web.Request], Awaitable[Any]]
DISCONNECT_POLL = 0.2  # seconds between looks at the connection while a turn runs
STREAM_HEADERS = {"Content-Type": "text/event-stream", "Cache-Control": "no-cache", "Connection": "keep-alive",
                  "X-Accel-Buffering": "no"}  # (nginx: pass each frame on at once)


def problem_response(status: int, code: str, message: str) -> web.Response:
    """OpenMAIC's error body (its ``apiError``)."""
    return web.json_response({"success": False, "errorCode": code, "error": message}, status=status)


@dataclass
class OpenMaicChat:
    """The route's handler: what runs a turn, the class's default agents, how a body is read."""

    run_turn: TurnRunner
    defaults: Mapping[str, AgentConfig]  # maic's default class, by id (store/personas.py)
    read_body: BodyReader
    compact_prompts: bool = False  # the server's model wants maic's compact prompts
    heartbeat: float = HEARTBEAT_SECONDS

    async def handle(self, request: web.Request) -> web.StreamResponse:
        try:
            body = await self.read_body(request)
        except web.HTTPException as exc:  # too big, not JSON, too deep: the reader's status, OpenMAIC's shape
            return problem_response(exc.status, "INVALID_REQUEST", exc.text or exc.reason)
        try:
            chat = parse_request(body)
            turn, ids = build_turn(chat, self.defaults, compact_prompts=self.compact_prompts)
        except RequestProblem as problem:
            return problem_response(400, problem.code, problem.message)
        response = web.StreamResponse(status=200, headers=STREAM_HEADERS)
        await response.prepare(request)
        await _Stream(request, response, self.heartbeat).run(self.run_turn(turn), ids)
        return response


class _Stream:
    """One response's frames: the turn's events, heartbeats between them, and the end."""

    def __init__(self, request: web.Request, response: web.StreamResponse, heartbeat: float) -> None:
        self.request, self.response, self.heartbeat = request, response, heartbeat
        self.lock = asyncio.Lock()

    async def send(self, data: bytes) -> None:
        async with self.lock:
            await self.response.write(data)

    async def run(self, events: AsyncIterator[Event], ids: ClassMap) -> None:
        translator = EventTranslator(ids)
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


def json_body_reader(limit: int) -> BodyReader:
    """A plain reader for when the server gives none: at most ``limit`` bytes, JSON (used by tests)."""
    async def read(request: web.Request) -> Any:
        if request.content_length is not None and request.content_length > limit:
            raise web.HTTPRequestEntityTooLarge(max_size=limit, actual_size=request.content_length)
        data = await request.content.read(limit + 1)
        if len(data) > limit:
            raise web.HTTPRequestEntityTooLarge(max_size=limit, actual_size=len(data))
        try:
            return json.loads(data)
        except (ValueError, RecursionError):
            raise web.HTTPBadRequest(text="The request body is not JSON") from None
    return read
