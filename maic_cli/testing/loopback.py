"""What the loopback test servers share: an aiohttp app on ``127.0.0.1`` (a free port), served on its own
event loop in a daemon thread, started with :meth:`LoopbackServer.start` or as a context manager."""

from __future__ import annotations

import asyncio
import socket
import threading
from typing import Self

from aiohttp import web


class LoopbackServer:
    """Subclasses add their routes in :meth:`routes`; ``base_url`` ends in ``/v1``."""

    name = "loopback-server"
    backlog = 128  # the accept queue (a batch opens many connections at once: the model server asks more)

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._address: tuple[str, int] | None = None

    def routes(self, app: web.Application) -> None:
        raise NotImplementedError

    @property
    def base_url(self) -> str:
        assert self._address is not None, "server not started"
        host, port = self._address
        return f"http://{host}:{port}/v1"

    def start(self) -> Self:
        loop = asyncio.new_event_loop()
        app = web.Application()
        self.routes(app)
        # stop() waits at most a second for streams still open (a test may leave one hanging).
        runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=1.0)
        loop.run_until_complete(runner.setup())
        sock = socket.create_server(("127.0.0.1", 0))
        self._address = sock.getsockname()[:2]
        loop.run_until_complete(web.SockSite(runner, sock, backlog=self.backlog).start())

        def serve() -> None:
            asyncio.set_event_loop(loop)
            try:
                loop.run_forever()
            finally:
                loop.run_until_complete(runner.cleanup())
                loop.close()

        self._loop = loop
        self._thread = threading.Thread(target=serve, name=self.name, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._loop is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=10)
            self._loop = self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
