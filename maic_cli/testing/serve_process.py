"""A real ``maic serve`` process for tests and benchmarks: ``sys.executable -m maic_cli serve`` on a free
``127.0.0.1`` port, ready once ``/healthz`` answers; its stderr (the access log) kept in a file.

Also :class:`HAProxy`: Debian's ``haproxy`` binary round-robining ``/v1/turn`` over several instances,
with ``/healthz`` checks, for the scale-out tests (skipped by the caller when the binary is missing).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Self


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def wait_until_up(url: str, deadline: float, process: subprocess.Popen[bytes] | None = None) -> None:
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"the process exited ({process.returncode}) before {url} answered")
        try:
            with urllib.request.urlopen(url, timeout=1) as answer:
                if answer.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            time.sleep(0.05)
    raise RuntimeError(f"{url} did not answer in time")


class ServeProcess:
    """``maic serve ARGS --port P``; ``url`` is its base address; :meth:`log` its stderr so far."""

    def __init__(self, *args: str, env: dict[str, str] | None = None, port: int | None = None) -> None:
        self.args = list(args)
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = {**os.environ, **(env or {})}
        self.process: subprocess.Popen[bytes] | None = None
        self._log = tempfile.NamedTemporaryFile(prefix="maic-serve-", suffix=".log", delete=False)

    def start(self, timeout: float = 60.0) -> Self:
        self.process = subprocess.Popen([sys.executable, "-m", "maic_cli", "serve", "--port", str(self.port),
                                         *self.args], env=self.env, stdout=self._log, stderr=self._log)
        wait_until_up(self.url + "/healthz", time.monotonic() + timeout, self.process)
        return self

    def log(self) -> str:
        return Path(self._log.name).read_text(encoding="utf-8", errors="replace")

    def kill(self) -> None:
        """SIGKILL: the instance dies mid-whatever, as a crashed machine would."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(10)

    def stop(self) -> int | None:
        if self.process is None:
            return None
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        self._log.close()
        return self.process.returncode

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
        Path(self._log.name).unlink(missing_ok=True)


HAPROXY_CONFIG = """global
    maxconn 4096
defaults
    mode http
    timeout connect 2s
    timeout client 60s
    timeout server 60s
    retries 2
    option redispatch
frontend maic
    bind 127.0.0.1:{port}
    default_backend turns
backend turns
    balance roundrobin
    option httpchk GET /healthz
    default-server inter 300ms fall 1 rise 1
{servers}
"""


class HAProxy:
    """Debian's ``haproxy`` in front of ``backends`` (base URLs), round-robin, on a free port."""

    def __init__(self, backends: list[str]) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        servers = "\n".join(f"    server s{i} {url.split('://', 1)[1]} check" for i, url in enumerate(backends))
        self._folder = tempfile.TemporaryDirectory(prefix="maic-haproxy-")
        self.config = Path(self._folder.name) / "haproxy.cfg"
        self.config.write_text(HAPROXY_CONFIG.format(port=self.port, servers=servers), encoding="utf-8")
        self.process: subprocess.Popen[bytes] | None = None

    @staticmethod
    def binary() -> str | None:
        return shutil.which("haproxy") or next((p for p in ("/usr/sbin/haproxy",) if Path(p).exists()), None)

    def start(self) -> Self:
        binary = self.binary()
        assert binary is not None, "haproxy is not installed"
        self.process = subprocess.Popen([binary, "-db", "-f", str(self.config)], stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL)
        wait_until_up(self.url + "/healthz", time.monotonic() + 20, self.process)
        return self

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(10)
        self._folder.cleanup()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
