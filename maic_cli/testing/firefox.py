"""Open a local page in a real headless Firefox, evaluate an expression in it, and report what it logged.

For the tests of the web player (it must work in Firefox as in Chromium, from ``file://`` too).  It talks WebDriver
BiDi, Firefox's own remote protocol, over its websocket on 127.0.0.1 (aiohttp: no geckodriver, no Selenium): a
session, a navigation that waits for the page to load, ``script.evaluate`` (a promise is awaited; the call counts
as the user's activation, so a page may start audio) and a screenshot.  The expression should give a string (e.g.
``JSON.stringify(…)``).  Console errors and uncaught exceptions are collected.  Every wait is bounded by
``seconds``; the browser and its profile folder are always removed.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .browser import listening_url

LISTENING = re.compile(r"WebDriver BiDi listening on (ws://127\.0\.0\.1:\d+)")


def find_firefox() -> str | None:
    return shutil.which("firefox-esr") or shutil.which("firefox")


@dataclass
class FirefoxVisit:
    errors: list[str] = field(default_factory=list)
    value: Any = None
    screenshot: bytes = b""


def open_in_firefox(path: Path, expression: str, *, width: int = 1280, height: int = 900,
                    seconds: float = 90.0) -> FirefoxVisit:
    binary = find_firefox()
    if binary is None:
        raise FileNotFoundError("no firefox on the PATH (Debian: apt-get install firefox-esr)")
    return asyncio.run(_open(binary, path.resolve().as_uri(), expression, (width, height), seconds))


async def _open(binary: str, url: str, expression: str, size: tuple[int, int], seconds: float) -> FirefoxVisit:
    import aiohttp

    profile = tempfile.mkdtemp(prefix="maic-firefox-")
    process = await asyncio.create_subprocess_exec(
        binary, "--headless", "--no-remote", "--profile", profile, "--remote-debugging-port=0", "about:blank",
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)
    visit = FirefoxVisit()
    drain: asyncio.Task[None] | None = None
    try:
        async with asyncio.timeout(seconds):
            address = await listening_url(process, LISTENING, "firefox")
            drain = asyncio.create_task(_drain(process))
            async with aiohttp.ClientSession() as client, client.ws_connect(f"{address}/session",
                                                                              max_msg_size=0) as socket:
                await _visit(socket, url, expression, size, visit)
    finally:
        if drain is not None:
            drain.cancel()
        if process.returncode is None:
            process.kill()
        await process.wait()
        shutil.rmtree(profile, ignore_errors=True)
    return visit


async def _visit(socket: Any, url: str, expression: str, size: tuple[int, int], visit: FirefoxVisit) -> None:
    ids = itertools.count(1)

    async def send(method: str, **params: Any) -> dict[str, Any]:
        number = next(ids)
        await socket.send_str(json.dumps({"id": number, "method": method, "params": params}))
        while True:
            message = json.loads((await socket.receive()).data)
            if message.get("method") == "log.entryAdded" and message["params"].get("level") == "error":
                visit.errors.append(f"{message['params'].get('type')}: {message['params'].get('text')}")
            if message.get("id") == number:
                if message.get("type") == "error":
                    raise RuntimeError(f"{method}: {message.get('error')}: {message.get('message')}")
                result: dict[str, Any] = message.get("result", {})
                return result

    await send("session.new", capabilities={})
    await send("session.subscribe", events=["log.entryAdded"])
    context = (await send("browsingContext.getTree"))["contexts"][0]["context"]
    await send("browsingContext.setViewport", context=context, viewport={"width": size[0], "height": size[1]})
    await send("browsingContext.navigate", context=context, url=url, wait="complete")
    evaluated = await send("script.evaluate", expression=expression, target={"context": context},
                           awaitPromise=True, userActivation=True)
    if evaluated.get("type") == "exception":
        visit.errors.append("evaluate: " + str(evaluated.get("exceptionDetails", {}).get("text")))
    else:
        visit.value = evaluated.get("result", {}).get("value")
    shot = await send("browsingContext.captureScreenshot", context=context)
    visit.screenshot = base64.b64decode(shot["data"])
    await send("script.evaluate", expression="0", target={"context": context}, awaitPromise=False)  # late logs


async def _drain(process: asyncio.subprocess.Process) -> None:
    assert process.stderr is not None
    while await process.stderr.read(65536):
        pass
