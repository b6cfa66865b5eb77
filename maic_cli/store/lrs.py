"""Send xAPI statements to a learning record store (an LRS: Ralph, Learning Locker, SQL LRS …).

``--lrs URL`` (or ``MAIC_LRS_URL``) names the store's xAPI endpoint (``…/xAPI`` or
``…/xAPI/statements``); only the user says where: never a file they were sent.  The
credentials come from the environment: ``MAIC_LRS_TOKEN`` (sent as ``Authorization: Bearer``)
or ``MAIC_LRS_USER`` and ``MAIC_LRS_PASSWORD`` (HTTP basic auth); redirects are not followed,
so they go nowhere else.

Statements go in batches of :data:`BATCH` (``POST …/statements``).  A batch that fails on the
way (no connection, a timeout, a 429 or a 5xx answer) is sent again, at most :data:`ATTEMPTS`
times, after a growing pause.  Nothing is stored twice: statement ids are stable
(engine/xapi.py), and a store keeps a statement once.  A store that answers a batch with 409
Conflict (some of its ids are stored already) gets that batch one statement at a time
(``PUT …/statements?statementId=ID``); a 409 there means the store holds that id already —
counted, not sent again.  Any other refusal (400, 401, 403 …) stops with one line naming the
store, the status and the start of its answer.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from ..errors import InputError, MaicError
from ..untrusted import one_line, redact, register_secret

BATCH = 50
ATTEMPTS = 4
PAUSES = (0.5, 1.5, 4.0)  # seconds before the 2nd, 3rd and 4th attempt
TIMEOUT = 30.0  # seconds for one request
MAX_ANSWER = 64 * 1024  # bytes of an answer read
VERSION_HEADER = {"X-Experience-API-Version": "1.0.3"}


class LrsError(MaicError):
    """The store refused the statements, or could not be reached."""


@dataclass
class PushResult:
    sent: int = 0  # statements the store took (or already held, the same)
    conflicts: int = 0  # ids the store held already with other content (not sent again)
    batches: int = 0
    retries: int = 0


def statements_url(url: str) -> str:
    """The store's statements resource, from what the user gave (checked: http or https, a host)."""
    parts = urlsplit(url.strip())
    try:
        parts.port  # noqa: B018 - a port that is not a number raises here
    except ValueError:
        parts = parts._replace(netloc="")
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise InputError(f"--lrs {one_line(url)[:200]}: an http:// or https:// URL of the store's xAPI endpoint "
                         "is needed")
    base = url.strip().rstrip("/")
    return base if base.endswith("/statements") else base + "/statements"


def auth_headers(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The credentials from ``MAIC_LRS_TOKEN``, or ``MAIC_LRS_USER`` and ``MAIC_LRS_PASSWORD``."""
    env = os.environ if env is None else env
    token = env.get("MAIC_LRS_TOKEN")
    if token:
        register_secret(token)  # never in an error line
        return {"Authorization": f"Bearer {token}"}
    user, password = env.get("MAIC_LRS_USER"), env.get("MAIC_LRS_PASSWORD")
    if user and password is not None:
        register_secret(password)
        pair = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
        return {"Authorization": f"Basic {pair}"}
    return {}


Sleep = Callable[[float], Awaitable[None]]


async def push(url: str, found: Sequence[dict[str, Any]], *, env: Mapping[str, str] | None = None,
               batch: int = BATCH, sleep: Sleep = asyncio.sleep,
               progress: Callable[[PushResult], None] | None = None) -> PushResult:
    """Send ``found`` to the store at ``url``; :class:`LrsError` (one line) when it refuses."""
    import aiohttp

    target = statements_url(url)
    headers = {**VERSION_HEADER, "Content-Type": "application/json", **auth_headers(env)}
    result = PushResult()
    timeout = aiohttp.ClientTimeout(total=TIMEOUT)
    async with aiohttp.ClientSession(timeout=timeout, headers=headers) as client:
        for start in range(0, len(found), max(batch, 1)):
            chunk = list(found[start:start + max(batch, 1)])
            status, answer = await _send(client, "POST", target, chunk, result, sleep)
            if status == 409:
                for statement in chunk:
                    one, answer = await _send(client, "PUT", target, statement, result, sleep,
                                              params={"statementId": str(statement.get("id", ""))})
                    if one == 409:
                        result.conflicts += 1
                    else:
                        _check(one, answer, target)
                        result.sent += 1
            else:
                _check(status, answer, target)
                result.sent += len(chunk)
            result.batches += 1
            if progress is not None:
                progress(result)
    return result


async def _send(client: Any, method: str, url: str, body: object, result: PushResult, sleep: Sleep,
                params: dict[str, str] | None = None) -> tuple[int, str]:
    import aiohttp

    data = json.dumps(body, ensure_ascii=False).encode("utf-8")
    problem = ""
    for attempt in range(ATTEMPTS):
        if attempt:
            result.retries += 1
            await sleep(PAUSES[min(attempt - 1, len(PAUSES) - 1)])
        try:
            async with client.request(method, url, data=data, params=params, allow_redirects=False) as response:
                answer = (await response.content.read(MAX_ANSWER)).decode("utf-8", "replace")
                if response.status == 429 or response.status >= 500:
                    problem = f"{response.status} {response.reason or ''}: {_brief(answer)}"
                    continue
                return response.status, answer
        except (aiohttp.ClientError, TimeoutError, OSError) as exc:
            problem = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    raise LrsError(f"{_where(url)}: the learning record store did not take the statements after {ATTEMPTS} "
                   f"attempts ({_brief(problem)})")


def _check(status: int, answer: str, url: str) -> None:
    if 200 <= status < 300:
        return
    raise LrsError(f"{_where(url)}: the learning record store refused the statements: {status} {_brief(answer)}")


def _brief(text: str) -> str:
    return redact(one_line(text).strip())[:200]


def _where(url: str) -> str:
    parts = urlsplit(url)
    return one_line(f"{parts.scheme}://{parts.hostname or ''}{f':{parts.port}' if parts.port else ''}{parts.path}")
