"""Running the app: the listening socket, the connection limits, a clean stop on SIGTERM/SIGINT.

Handlers run with ``handler_cancellation``: a client that disconnects cancels its turn and the model
call under it.  ``keepalive_timeout`` closes a connection that has not sent a whole request's headers
within :data:`~.limits.IDLE_TIMEOUT` seconds of opening (or of its last answer), so slow or idle
connections hold no more than a socket each (the open-files limit is raised to its hard limit, so many
idle sockets do not lock others out), and header lines and counts are bounded.  The access log
names the client, the request line, the status, the size and the time, never a header; every line goes
through :class:`LogFormatter` (secrets redacted, control sequences stripped).  A compressed body is never
inflated (``auto_decompress`` off; the app refuses it, 415).
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import signal
import sys
from collections.abc import Callable
from contextlib import suppress

from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError

from ..errors import InputError
from ..untrusted import REDACTED, clean, redact
from .limits import IDLE_TIMEOUT, LINGER

ACCESS_LOG_FORMAT = '%a "%r" %s %b %Tfs'
BACKLOG = 1024


def is_loopback(host: str) -> bool:
    """Whether ``host`` listens on this machine only (``localhost``, 127.0.0.0/8, ``::1``)."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a name other than localhost may resolve anywhere


def raise_open_files_limit(wanted: int = 65536) -> None:
    """Let idle sockets be many: the soft limit on open files up to the hard one (at most ``wanted``)."""
    try:
        import resource
    except ImportError:  # not on POSIX
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if soft != resource.RLIM_INFINITY and soft < target:
        with suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))


class LogFormatter(logging.Formatter):
    """The server's log lines with every registered secret (the serve token, provider keys) redacted and
    terminal control sequences stripped, tracebacks included: the HTTP parser's refusal of a malformed header
    quotes the header, and a client may put its token in a URL.  A request the parser refused is one line."""

    def __init__(self, fmt: str, token: str | None = None) -> None:
        super().__init__(fmt)
        self.token = token or None  # redacted whatever its length (the shared redaction skips short secrets)

    def format(self, record: logging.LogRecord) -> str:
        exc = record.exc_info[1] if record.exc_info else None
        if isinstance(exc, HttpProcessingError):
            record.exc_info, record.exc_text = None, None
            record.msg, record.args = f"{record.getMessage()}: {exc.code} {exc.message.splitlines()[0]}", ()
        text = redact(clean(super().format(record)))
        return text.replace(self.token, REDACTED) if self.token else text


def check_exposure(host: str, token: str | None) -> None:
    """Beyond loopback the server wants a token: refused in one line (exit 2) otherwise."""
    if not token and not is_loopback(host):
        raise InputError(f"--host {host}: listening beyond this machine needs a token; set MAIC_SERVE_TOKEN "
                         "(clients send it as MAIC_SERVER_TOKEN), or listen on 127.0.0.1")


async def serve_forever(app: web.Application, host: str, port: int,
                        ready: Callable[[str], None] | None = None, *, idle_timeout: float = IDLE_TIMEOUT) -> None:
    """Listen on ``host:port`` until SIGTERM or SIGINT, then stop taking connections and finish."""
    raise_open_files_limit()
    runner = web.AppRunner(app, handler_cancellation=True, keepalive_timeout=idle_timeout, auto_decompress=False,
                           lingering_time=LINGER,
                           access_log_format=ACCESS_LOG_FORMAT, max_line_size=8190, max_field_size=8190,
                           shutdown_timeout=5.0)
    await runner.setup()
    try:
        address = host.strip().removeprefix("[").removesuffix("]")  # --host [::1] as a URL writes it
        site = web.TCPSite(runner, address, port, backlog=BACKLOG, reuse_address=True)
        try:
            await site.start()
        except OSError as exc:
            raise InputError(f"--host {host} --port {port}: cannot listen: {exc.strerror or exc}") from None
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            if sys.platform != "win32":
                loop.add_signal_handler(sig, stop.set)
        if ready is not None:
            bound = runner.addresses[0] if runner.addresses else (host, port)
            ready(f"http://{f'[{address}]' if ':' in address else address}:{bound[1]}")
        await stop.wait()
    finally:
        await runner.cleanup()
