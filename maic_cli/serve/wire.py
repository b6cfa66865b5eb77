"""The ``/v1/turn`` wire format, shared by the server and the thin client (``client.py``).

A request body is ``{"version": 1, "request": TurnRequest}``.  The engine's models leave their
request-scoped fields out of a dump (a session must not keep them: ``TurnConfig``'s trigger, lesson
and repeat guard, the learner's memory), so :func:`encode_request` writes them explicitly and
:func:`decode_request` reads them back.  What the server decides itself (the model, its prompt
variant) is overwritten on the server, whatever a body says.

The answer is ``text/event-stream``: one ``data: {event}`` line and a blank line per engine event
(``engine/events.py``'s ``EVENT_ADAPTER``), the last one ``done``; a turn that failed on the server
says so with an ``error`` event before its ``done``, exactly as in process.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError

from ..engine.events import EVENT_ADAPTER, Event
from ..engine.models import TurnRequest
from .limits import BodyError

TURN_FORMAT_VERSION = 1
EVENT_CONTENT_TYPE = "text/event-stream"


def encode_request(request: TurnRequest) -> bytes:
    """The body of one ``/v1/turn`` request."""
    data = request.model_dump(mode="json")
    config = request.config
    data["config"].update({"trigger_agent_id": config.trigger_agent_id,
                           "allow_repeat_speaker": config.allow_repeat_speaker,
                           "compact_prompts": config.compact_prompts,  # the server replaces it with its model's
                           "lesson": config.lesson.model_dump(mode="json") if config.lesson is not None else None})
    data["user_profile"]["memory"] = list(request.user_profile.memory)
    return json.dumps({"version": TURN_FORMAT_VERSION, "request": data}, ensure_ascii=False).encode()


def decode_request(data: Any) -> TurnRequest:
    """A bounded, parsed body (limits.read_json) as a :class:`TurnRequest` (:class:`BodyError`: 400/422)."""
    if not isinstance(data, dict):
        raise BodyError("body is not a JSON object")
    version = data.get("version")
    if version != TURN_FORMAT_VERSION or isinstance(version, bool):
        raise BodyError(f"version {json.dumps(version)[:40]}: this server reads turn format "
                        f"{TURN_FORMAT_VERSION}")
    try:
        return TurnRequest.model_validate(data.get("request"))
    except RecursionError:
        raise BodyError("request nested too deeply") from None
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or "request"
        raise BodyError(f"request.{field}: {first['msg']}"[:300], 422) from None


def event_frame(event: Event) -> bytes:
    """One server-sent event: a ``data:`` line (JSON has no raw newline) and a blank line."""
    return b"data: " + EVENT_ADAPTER.dump_json(event) + b"\n\n"


def read_event(line: bytes) -> Event | None:
    """The event a ``data:`` line carries (``None``: a comment, a blank or another field)."""
    if not line.startswith(b"data:"):
        return None
    return EVENT_ADAPTER.validate_json(line[5:].strip())
