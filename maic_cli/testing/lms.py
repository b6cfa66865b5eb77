"""An LMS stand-in on 127.0.0.1: a launch page that makes scorm-again's SCORM 1.2 runtime ``window.API`` and opens
a SCO in an iframe, as an LMS does (for the SCORM package tests).

The server serves ``/`` (the launch page), ``/scorm12.js`` (scorm-again's SCORM 1.2 build, from the npm
package folder given) and ``/sco/NAME`` (the unpacked package's files, plain names only).  The launch page's
``launch(saved)`` makes a fresh API (``saved``: the flattened CMI data an LMS kept from the last attempt, loaded
before LMSInitialize as an LMS does: the mastery score from the manifest, ``cmi.core.entry`` ``resume``, the
suspend data) and loads the SCO; ``API`` calls are counted in ``window.calls``, the values the SCO set are kept
in ``window.sets``; ``leave()`` unloads the SCO; ``kept()`` is what the LMS holds.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from aiohttp import web

from .loopback import LoopbackServer

_PLAIN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")
LAUNCH = """<!doctype html><html><head><meta charset="utf-8"><title>LMS stand-in</title><link rel="icon" href="data:,">
<script src="/scorm12.js"></script></head><body>
<iframe id="sco" title="lesson" style="width:1200px;height:900px;border:0"></iframe>
<script>
window.calls = [];
window.launch = function (saved) {
  window.API = new Scorm12API({logLevel: 5, autocommit: false});
  window.sets = {};
  ["LMSInitialize", "LMSCommit", "LMSFinish"].forEach(function (name) {
    window.API.on(name, function () { window.calls.push(name); });
  });
  window.API.on("LMSSetValue.cmi.*", function (element, value) { window.sets[element] = value; });
  window.API.loadFromFlattenedJSON(Object.assign({"cmi.student_data.mastery_score": %(mastery)s}, saved || {}));
  return new Promise(function (done) {
    var frame = document.getElementById("sco");
    frame.onload = function () { done(); };
    frame.src = "/sco/%(page)s";
  });
};
window.leave = function () {
  return new Promise(function (done) {
    var frame = document.getElementById("sco");
    frame.onload = function () { done(); };
    frame.src = "about:blank";
  });
};
window.kept = function () {
  var core = window.API.cmi.core;
  return {"cmi.core.lesson_status": core.lesson_status, "cmi.core.score.raw": core.score.raw,
          "cmi.core.score.min": core.score.min, "cmi.core.score.max": core.score.max,
          "cmi.core.session_time": window.sets["cmi.core.session_time"],
          "cmi.core.lesson_location": core.lesson_location,
          "cmi.core.exit": window.sets["cmi.core.exit"], "cmi.suspend_data": window.API.cmi.suspend_data};
};
window.launched = window.launch(null);
</script></body></html>"""


class LmsStandIn(LoopbackServer):
    name = "lms-stand-in"

    def __init__(self, runtime: Path, package: Path, *, mastery: str = "80", page: str = "index.html") -> None:
        super().__init__()
        self.runtime, self.package = runtime, package
        self.launch_page = LAUNCH % {"mastery": json.dumps(mastery), "page": page}

    @property
    def url(self) -> str:
        return self.base_url.removesuffix("/v1") + "/"

    def routes(self, app: web.Application) -> None:
        async def launch(_: web.Request) -> web.Response:
            return web.Response(text=self.launch_page, content_type="text/html")

        async def runtime(_: web.Request) -> web.Response:
            return web.Response(body=self.runtime.read_bytes(), content_type="application/javascript")

        async def sco(request: web.Request) -> web.Response:
            name = request.match_info["name"]
            path = self.package / name
            if not _PLAIN.fullmatch(name) or not path.is_file():
                raise web.HTTPNotFound()
            kind = "text/html" if name.endswith(".html") else "application/octet-stream"
            return web.Response(body=path.read_bytes(), content_type=kind)

        app.router.add_get("/", launch)
        app.router.add_get("/scorm12.js", runtime)
        app.router.add_get("/sco/{name}", sco)
