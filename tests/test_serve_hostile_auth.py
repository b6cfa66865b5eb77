"""``maic serve`` attacked on its door: the token (spellings, absence, bytes no header should hold, two of
them, in the query), what reaches the log (a token in a URL, a malformed header quoting it), a web page in the
learner's browser posting to a tokenless server on loopback, the host spellings that must not listen
beyond this machine without a token, and what ``/metrics`` shows — each against a real ``maic serve``."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from maic_cli.cli.app import app
from maic_cli.errors import InputError
from maic_cli.serve.server import check_exposure
from maic_cli.testing.openai_server import LoopbackOpenAIServer
from maic_cli.testing.serve_process import ServeProcess, wait_until_up
from tests.helpers import reply

from .serve_hostile import GOOD, TOKEN, address, alive, body_of, get, head, post, raw, status_of

PROVIDER_KEY = "sk-hostile-provider-key-00112233445566"


@pytest.fixture(scope="module")
def model() -> Iterator[LoopbackOpenAIServer]:
    with LoopbackOpenAIServer(default=reply("Light scatters.")) as server:
        yield server


@pytest.fixture(scope="module")
def served(model: LoopbackOpenAIServer) -> Iterator[ServeProcess]:
    with ServeProcess("--model", "openai/loopback", "--api-base", model.base_url, "--director", "rules",
                      "--idle-timeout", "2", env={"MAIC_SERVE_TOKEN": TOKEN, "OPENAI_API_KEY": PROVIDER_KEY}
                      ) as server:
        yield server


@pytest.fixture(scope="module")
def open_server(model: LoopbackOpenAIServer) -> Iterator[ServeProcess]:
    """No token: loopback only."""
    with ServeProcess("--model", "openai/loopback", "--api-base", model.base_url, "--director", "rules",
                      env={"MAIC_SERVE_TOKEN": "", "OPENAI_API_KEY": PROVIDER_KEY}) as server:
        yield server


@pytest.mark.parametrize(("authorization", "status"), [
    (f"Bearer {TOKEN}", 200),
    (f"bearer {TOKEN}", 200),  # the scheme is case-insensitive (RFC 9110 11.1)
    (f"BEARER {TOKEN}", 200),
    (f"Bearer  {TOKEN} ", 200),  # spaces around the credentials are not part of it
    (f"Bearer {TOKEN} extra", 401),
    (f"Bearer {TOKEN[:-1]}", 401),
    (f"Bearer {TOKEN}x", 401),
    (f"Bearer {TOKEN.upper()}", 401),  # the token itself is compared exactly
    (f"Token {TOKEN}", 401),
    (f"Basic {TOKEN}", 401),
    (TOKEN, 401),
    ("Bearer", 401),
    ("Bearer ", 401),
    ("", 401),
])
def test_bearer_spellings(served: ServeProcess, authorization: str, status: int) -> None:
    assert get(served, "/metrics", token=None, headers={"Authorization": authorization})[0] == status


def test_the_header_name_is_case_insensitive_and_no_header_is_401(served: ServeProcess) -> None:
    answer = raw(served, head("GET", "/metrics", token=None, extra=f"aUtHoRiZaTiOn: Bearer {TOKEN}\r\n".encode()))
    assert status_of(answer) == 200
    answer = raw(served, head("GET", "/metrics", token=None))
    assert status_of(answer) == 401 and b"WWW-Authenticate: Bearer" in answer


@pytest.mark.parametrize("value", [b"Bearer \xff\xfe\xfd", b"Bearer \xc3\xa9t\xc3\xa9",
                                   b"Bearer " + TOKEN.encode() + b"\xe9", b"\xff" + TOKEN.encode()])
def test_bytes_no_token_holds_are_401_not_a_crash(served: ServeProcess, value: bytes) -> None:
    """A header of Latin-1 or broken UTF-8 bytes is a wrong token (401), not a 500 with a traceback."""
    answer = raw(served, head("GET", "/metrics", token=None, extra=b"Authorization: " + value + b"\r\n"))
    assert status_of(answer) == 401, answer[:200]
    assert "Traceback" not in served.log()


@pytest.mark.parametrize("order", ["right first", "wrong first"])
def test_two_authorization_headers_are_refused_whichever_comes_first(served: ServeProcess, order: str) -> None:
    """Two tokens is not a token: a proxy that appends one must not make the request ambiguous."""
    right, wrong = f"Authorization: Bearer {TOKEN}\r\n".encode(), b"Authorization: Bearer nope\r\n"
    extra = right + wrong if order == "right first" else wrong + right
    assert status_of(raw(served, head("GET", "/metrics", token=None, extra=extra))) == 401


def test_a_token_in_the_query_is_not_a_token_and_never_reaches_the_log(served: ServeProcess) -> None:
    for name in ("token", "access_token", "auth"):
        assert get(served, f"/metrics?{name}={TOKEN}", token=None)[0] == 401
        status, body = post(served, GOOD, path=f"/v1/turn?{name}={TOKEN}", token=None)
        assert status == 401 and TOKEN.encode() not in body
    assert TOKEN not in served.log()


def test_a_malformed_header_quoting_the_token_never_reaches_the_log(served: ServeProcess) -> None:
    """The HTTP parser refuses a control character in a header with a message quoting the line: that line
    holds the token, and neither the answer's log nor anything else on the server may keep it."""
    answer = raw(served, b"GET /metrics HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + TOKEN.encode()
                 + b"\x01\r\n\r\n")
    assert status_of(answer) == 400
    answer = raw(served, f"GET /metrics?token={TOKEN}\x7f HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    assert status_of(answer) == 400
    assert alive(served)
    log = served.log()
    assert TOKEN not in log and PROVIDER_KEY not in log


def test_a_trace_never_echoes_the_token(served: ServeProcess) -> None:
    for method in ("TRACE", "OPTIONS", "TRACK", "DEBUG"):
        answer = raw(served, head(method, "/v1/turn"))
        assert status_of(answer) in (400, 404, 405), answer[:100]
        assert TOKEN.encode() not in answer


def test_a_web_page_cannot_post_to_a_tokenless_server_on_loopback(open_server: ServeProcess) -> None:
    """A tokenless server listens on loopback, so any web page the learner opens can reach it: a form or a
    ``fetch`` from another site (or a DNS name rebound to 127.0.0.1) would spend the server's key.  A browser
    names the page in ``Origin``; a request from a page not on this machine is refused (403) before any turn."""
    for origin in ("https://evil.example", "http://attacker.test:8000", "null"):
        for content_type in ("text/plain", "application/x-www-form-urlencoded", "application/json"):
            status, body = post(open_server, GOOD, token=None, headers={"Origin": origin,
                                                                        "Content-Type": content_type})
            assert status == 403, (origin, content_type, body[:200])
        assert post(open_server, b"{}", path="/api/chat", token=None, headers={"Origin": origin})[0] == 403
    metrics = get(open_server, "/metrics", token=None)[1]
    assert 'maic_turns_total{outcome="ok"} 0' in metrics  # no turn ran, no model call was made
    # the same request from a page on this machine (a local dev server), or from no browser at all, is a turn
    for headers in ({"Origin": "http://localhost:3000"}, {"Origin": "http://127.0.0.1:5173"}, {}):
        status, body = post(open_server, GOOD, token=None, headers=headers)
        assert status == 200 and b'"type":"done"' in body


def test_a_name_rebound_to_loopback_cannot_read_a_tokenless_server(open_server: ServeProcess,
                                                                   served: ServeProcess) -> None:
    """A DNS name an attacker rebinds to 127.0.0.1 makes the browser send its own GETs (no ``Origin``) with that
    name in ``Host``: a tokenless server answers only this machine's names, so ``/v1/info`` and ``/metrics``
    stay unread.  ``/healthz`` is open to any name; a server with a token serves any name (a proxy's)."""
    for name in ("evil.example", "evil.example:8000", "127.0.0.1.evil.example", "attacker.test:80"):
        for path in ("/v1/info", "/metrics"):
            status, body = get(open_server, path, token=None, headers={"Host": name})
            assert status == 403 and "maic_turns_total" not in body and "demo" not in body, (name, path, body)
        assert post(open_server, GOOD, token=None, headers={"Host": name})[0] == 403
        assert get(open_server, "/healthz", token=None, headers={"Host": name})[0] == 200
        assert get(served, "/metrics", headers={"Host": name})[0] == 200  # the token decides there
    port = address(open_server)[1]
    for name in (f"localhost:{port}", f"127.0.0.1:{port}", f"[::1]:{port}", "127.0.0.2"):
        assert get(open_server, "/metrics", token=None, headers={"Host": name})[0] == 200, name


def test_metrics_without_a_token_show_counters_only(open_server: ServeProcess, model: LoopbackOpenAIServer) -> None:
    status, text = get(open_server, "/metrics", token=None)
    assert status == 200
    assert PROVIDER_KEY not in text and model.base_url not in text and "loopback" not in text
    sample = re.compile(r'^maic_[a-z_]+(\{[a-z]+="[A-Za-z0-9_.+]+"\})? [0-9.e+-]+$')
    for line in text.splitlines():
        assert line.startswith("# HELP maic_") or line.startswith("# TYPE maic_") or sample.match(line), line


def test_metrics_labels_cannot_be_injected(served: ServeProcess) -> None:
    """Refusals of every kind (each status a label), a path and a method crafted as label text: every line of
    ``/metrics`` is still one Prometheus sample of maic's own names and label values."""
    raw(served, head("GET", '/x"} 1\nmaic_fake{a="', token=None))
    raw(served, head('GE"T', "/metrics"))
    post(served, b"[" * 5000, token=TOKEN)
    post(served, GOOD, token="wrong")
    post(served, GOOD, path="/nowhere")
    status, text = get(served, "/metrics")
    assert status == 200
    sample = re.compile(r'^maic_[a-z_]+(\{[a-z]+="[A-Za-z0-9_.+]+"\})? [0-9.e+-]+$')
    for line in text.splitlines():
        assert line.startswith(("# HELP maic_", "# TYPE maic_")) or sample.match(line), line
    assert "maic_fake" not in text


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "", " ", "0", "127.1", "::ffff:127.0.0.1", "localhost.",
                                  "example.com", "10.0.0.1", "[::]", "0.0.0.0 "])
def test_beyond_loopback_spellings_without_a_token_are_refused(host: str) -> None:
    with pytest.raises(InputError, match="MAIC_SERVE_TOKEN"):
        check_exposure(host, None)
    check_exposure(host, TOKEN)  # with a token it may listen there


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "::1", "[::1]", "localhost", "LOCALHOST"])
def test_loopback_spellings_listen_without_a_token(host: str) -> None:
    check_exposure(host, None)


@pytest.mark.parametrize("host", ["0.0.0.0", "::", ""])
def test_the_command_refuses_in_one_line_with_exit_2(host: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MAIC_SERVE_TOKEN", raising=False)
    result = CliRunner().invoke(app, ["serve", "--host", host, "--model", "demo", "--port", "0"])
    assert result.exit_code == 2, result.output
    assert len(result.output.strip().splitlines()) == 1


def test_an_empty_token_is_no_token(monkeypatch: pytest.MonkeyPatch) -> None:
    """``MAIC_SERVE_TOKEN=`` (set but empty) does not open the server beyond loopback."""
    monkeypatch.setenv("MAIC_SERVE_TOKEN", "")
    result = CliRunner().invoke(app, ["serve", "--host", "0.0.0.0", "--model", "demo", "--port", "0"])
    assert result.exit_code == 2


def test_the_server_is_alive_and_kept_no_secret(served: ServeProcess) -> None:
    assert alive(served)
    log = served.log()
    assert TOKEN not in log and PROVIDER_KEY not in log
    assert body_of(raw(served, head("GET", "/healthz", token=None))) == b'{"status": "ok"}'


def test_ipv6_loopback_in_brackets_listens_and_is_named_as_a_url(tmp_path: Path) -> None:
    """``--host [::1]`` (as a URL writes it) passes the exposure check, so it must listen too, and the address
    the server prints must be a URL a client can use."""
    try:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(("::1", 0))
            port = probe.getsockname()[1]
    except OSError:
        pytest.skip("no IPv6 loopback here")
    log = tmp_path / "serve.log"
    with log.open("wb") as out:
        process = subprocess.Popen([sys.executable, "-m", "maic_cli", "serve", "--host", "[::1]", "--port",
                                    str(port), "--model", "demo"], stdout=out, stderr=out,
                                   env={**os.environ, "MAIC_SERVE_TOKEN": ""})
        try:
            wait_until_up(f"http://[::1]:{port}/healthz", time.monotonic() + 60, process)
        finally:
            process.terminate()
            process.wait(10)
    assert f"http://[::1]:{port}" in log.read_text(encoding="utf-8")


def test_a_short_token_never_reaches_the_log_either(model: LoopbackOpenAIServer) -> None:
    """Keys shorter than 8 characters are not redacted everywhere (they would blank out words); the server's
    own token is, whatever its length."""
    short = "k9Zq2"
    with ServeProcess("--model", "openai/loopback", "--api-base", model.base_url, "--director", "rules",
                      env={"MAIC_SERVE_TOKEN": short}) as server:
        assert get(server, "/metrics", token=short)[0] == 200
        raw(server, f"GET /metrics?token={short} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        raw(server, f"GET /metrics HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {short}\x01\r\n\r\n".encode())
        assert get(server, "/healthz", token=None)[0] == 200
        log = server.log()
    assert "/metrics" in log and short not in log
