"""The LRS credentials never reach the terminal, in any form: a real ``maic replay --lrs`` against stores on
127.0.0.1 that echo the request (400), the header (500), a JSON-escaped header (401), redirect with the
credentials in ``Location``, drip, send megabytes or invalid UTF-8; credentials in the URL are sent as basic
auth and never shown; a value that cannot be sent is one input error naming its variable; a store that
takes the connection and says nothing is waited for briefly, said, and given up in one line."""

from __future__ import annotations

import asyncio
import base64
import json
import time
from pathlib import Path
from urllib.parse import quote

import pytest
from typer.testing import CliRunner

from maic_cli.cli.app import app
from maic_cli.errors import InputError
from maic_cli.store import lrs
from maic_cli.store.lrs import LrsError, push
from maic_cli.store.lrs_auth import credentials, shown_url
from maic_cli.untrusted import redact
from tests.lrs_echo import echo_store

runner = CliRunner()
USER, PASSWORD = "teacher", "S3cretPassw0rd"


def forms(user: str, password: str) -> list[str]:
    """Every form the secret could be printed in."""
    pair = f"{user}:{password}"
    encoded = base64.b64encode(pair.encode()).decode()
    return [password, pair, encoded, encoded.replace("/", "\\/"), quote(encoded, safe=""), quote(password, safe="")]


@pytest.fixture()
def transcript(tmp_path: Path) -> Path:
    result = runner.invoke(app, ["chat", "--model", "demo", "--session", str(tmp_path / "s.json"), "--name", "Ada",
                                 "--plain", "--transcript", str(tmp_path / "t.jsonl")],
                           input="What is a fraction?\n/quit\n")
    assert result.exit_code == 0, result.output
    return tmp_path / "t.jsonl"


@pytest.fixture(autouse=True)
def _quick(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lrs, "PAUSES", (0.0, 0.0, 0.0))
    for name in ("MAIC_LRS_TOKEN", "MAIC_LRS_USER", "MAIC_LRS_PASSWORD"):
        monkeypatch.delenv(name, raising=False)


def send(transcript: Path, url: str, env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> tuple[int, str]:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    result = runner.invoke(app, ["replay", str(transcript), "--lrs", url])
    return result.exit_code, result.stdout + result.stderr


@pytest.mark.parametrize("mode", ["echo400", "echo500", "echo401json", "redirect", "huge", "badutf8", "drip"])
@pytest.mark.parametrize(("user", "password"), [(USER, PASSWORD), ("ada", "pw1"), ("ada", "p/w+?=x&")])
def test_a_store_that_echoes_the_credentials_shows_them_nowhere(
        transcript: Path, monkeypatch: pytest.MonkeyPatch, mode: str, user: str, password: str) -> None:
    with echo_store(mode) as store:
        code, said = send(transcript, store.url, {"MAIC_LRS_USER": user, "MAIC_LRS_PASSWORD": password},
                          monkeypatch)
        sent = store.seen[0]["Authorization"]
    assert code == 1, said
    assert sent == "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()  # it was sent
    assert "learning record store" in said and said.count("\n") == 1 and "unexpected" not in said
    for secret in forms(user, password):
        assert secret not in said, (secret, said)
    if mode == "redirect":
        assert "302" in said and len(store.seen) == 1  # not followed
    if mode == "echo500":
        assert len(store.seen) == lrs.ATTEMPTS


def test_the_exact_attack_basic_auth_echoed_by_a_400_and_a_500(transcript: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    for mode in ("echo400", "echo500"):
        with echo_store(mode) as store:
            code, said = send(transcript, store.url, {"MAIC_LRS_USER": USER, "MAIC_LRS_PASSWORD": PASSWORD},
                              monkeypatch)
        assert code == 1 and "dGVhY2hlcjpTM2NyZXRQYXNzdzByZA==" not in said and PASSWORD not in said, said
        assert "[redacted]" in said


@pytest.mark.parametrize("token", ["tok", "tok-1234567890abcdef", "a/b+c=="])
def test_a_token_is_never_shown_whatever_its_length(transcript: Path, monkeypatch: pytest.MonkeyPatch,
                                                    token: str) -> None:
    for mode in ("echo400", "echo500", "echo401json", "redirect"):
        with echo_store(mode) as store:
            code, said = send(transcript, store.url, {"MAIC_LRS_TOKEN": token}, monkeypatch)
            assert store.seen[0]["Authorization"] == f"Bearer {token}"
        assert code == 1 and token not in said and quote(token, safe="") not in said, said


def test_credentials_in_the_url_are_sent_as_basic_auth_and_never_shown(
        transcript: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with echo_store("ok") as store:
        url = store.url.replace("http://", f"http://{USER}:{quote(PASSWORD)}@")
        code, said = send(transcript, url + "?token=qtok", {}, monkeypatch)
        assert store.seen[0]["Authorization"] == "Basic dGVhY2hlcjpTM2NyZXRQYXNzdzByZA=="
        assert store.paths[0].startswith("/xAPI/statements?token=qtok")  # the query is the user's: sent
    assert code == 0 and "Sent " in said, said
    assert shown_url(store.url + "/statements") in said
    for secret in [*forms(USER, PASSWORD), "qtok", f"{USER}:"]:
        assert secret not in said, (secret, said)
    with echo_store("echo400") as store:  # a store that echoes the URL and its query: the token is redacted
        code, said = send(transcript, store.url + "?access_token=qtok", {}, monkeypatch)
    assert code == 1 and "qtok" not in said and "access_token" in said, said


@pytest.mark.parametrize(("env", "url_auth", "named"), [
    ({"MAIC_LRS_TOKEN": "abc\r\nX-Evil: 1"}, "", "MAIC_LRS_TOKEN"),
    ({"MAIC_LRS_TOKEN": "abc\n"}, "", "MAIC_LRS_TOKEN"),
    ({"MAIC_LRS_TOKEN": "a\x1b[31mb"}, "", "MAIC_LRS_TOKEN"),
    ({"MAIC_LRS_TOKEN": "a\u0085b"}, "", "MAIC_LRS_TOKEN"),
    ({"MAIC_LRS_USER": "ada\r\n", "MAIC_LRS_PASSWORD": "pw"}, "", "MAIC_LRS_USER"),
    ({"MAIC_LRS_USER": "ada", "MAIC_LRS_PASSWORD": "pw\rX"}, "", "MAIC_LRS_PASSWORD"),
    ({"MAIC_LRS_USER": "a:da", "MAIC_LRS_PASSWORD": "pw"}, "", "MAIC_LRS_USER"),
    ({"MAIC_LRS_TOKEN": "tok-123456789"}, "u:pw@", "MAIC_LRS_TOKEN"),
    ({"MAIC_LRS_USER": "ada", "MAIC_LRS_PASSWORD": "pw"}, "u:pw@", "MAIC_LRS_USER"),
    ({}, "u:p%0d%0aX@", "password"),
    ({}, "u%0a:pw@", "user name"),
])
def test_credentials_that_cannot_be_sent_are_one_input_error(
        transcript: Path, monkeypatch: pytest.MonkeyPatch, env: dict[str, str], url_auth: str, named: str) -> None:
    with echo_store("ok") as store:
        url = store.url.replace("http://", f"http://{url_auth}")
        code, said = send(transcript, url, env, monkeypatch)
        assert store.seen == []  # nothing was sent
    assert code == 2 and named in said and said.count("\n") == 1 and "unexpected" not in said, said
    for value in env.values():
        assert value.strip() not in said or value.strip() in ("ada", "a:da")


def test_chat_refuses_credentials_that_cannot_be_sent_before_the_class(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MAIC_LRS_TOKEN", "abc\r\nX: y")
    result = runner.invoke(app, ["chat", "--model", "demo", "--session", str(tmp_path / "s.json"), "--plain",
                                 "--lrs", "http://127.0.0.1:9/xAPI"], input="hi\n")
    assert result.exit_code == 2 and "MAIC_LRS_TOKEN" in result.stderr and not (tmp_path / "s.json").exists()


@pytest.mark.parametrize("url", ["http://[::1/xAPI", "http://" + "a" * 300 + ".example/xAPI",
                                 "http://h\u00e9" + "x" * 70 + ".example/xAPI", "http://127.0.0.1:99999/xAPI",
                                 "http://127.0.0.1/x\r\nHost: evil", "http://127.0.0.1/x y", "http:///xAPI",
                                 "http://127.0.0.1/" + "x" * 5000])
def test_a_url_that_cannot_be_a_store_is_one_input_error(transcript: Path, url: str) -> None:
    result = runner.invoke(app, ["replay", str(transcript), "--lrs", url])
    assert result.exit_code == 2 and "--lrs" in result.stderr, result.output
    assert "unexpected" not in result.stderr and result.stderr.count("\n") == 1


def test_a_store_that_never_answers_is_said_and_given_up_quickly(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lrs, "FIRST_BYTE", 1.0)
    monkeypatch.setattr(lrs, "WAIT_NOTICE", 0.3)
    told: list[str] = []
    with echo_store("silent") as store:
        began = time.monotonic()
        with pytest.raises(LrsError) as caught:
            asyncio.run(push(store.url, [{"id": "x"}], env={}, waiting=told.append))
        took = time.monotonic() - began
        tries = len(store.seen)
    message = str(caught.value)
    assert "did not answer within 1 s (2 attempts)" in message and "\n" not in message
    assert len(told) == 1 and "waiting for the learning record store" in told[0]
    assert tries == lrs.TIMEOUT_ATTEMPTS and took < 5


def test_the_waits_are_short() -> None:
    """What a silent store costs at most, with the shipped settings: two first-byte timeouts and a pause."""
    assert lrs.WAIT_NOTICE <= 3 and lrs.FIRST_BYTE <= 15 and lrs.TIMEOUT_ATTEMPTS == 2
    assert lrs.TIMEOUT_ATTEMPTS * lrs.FIRST_BYTE + lrs.PAUSES[0] <= 31


def test_maic_says_it_is_waiting(transcript: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lrs, "FIRST_BYTE", 1.5)
    monkeypatch.setattr(lrs, "WAIT_NOTICE", 0.3)
    with echo_store("silent") as store:
        code, said = send(transcript, store.url, {}, monkeypatch)
    assert code == 1 and "maic: waiting for the learning record store at" in said
    assert "did not answer within 1.5 s" in said and "unexpected" not in said


def test_short_secrets_are_redacted_only_while_in_use_and_only_alone() -> None:
    _, sent = credentials("http://u:pw1@127.0.0.1/xAPI", {})
    from maic_cli.untrusted import secrets_in_use

    with secrets_in_use(sent.secrets):
        assert redact("password pw1 refused; pw12 and apw1 are other words") == (
            "password [redacted] refused; pw12 and apw1 are other words")
        assert "dTpwdzE=" not in redact("Basic dTpwdzE=")
    assert redact("pw1") == "pw1"  # after the push, a short word is a word again


def test_the_header_values_are_what_the_store_expects() -> None:
    assert credentials("http://127.0.0.1/xAPI", {"MAIC_LRS_USER": USER, "MAIC_LRS_PASSWORD": PASSWORD})[1].headers == {
        "Authorization": "Basic dGVhY2hlcjpTM2NyZXRQYXNzdzByZA=="}
    target, sent = credentials("http://a%40b:p%3Aw@127.0.0.1:8/xAPI?x=1", {})
    assert target == "http://127.0.0.1:8/xAPI?x=1"
    assert sent.headers["Authorization"] == "Basic " + base64.b64encode(b"a@b:p:w").decode()
    with pytest.raises(InputError, match="MAIC_LRS_TOKEN"):
        credentials("http://127.0.0.1/xAPI", {"MAIC_LRS_TOKEN": "x\ny"})
    assert json.dumps(shown_url("http://u:p@[::1]:8/x?token=t#f")) == '"http://[::1]:8/x"'
