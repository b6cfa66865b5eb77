"""A learning record store on 127.0.0.1 that misbehaves on purpose, for the secret and timeout tests: it
echoes the request (headers and all) in its error answers, redirects to a URL holding the credentials,
drips, sends megabytes or invalid UTF-8, or takes the connection and says nothing.  It runs in a thread
(``maic`` commands call ``asyncio.run`` themselves) and is stopped at the end."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class EchoStore:
    url: str
    mode: str = "echo400"
    seen: list[dict[str, str]] = field(default_factory=list)  # the headers of each request
    paths: list[str] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)


def _handler(store: EchoStore) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:
            return

        def _answer(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
            self.send_response(status)
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _request_text(self) -> str:
            return f"{self.requestline}\n{self.headers}"

        def do_POST(self) -> None:
            self._handle()

        def do_PUT(self) -> None:
            self._handle()

        def _handle(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            self.rfile.read(length)
            store.seen.append(dict(self.headers.items()))
            store.paths.append(self.path)
            auth = self.headers.get("Authorization", "")
            mode = store.mode
            if mode == "ok":
                self._answer(200, b'["id"]', {"Content-Type": "application/json"})
            elif mode == "echo400":
                self._answer(400, f"bad request: {self._request_text()}".encode())
            elif mode == "echo500":
                self._answer(500, f"internal error while handling Authorization: {auth}".encode())
            elif mode == "echo401json":
                escaped = auth.replace("/", "\\/")
                self._answer(401, f'{{"error": "denied", "authorization": "{escaped}"}}'.encode())
            elif mode == "redirect":
                self._answer(302, f"moved, see http://{auth}@elsewhere.invalid/?{self.path}".encode(),
                             {"Location": f"http://elsewhere.invalid/steal?auth={auth.replace(' ', '+')}"})
            elif mode == "huge":
                self._answer(400, b"x" * 3_000_000 + auth.encode() + b"y" * 1_000)
            elif mode == "badutf8":
                self._answer(400, b"\xff\xfe\xc3(" + auth.encode() + b"\xed\xa0\x80 " + self._request_text().encode())
            elif mode == "drip":
                self.send_response(400)
                self.send_header("Content-Length", "100000")
                self.end_headers()
                for char in f"slowly: {auth} " * 10:
                    if store.stop.is_set():
                        return
                    self.wfile.write(char.encode())
                    self.wfile.flush()
                    time.sleep(0.05)
            elif mode == "silent":
                store.stop.wait(60)  # takes the connection, says nothing
            else:
                self._answer(500, b"unknown mode")

    return Handler


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: object, client_address: object) -> None:
        return  # a client that hangs up mid-answer is expected here (and would write into the CLI's stderr)


@contextmanager
def echo_store(mode: str = "echo400") -> Iterator[EchoStore]:
    store = EchoStore("", mode)
    server = _QuietServer(("127.0.0.1", 0), _handler(store))
    server.daemon_threads = True
    store.url = f"http://127.0.0.1:{server.server_address[1]}/xAPI"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield store
    finally:
        store.stop.set()
        server.shutdown()
        server.server_close()
