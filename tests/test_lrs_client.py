"""The LRS client (store/lrs.py) against small stores on 127.0.0.1 that misbehave on purpose: a batch
that fails on the way is sent again, a store that answers 409 to ids it holds gets the batch one
statement at a time, a refusal is one line, credentials go only where the user said."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from aiohttp import web

from maic_cli.engine.session_record import Happening
from maic_cli.engine.xapi import ClassKey, statements
from maic_cli.errors import InputError
from maic_cli.store.lrs import ATTEMPTS, LrsError, auth_headers, push, statements_url

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def some(count: int) -> list[dict[str, Any]]:
    return statements(ClassKey(learner="Ada", key="lrs-client"),
                      [Happening(at=1_800_000_000.0 + n, learner=f"question {n}") for n in range(count)])


async def no_pause(seconds: float) -> None:
    return None


async def serve(handler: Handler, scenario: Callable[[str], Awaitable[None]]) -> None:
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handler)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        await scenario(f"http://127.0.0.1:{port}/xAPI")
    finally:
        await runner.cleanup()


def test_a_failed_batch_is_sent_again_and_stored_once() -> None:
    stored: dict[str, dict[str, Any]] = {}
    calls: list[tuple[str, int]] = []

    async def store(request: web.Request) -> web.Response:
        body = await request.json()
        calls.append((request.method, len(body)))
        assert request.headers["X-Experience-API-Version"] == "1.0.3"
        assert request.headers["Authorization"] == "Bearer tok-123456789"
        if len(calls) % 2 == 1:  # every first try of a batch: the store stores it, then the answer is lost
            for statement in body:
                stored.setdefault(statement["id"], statement)
            return web.Response(status=503, text="busy")
        for statement in body:
            stored.setdefault(statement["id"], statement)
        return web.json_response([s["id"] for s in body])

    async def scenario(url: str) -> None:
        result = await push(url, some(7), env={"MAIC_LRS_TOKEN": "tok-123456789"}, batch=3, sleep=no_pause)
        assert (result.sent, result.batches, result.retries, result.conflicts) == (7, 3, 3, 0)

    asyncio.run(serve(store, scenario))
    assert [n for _, n in calls] == [3, 3, 3, 3, 1, 1] and len(stored) == 7


def test_a_store_that_refuses_known_ids_gets_them_one_by_one() -> None:
    held = {s["id"]: s for s in some(2)}  # the store holds the first two already
    puts: list[str] = []

    async def store(request: web.Request) -> web.Response:
        body = await request.json()
        if request.method == "POST":
            if any(s["id"] in held for s in body):
                return web.Response(status=409, text="Conflict: statement ids exist")
            held.update({s["id"]: s for s in body})
            return web.json_response([s["id"] for s in body])
        statement_id = request.query["statementId"]
        assert body["id"] == statement_id
        puts.append(statement_id)
        if statement_id in held:
            return web.Response(status=409)
        held[statement_id] = body
        return web.Response(status=204)

    async def scenario(url: str) -> None:
        result = await push(url, some(5), env={}, batch=10, sleep=no_pause)
        assert (result.sent, result.conflicts) == (3, 2)

    asyncio.run(serve(store, scenario))
    assert len(puts) == 5 and len(held) == 5


@pytest.mark.parametrize(("status", "said"), [(401, "401"), (400, "400"), (302, "302")])
def test_a_refusal_is_one_line_with_the_status_and_no_secret(status: int, said: str) -> None:
    async def store(request: web.Request) -> web.Response:
        headers = {"Location": "http://127.0.0.1:9/steal"} if status == 302 else None
        return web.Response(status=status, text="no\x1b[31m way\nat all pw-secret-987", headers=headers)

    async def scenario(url: str) -> None:
        with pytest.raises(LrsError) as caught:
            await push(url, some(2), env={"MAIC_LRS_USER": "u", "MAIC_LRS_PASSWORD": "pw-secret-987"},
                       sleep=no_pause)
        message = str(caught.value)
        assert f"refused the statements: {said}" in message and url in message
        assert "\n" not in message and "\x1b" not in message and "pw-secret-987" not in message

    asyncio.run(serve(store, scenario))


def test_a_store_that_never_answers_well_is_given_up_after_the_attempts() -> None:
    tries: list[int] = []

    async def store(request: web.Request) -> web.Response:
        tries.append(1)
        return web.Response(status=500, text="boom")

    async def scenario(url: str) -> None:
        with pytest.raises(LrsError, match=f"after {ATTEMPTS} attempts"):
            await push(url, some(1), env={}, sleep=no_pause)

    asyncio.run(serve(store, scenario))
    assert len(tries) == ATTEMPTS


def test_no_store_listening_is_one_line() -> None:
    with pytest.raises(LrsError, match="did not take the statements"):
        asyncio.run(push("http://127.0.0.1:9/xAPI", some(1), env={}, sleep=no_pause))


@pytest.mark.parametrize("url", ["ftp://lrs.example/xAPI", "lrs.example/xAPI", "http://", "http://h:notaport/x",
                                 "file:///etc/passwd"])
def test_only_an_http_url_is_a_store(url: str) -> None:
    with pytest.raises(InputError, match="--lrs"):
        statements_url(url)


def test_statements_url_and_credentials() -> None:
    assert statements_url("http://127.0.0.1:8100/xAPI/") == "http://127.0.0.1:8100/xAPI/statements"
    assert statements_url("https://lrs.example/xAPI/statements") == "https://lrs.example/xAPI/statements"
    assert auth_headers({}) == {}
    assert auth_headers({"MAIC_LRS_USER": "maic", "MAIC_LRS_PASSWORD": "secret"}) == {
        "Authorization": "Basic bWFpYzpzZWNyZXQ="}
    assert auth_headers({"MAIC_LRS_TOKEN": "t", "MAIC_LRS_USER": "u"}) == {"Authorization": "Bearer t"}

