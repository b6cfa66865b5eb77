"""Open a local HTML file in a real headless Chromium and report what a person would have seen.

For the tests of maic's HTML pages (report.html, ``maic replay --export``) and for
the README picture (examples/make_sample_batch.py).  It talks the Chrome DevTools
Protocol over the browser's own websocket on 127.0.0.1 (aiohttp, already a
dependency: no webdriver, no browser download), and collects console errors,
uncaught exceptions, failed loads and every request the page made; then evaluates
an expression in the page and takes a full-page screenshot.

The browser may reach nothing: every host name resolves to nothing
(``--host-resolver-rules``) and its background services are off.  Every wait is
bounded by ``seconds``; the browser and its profile folder are always removed.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
import os
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "chrome")
FLAGS = ["--headless", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run", "--no-default-browser-check",
         "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-extensions",
         "--disable-default-apps", "--disable-domain-reliability", "--metrics-recording-only", "--mute-audio",
         "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1", "--remote-debugging-address=127.0.0.1",
         "--remote-debugging-port=0", "--hide-scrollbars"]
CUT_AFTER = "Math.ceil((document.querySelector(%s)?.getBoundingClientRect().bottom ?? 0) + window.scrollY + 16)"
LISTENING = re.compile(r"DevTools listening on (ws://127\.0\.0\.1:\d+/\S+)")


def find_chromium() -> str | None:
    """``$MAIC_CHROMIUM``, else the first Chromium on the PATH (Debian's package installs ``chromium``)."""
    configured = os.environ.get("MAIC_CHROMIUM")
    if configured:
        return shutil.which(configured)
    return next((found for name in CANDIDATES if (found := shutil.which(name))), None)


@dataclass
class PageVisit:
    """What happened when the page was opened."""

    errors: list[str] = field(default_factory=list)  # console errors, exceptions, failed loads
    requests: list[str] = field(default_factory=list)  # every URL the page asked for (itself included)
    value: Any = None  # the evaluated expression's value (JSON)
    screenshot: bytes = b""  # PNG of the whole page
    size: tuple[int, int] = (0, 0)  # the page's width and height in CSS pixels


class DevTools:
    """One websocket to the browser; commands to one page (a flat session) and the events it sends."""

    def __init__(self, socket: Any) -> None:
        self._socket = socket
        self._ids = itertools.count(1)
        self._waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.events: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.session: str | None = None

    async def listen(self) -> None:
        async for message in self._socket:
            payload = json.loads(message.data)
            future = self._waiting.pop(payload.get("id", -1), None)
            if future is not None and not future.done():
                future.set_result(payload)
            elif "method" in payload:
                self.events.put_nowait(payload)

    async def send(self, method: str, **params: Any) -> dict[str, Any]:
        number = next(self._ids)
        message: dict[str, Any] = {"id": number, "method": method, "params": params}
        if self.session and not method.startswith(("Target.", "Browser.")):
            message["sessionId"] = self.session
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiting[number] = future
        await self._socket.send_str(json.dumps(message))
        reply = await future
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error'].get('message')}")
        result: dict[str, Any] = reply.get("result", {})
        return result


def _describe(event: dict[str, Any]) -> str | None:
    """The error an event reports, if it is one."""
    method, params = event.get("method"), event.get("params", {})
    if method == "Runtime.exceptionThrown":
        details = params.get("exceptionDetails", {})
        return "exception: " + str(details.get("exception", {}).get("description") or details.get("text"))
    if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
        return "console: " + " ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", []))
    if method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
        return "log: " + str(params["entry"].get("text"))
    if method == "Network.loadingFailed":
        return "failed load: " + str(params.get("errorText"))
    return None


async def _visit(devtools: DevTools, url: str, expression: str, frame: tuple[int, int | str],
                 visit: PageVisit) -> None:
    width, height = frame
    target = await devtools.send("Target.createTarget", url="about:blank")
    attached = await devtools.send("Target.attachToTarget", targetId=target["targetId"], flatten=True)
    devtools.session = attached["sessionId"]
    for domain in ("Runtime", "Log", "Page", "Network"):
        await devtools.send(f"{domain}.enable")
    await devtools.send("Emulation.setDeviceMetricsOverride", width=width, height=800, deviceScaleFactor=1,
                        mobile=False)
    await devtools.send("Page.navigate", url=url)
    while True:
        event = await devtools.events.get()
        if event.get("method") == "Network.requestWillBeSent":
            visit.requests.append(str(event["params"]["request"]["url"]))
        if (error := _describe(event)) is not None:
            visit.errors.append(error)
        if event.get("method") == "Page.loadEventFired":
            break
    evaluated = await devtools.send("Runtime.evaluate", expression=expression, returnByValue=True,
                                    awaitPromise=True, userGesture=True)
    if "exceptionDetails" in evaluated:
        visit.errors.append("evaluate: " + str(evaluated["exceptionDetails"].get("text")))
    visit.value = evaluated.get("result", {}).get("value")
    metrics = await devtools.send("Page.getLayoutMetrics")
    content = metrics.get("cssContentSize") or metrics["contentSize"]
    visit.size = (int(content["width"]), int(content["height"]))
    if isinstance(height, str):  # an expression: where the page's picture ends
        height = int((await devtools.send("Runtime.evaluate", expression=height, returnByValue=True))
                     .get("result", {}).get("value") or visit.size[1])
    shot = await devtools.send("Page.captureScreenshot", format="png", captureBeyondViewport=True,
                               clip={"x": 0, "y": 0, "width": visit.size[0], "height": min(visit.size[1], height),
                                     "scale": 1})
    visit.screenshot = base64.b64decode(shot["data"])
    while not devtools.events.empty():  # errors reported while the page was inspected
        if (error := _describe(devtools.events.get_nowait())) is not None:
            visit.errors.append(error)


async def listening_url(process: asyncio.subprocess.Process, listening: re.Pattern[str], browser: str) -> str:
    """The address a browser started with a remote protocol says it listens on (its stderr's first match)."""
    assert process.stderr is not None
    seen = []
    while line := await process.stderr.readline():
        text = line.decode(errors="replace")
        if match := listening.search(text):
            return match.group(1)
        seen.append(text.strip())
    raise RuntimeError(f"{browser} exited before it listened: " + " | ".join(seen[-5:]))


def open_page(path: Path, expression: str = "document.title", *, chromium: str | None = None,
              width: int = 1100, max_height: int = 20000, cut_after: str | None = None,
              seconds: float = 60.0) -> PageVisit:
    """Open ``path`` in headless Chromium; what it logged, requested, evaluated to, and looked like.

    The screenshot is the whole page, cut at ``max_height`` CSS pixels, or below the element that the CSS
    selector ``cut_after`` finds; everything takes at most ``seconds``.
    """
    return open_url(path.resolve().as_uri(), expression, chromium=chromium, width=width, max_height=max_height,
                    cut_after=cut_after, seconds=seconds)


def open_url(url: str, expression: str = "document.title", *, chromium: str | None = None, width: int = 1100,
             max_height: int = 20000, cut_after: str | None = None, seconds: float = 60.0) -> PageVisit:
    """:func:`open_page` for a URL (a page a loopback server serves); an expression that gives a promise is
    awaited (a test may drive the page: click, wait, read)."""
    binary = chromium or find_chromium()
    if binary is None:
        raise FileNotFoundError("no chromium on the PATH (Debian: apt-get install chromium)")
    height = max_height if cut_after is None else f"{CUT_AFTER % json.dumps(cut_after)} || {max_height}"
    return asyncio.run(_open(binary, url, expression, (width, height), seconds))


async def _open(binary: str, page_url: str, expression: str, frame: tuple[int, int | str],
                seconds: float) -> PageVisit:
    import aiohttp

    profile = tempfile.mkdtemp(prefix="maic-chromium-")
    sandbox = ["--no-sandbox"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []  # root has no sandbox
    process = await asyncio.create_subprocess_exec(binary, *FLAGS, *sandbox, f"--user-data-dir={profile}",
                                                   "about:blank", stdin=asyncio.subprocess.DEVNULL,
                                                   stdout=asyncio.subprocess.DEVNULL,
                                                   stderr=asyncio.subprocess.PIPE)
    visit = PageVisit()
    tasks: list[asyncio.Task[None]] = []
    closing = False
    try:
        async with asyncio.timeout(seconds):
            url = await listening_url(process, LISTENING, "chromium")
            tasks.append(asyncio.create_task(_drain(process)))  # a full stderr pipe would stall the browser
            async with aiohttp.ClientSession() as client, client.ws_connect(url, max_msg_size=0) as socket:
                devtools = DevTools(socket)
                tasks.append(asyncio.create_task(devtools.listen()))
                await _visit(devtools, page_url, expression, frame, visit)
                await socket.send_str(json.dumps({"id": 0, "method": "Browser.close"}))  # no reply comes
                closing = True
    finally:
        for task in tasks:
            task.cancel()
        await _stop(process, 10 if closing else 0)
        shutil.rmtree(profile, ignore_errors=True)
    return visit


async def _drain(process: asyncio.subprocess.Process) -> None:
    assert process.stderr is not None
    while await process.stderr.read(65536):
        pass


async def _stop(process: asyncio.subprocess.Process, grace: float) -> None:
    """Give the browser ``grace`` seconds to close itself (after Browser.close), then kill it."""
    try:
        await asyncio.wait_for(process.wait(), grace)
    except TimeoutError:
        process.kill()
        await process.wait()
