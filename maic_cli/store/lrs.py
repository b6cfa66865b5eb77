"""Send xAPI statements to a learning record store (an LRS: Ralph, Learning Locker, SQL LRS …).

``--lrs URL`` (or ``MAIC_LRS_URL``) names the store's xAPI endpoint (``…/xAPI`` or
``…/xAPI/statements``); only the user says where: never a file they were sent.  The
credentials come from the environment: ``MAIC_LRS_TOKEN`` (sent as ``Authorization: Bearer``)
or ``MAIC_LRS_USER`` and ``MAIC_LRS_PASSWORD`` (HTTP basic auth), or from the URL's
``user:password@`` (store/lrs_auth.py); redirects are not followed, so they go nowhere else,
and no line maic says holds them, in any form (the URL it shows has no user, password or query).

Statements go in batches of :data:`BATCH` (``POST …/statements``).  A batch that fails on the
way (no connection, a 429 or a 5xx answer) is sent again, at most :data:`ATTEMPTS`
times, after a growing pause; a store that takes the connection and says nothing is given
:data:`FIRST_BYTE` seconds to begin its answer, twice (:data:`TIMEOUT_ATTEMPTS`), and after
:data:`WAIT_NOTICE` seconds of silence the caller is told it is waiting.  Nothing is stored twice:
statement ids are stable
(engine/xapi.py), and a store keeps a statement once.  A store that answers a batch with 409
Conflict (some of its ids are stored already) gets that batch one statement at a time
(``PUT …/statements?statementId=ID``); a 409 there means the store holds that id already —
counted, not sent again.  Any other refusal (400, 401, 403 …) stops with one line naming the
store, the status and the start of its answer.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from ..errors import MaicError
from ..untrusted import one_line, redact, secrets_in_use
from .lrs_auth import auth_headers, credentials, shown_url, split_url

__all__ = ["LrsError", "PushResult", "auth_headers", "push", "shown_url", "statements_url"]

BATCH = 50
ATTEMPTS = 4
PAUSES = (0.5, 1.5, 4.0)  # seconds before the 2nd, 3rd and 4th attempt
TIMEOUT = 30.0  # seconds for one request, at most
CONNECT_TIMEOUT = 10.0  # seconds to connect
FIRST_BYTE = 10.0  # seconds for the store's answer to begin (and between its pieces)
TIMEOUT_ATTEMPTS = 2  # a store that says nothing is asked this often
WAIT_NOTICE = 2.0  # seconds of silence before the caller is told maic is waiting
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
    """The store's statements resource, from what the user gave (checked: http or https, a host); a
    user and password in it stay (:func:`push` takes them out and sends them as basic auth)."""
    split_url(url)  # a bad URL is one input error here
    parts = urlsplit(url.strip())
    path = parts.path.rstrip("/")
    return urlunsplit(parts._replace(path=path if path.endswith("/statements") else path + "/statements",
                                     fragment=""))


Sleep = Callable[[float], Awaitable[None]]


async def push(url: str, found: Sequence[dict[str, Any]], *, env: Mapping[str, str] | None = None,
               batch: int = BATCH, sleep: Sleep = asyncio.sleep,
               progress: Callable[[PushResult], None] | None = None,
               waiting: Callable[[str], None] | None = None) -> PushResult:
    """Send ``found`` to the store at ``url``; :class:`LrsError` (one line) when it refuses.  ``waiting`` is
    told once when the store has said nothing for :data:`WAIT_NOTICE` seconds."""
    target, sent = credentials(statements_url(url), env)  # bad credentials: one input error, before any send
    with secrets_in_use(sent.secrets):
        return await _push(target, found, sent.headers, batch, sleep, progress, _Waiting(waiting, target))


async def _push(target: str, found: Sequence[dict[str, Any]], auth: dict[str, str], batch: int, sleep: Sleep,
                progress: Callable[[PushResult], None] | None, waiting: _Waiting) -> PushResult:
    import aiohttp

    headers = {**VERSION_HEADER, "Content-Type": "application/json", **auth}
    result = PushResult()
    timeout = aiohttp.ClientTimeout(total=TIMEOUT, connect=CONNECT_TIMEOUT, sock_read=FIRST_BYTE)
    async with aiohttp.ClientSession(timeout=timeout, headers=headers) as client:
        for start in range(0, len(found), max(batch, 1)):
            chunk = list(found[start:start + max(batch, 1)])
            status, answer = await _send(client, "POST", target, chunk, result, sleep, waiting)
            if status == 409:
                for statement in chunk:
                    one, answer = await _send(client, "PUT", target, statement, result, sleep, waiting,
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


class _Waiting:
    """Tells the caller, once, that the store has been silent for :data:`WAIT_NOTICE` seconds."""

    def __init__(self, say: Callable[[str], None] | None, url: str) -> None:
        self.say, self.url, self.said = say, url, False
        self.timer: asyncio.TimerHandle | None = None

    def __enter__(self) -> None:
        if self.say is not None and not self.said:
            self.timer = asyncio.get_running_loop().call_later(WAIT_NOTICE, self._notice)

    def __exit__(self, *exc: object) -> None:
        if self.timer is not None:
            self.timer.cancel()

    def _notice(self) -> None:
        if self.say is not None and not self.said:
            self.said = True
            self.say(f"waiting for the learning record store at {_where(self.url)} (no answer yet; at most "
                     f"{FIRST_BYTE:g} s, {TIMEOUT_ATTEMPTS} times)")


async def _send(client: Any, method: str, url: str, body: object, result: PushResult, sleep: Sleep,
                waiting: _Waiting, params: dict[str, str] | None = None) -> tuple[int, str]:
    import aiohttp

    data = json.dumps(body, ensure_ascii=False).encode("utf-8")
    problem = ""
    silent = 0
    for attempt in range(ATTEMPTS):
        if attempt:
            result.retries += 1
            await sleep(PAUSES[min(attempt - 1, len(PAUSES) - 1)])
        try:
            with waiting:
                async with client.request(method, url, data=data, params=params,
                                          allow_redirects=False) as response:
                    if 200 <= response.status < 300 or response.status == 409:
                        return response.status, ""  # what a store says with a success is not needed
                    answer = (await response.content.read(MAX_ANSWER)).decode("utf-8", "replace")
                    if response.status == 429 or response.status >= 500:
                        problem = f"{response.status} {response.reason or ''}: {_brief(answer)}"
                        continue
                    return response.status, answer
        except TimeoutError:
            silent += 1
            problem = f"no answer within {FIRST_BYTE:g} s"
            if silent >= TIMEOUT_ATTEMPTS:
                raise LrsError(f"{_where(url)}: the learning record store did not answer within {FIRST_BYTE:g} s "
                               f"({silent} attempts); is it up, and is this its xAPI endpoint?") from None
        except (aiohttp.ClientError, OSError, ValueError) as exc:
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
    return shown_url(url)
