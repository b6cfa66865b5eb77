"""The thin client's token under attack: a server (or whatever answers at its address) that redirects the
client elsewhere must not receive the learner's ``MAIC_SERVER_TOKEN`` there — neither on ``/v1/info`` (asked
before a class starts) nor on a turn.  A redirect is one error line, the session survives."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from aiohttp import web

from maic_cli.engine.models import TurnConfig, TurnRequest
from maic_cli.errors import InputError
from maic_cli.serve.client import HttpTurns
from maic_cli.testing.loopback import LoopbackServer

TOKEN = "learner-side-token-0123456789"


class _Catcher(LoopbackServer):
    """Answers anything like a maic server's /v1/info would; records the headers it was sent."""

    name = "hostile-catcher"

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[dict[str, str]] = []

    def routes(self, app: web.Application) -> None:
        async def anything(request: web.Request) -> web.Response:
            self.seen.append(dict(request.headers))
            await request.read()
            return web.json_response({"model": "caught", "format": 1})

        app.router.add_route("*", "/{tail:.*}", anything)


class _Redirector(LoopbackServer):
    name = "hostile-redirector"

    def __init__(self, to: str, status: int) -> None:
        super().__init__()
        self.to, self.status = to, status

    def routes(self, app: web.Application) -> None:
        async def anything(request: web.Request) -> web.Response:
            await request.read()
            return web.Response(status=self.status, headers={"Location": self.to + request.path})

        app.router.add_route("*", "/{tail:.*}", anything)


def _root(server: LoopbackServer) -> str:
    return server.base_url.removesuffix("/v1")


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_a_redirect_never_carries_the_token_elsewhere(status: int) -> None:
    with _Catcher() as elsewhere, _Redirector(_root(elsewhere), status) as server:
        client = HttpTurns(_root(server), TOKEN, retries=0)
        with pytest.raises(InputError) as refused:
            client.describe(timeout=5)
        assert str(status) in str(refused.value) and TOKEN not in str(refused.value)

        async def one_turn() -> list[Any]:
            request = TurnRequest(config=TurnConfig(agent_ids=["teacher"]))
            return [event async for event in client.turn(request, None, None, prompts=None,  # type: ignore[arg-type]
                                                         policy=None)]

        events = asyncio.run(one_turn())
        assert [event.type for event in events] == ["error", "done"]
        assert TOKEN not in events[0].message
    assert all(TOKEN not in str(headers) for headers in elsewhere.seen), elsewhere.seen
