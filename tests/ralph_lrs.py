"""Ralph (ralph-malph, MIT): the xAPI models every statement is checked against, and a real learning
record store on 127.0.0.1 for the tests.

Ralph pins versions of its own (pydantic, fastapi, click …) that are not maic's, so it lives in a
virtual environment of its own: ``$MAIC_RALPH_VENV``, else ``~/.cache/maic-ralph/venv-<version>``,
created with pip the first time (a minute or two; CI builds it on its fresh machine from the package
registry).  When it cannot be built the tests that need it FAIL, saying why: they never skip in
silence.  ``MAIC_SKIP_RALPH=1`` skips them on purpose (a machine without a package registry).

The store (Ralph's own API app, served by uvicorn as ``ralph runserver`` does) runs with its
file-system backend in a temporary folder, on a free port, with one basic-auth user, and is
stopped at the end.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from filelock import FileLock

RALPH_VERSION = "5.1.0"
RALPH_REQUIREMENT = f"ralph-malph[backend-fs,lrs,cli]=={RALPH_VERSION}"
USER, PASSWORD = "maic", "lrs-test-secret"
VALIDATE = """
import json, sys
from ralph.models.xapi.base.statements import BaseXapiStatement
from ralph.models.xapi.base.unnested_objects import BaseXapiActivityInteractionDefinition
problems = []
for number, line in enumerate(open(sys.argv[1], encoding="utf-8"), 1):
    try:
        statement = json.loads(line)
        BaseXapiStatement.model_validate(statement)
        definition = statement["object"].get("definition", {})
        if "interactionType" in definition:
            BaseXapiActivityInteractionDefinition.model_validate(definition)
    except Exception as exc:
        problems.append(f"line {number}: {exc}")
print(json.dumps(problems))
"""


# `ralph runserver -b fs`, without its reloader, and with one change: Ralph 5.1's file-system store
# writes its file once ("create") and answers every later POST of new statements with a 500; it
# appends here, so one store takes several pushes, as a real one does.
SERVE = """
import sys
import uvicorn
from ralph.backends.data.base import BaseOperationType
from ralph.backends.lrs.fs import FSLRSBackend
FSLRSBackend.default_operation_type = BaseOperationType.APPEND
uvicorn.run("ralph.api:app", host="127.0.0.1", port=int(sys.argv[1]), log_level="info")
"""


def ralph_venv() -> Path:
    """Ralph's own virtual environment, built once (under a lock: test workers may race)."""
    if os.environ.get("MAIC_SKIP_RALPH") == "1":
        pytest.skip("MAIC_SKIP_RALPH=1: the xAPI model checks and the real LRS are skipped on purpose")
    venv = Path(os.environ.get("MAIC_RALPH_VENV") or Path.home() / ".cache" / "maic-ralph" / f"venv-{RALPH_VERSION}")
    ralph = venv / "bin" / "ralph"
    if ralph.exists():
        return venv
    venv.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(venv) + ".lock", timeout=1200):
        if ralph.exists():
            return venv
        steps = [[sys.executable, "-m", "venv", str(venv)],
                 [str(venv / "bin" / "pip"), "install", "--quiet", RALPH_REQUIREMENT, "requests"]]
        for step in steps:
            done = subprocess.run(step, capture_output=True, text=True, timeout=1200)
            if done.returncode != 0:
                pytest.fail(f"cannot build Ralph's environment at {venv} ({' '.join(step[:3])} …): "
                            f"{done.stderr.strip()[-500:]} — set MAIC_SKIP_RALPH=1 to skip these tests on purpose")
    return venv


def validate(venv: Path, statements: list[dict[str, Any]], folder: Path) -> list[str]:
    """What Ralph's pydantic xAPI models find wrong in ``statements`` (nothing: ``[]``)."""
    path = folder / "statements-to-validate.jsonl"
    path.write_text("".join(json.dumps(s) + "\n" for s in statements), encoding="utf-8")
    done = subprocess.run([str(venv / "bin" / "python"), "-c", VALIDATE, str(path)], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class RalphLRS:
    url: str  # the xAPI endpoint, e.g. http://127.0.0.1:PORT/xAPI
    process: subprocess.Popen[bytes]
    folder: Path

    def headers(self) -> dict[str, str]:
        pair = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
        return {"Authorization": f"Basic {pair}", "X-Experience-API-Version": "1.0.3"}

    def statements(self) -> list[dict[str, Any]]:
        """Every statement the store holds (read back through its API, page by page)."""
        found: list[dict[str, Any]] = []
        url: str | None = f"{self.url}/statements?limit=500"
        for _ in range(100):
            if url is None:
                break
            request = urllib.request.Request(url, headers=self.headers())
            with urllib.request.urlopen(request, timeout=30) as response:
                page = json.loads(response.read())
            found.extend(page["statements"])
            more = page.get("more")
            url = f"{self.url.rsplit('/xAPI', 1)[0]}{more}" if more else None
        return found


def start_ralph(venv: Path, folder: Path) -> RalphLRS:
    env = {**os.environ, "RALPH_APP_DIR": str(folder / "app"), "RALPH_RUNSERVER_BACKEND": "fs"}
    auth = subprocess.run([str(venv / "bin" / "ralph"), "auth", "-u", USER, "-p", PASSWORD, "-s", "all",
                           "-M", "mailto:maic@example.org", "-w"], cwd=folder, env=env, capture_output=True,
                          text=True, timeout=120)
    assert auth.returncode == 0, f"ralph auth failed: {auth.stderr[-1000:]}"
    port = free_port()
    with (folder / "ralph.log").open("wb") as log:  # the server keeps its own copy of the descriptor
        process = subprocess.Popen([str(venv / "bin" / "python"), "-c", SERVE, str(port)], cwd=folder, env=env,
                                   stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    lrs = RalphLRS(url=f"http://127.0.0.1:{port}/xAPI", process=process, folder=folder)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if process.poll() is not None:
            break
        try:
            request = urllib.request.Request(f"http://127.0.0.1:{port}/whoami", headers=lrs.headers())
            with urllib.request.urlopen(request, timeout=5) as response:
                if response.status == 200:
                    return lrs
        except (urllib.error.URLError, OSError):
            time.sleep(0.5)
    stop_ralph(lrs)
    pytest.fail(f"Ralph's LRS did not start: {(folder / 'ralph.log').read_text(errors='replace')[-1500:]}")


def stop_ralph(lrs: RalphLRS) -> None:
    """Stop the store and its reloader's server process (its own process group, started by us)."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(lrs.process.pid, sig)
        try:
            lrs.process.wait(timeout=20)
            return
        except subprocess.TimeoutExpired:
            continue
