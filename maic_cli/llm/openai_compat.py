"""What the OpenAI-compatible clients share: error classification and structured-output form.

Both the litellm client and the direct client talk to providers that speak
OpenAI's chat API; they share these small functions (not a base class):
:func:`to_llm_error` turns any provider, HTTP or socket exception into one
:class:`LLMError` line, and :func:`response_format` writes a reply schema the
way OpenAI (``json_schema``) or llama.cpp's server (``json_object``) takes it.
Nothing here imports litellm.
"""

from __future__ import annotations

import re
from typing import Any

from .port import ErrorKind, LLMError

STRUCTURED_MODES = ("auto", "off", "json_schema", "json_object")
_PREFIX = re.compile(r"^(?:litellm\.)?(?:\w+(?:Error|Exception)\s*[:-]\s*)+")


def _detail(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    text = _PREFIX.sub("", text)
    text = re.sub(r"\b\w+Exception - ", "", text)
    return text or type(exc).__name__


def _no_key(exc: BaseException) -> bool:
    """The client refused to send a request without an API key (so no HTTP status belongs to it)."""
    message = str(exc).lower()
    return "missing credentials" in message or ("api_key" in message and ("pass" in message or "must be set"
                                                                            in message))


def classify(exc: BaseException, started: bool) -> ErrorKind:
    """Map a litellm (or openai/httpx/aiohttp) exception to an :data:`ErrorKind`."""
    names = {cls.__name__ for cls in type(exc).__mro__}
    if started:
        return "stream_dropped"
    message = str(exc).lower()
    if "connection error" in message:  # litellm reports a refused connection as a 500
        return "connection"
    if _no_key(exc):
        return "auth"
    table: list[tuple[str, ErrorKind]] = [
        ("AuthenticationError", "auth"), ("PermissionDeniedError", "auth"),
        ("RateLimitError", "rate_limit"), ("Timeout", "timeout"), ("TimeoutError", "timeout"),
        ("APITimeoutError", "timeout"), ("ContextWindowExceededError", "context_window"),
        ("NotFoundError", "not_found"), ("BadRequestError", "bad_request"),
        ("UnprocessableEntityError", "bad_request"), ("UnsupportedParamsError", "bad_request"),
        ("MidStreamFallbackError", "connection"), ("APIConnectionError", "connection"),
        ("InternalServerError", "server_error"), ("ServiceUnavailableError", "server_error"),
        ("BadGatewayError", "server_error"), ("APIError", "server_error"),
    ]
    for name, kind in table:
        if name in names:
            return kind
    if isinstance(exc, (ConnectionError, OSError)):
        return "connection"
    return "other"


_KIND_WORDS = {
    "auth": "authentication failed", "rate_limit": "rate limited", "timeout": "request timed out",
    "server_error": "server error", "connection": "cannot connect", "stream_dropped": "stream dropped",
    "bad_request": "bad request", "not_found": "model not found", "context_window": "context too long",
}


def to_llm_error(exc: BaseException, provider: str, started: bool) -> LLMError:
    """``exc`` as one :class:`LLMError` line; ``started``: text had already arrived (a dropped stream)."""
    if isinstance(exc, LLMError):
        return exc
    kind = classify(exc, started)
    status = getattr(exc, "status_code", None)
    words = _KIND_WORDS.get(kind, "error")
    sent = kind not in ("stream_dropped", "connection") and not (kind == "auth" and _no_key(exc))
    code = f" (HTTP {status})" if isinstance(status, int) and sent else ""
    return LLMError(kind, provider, f"{words}{code}: {_detail(exc)}")


def check_structured_mode(mode: str) -> str:
    if mode not in STRUCTURED_MODES:
        raise ValueError(f"structured must be one of {', '.join(STRUCTURED_MODES)}")
    return mode


def response_format(schema: dict[str, Any], mode: str) -> dict[str, Any]:
    """The ``response_format`` for a reply schema.

    ``json_schema`` is OpenAI's form (the top level must be an object, so an array
    reply is wrapped as ``{"items": [...]}`` — the streaming parser skips to the
    array either way); ``json_object`` carries the schema the way llama.cpp's
    server takes it.
    """
    if mode == "json_object":
        return {"type": "json_object", "schema": schema}
    if schema.get("type") != "object":
        schema = {"type": "object", "properties": {"items": schema}, "required": ["items"],
                  "additionalProperties": False}
    return {"type": "json_schema", "json_schema": {"name": "maic_reply", "schema": schema, "strict": False}}
