"""Test setup: no network beyond loopback, user data in a temp dir, a loopback LLM server."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from maic_cli.testing.openai_server import LoopbackOpenAIServer

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

_LOCAL_HOSTS = {"127.0.0.1", "::1", "localhost", "0.0.0.0"}
_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex
_real_getaddrinfo = socket.getaddrinfo


def _check(address: object) -> None:
    if isinstance(address, tuple) and address and str(address[0]) not in _LOCAL_HOSTS:
        raise ConnectionRefusedError(f"tests may not reach the network: {address!r}")


def _guarded_connect(self: socket.socket, address: Any) -> None:
    _check(address)
    return _real_connect(self, address)


def _guarded_connect_ex(self: socket.socket, address: Any) -> int:
    _check(address)
    return _real_connect_ex(self, address)


def _guarded_getaddrinfo(host: object, *args: object, **kwargs: object):  # type: ignore[no-untyped-def]
    if host is not None and str(host) not in _LOCAL_HOSTS:
        raise socket.gaierror(f"tests may not resolve {host!r}")
    return _real_getaddrinfo(host, *args, **kwargs)  # type: ignore[arg-type]


@pytest.fixture(autouse=True)
def _no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(socket.socket, "connect", _guarded_connect)
    monkeypatch.setattr(socket.socket, "connect_ex", _guarded_connect_ex)
    monkeypatch.setattr(socket, "getaddrinfo", _guarded_getaddrinfo)


@pytest.fixture(autouse=True)
def maic_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "maic_home"
    home.mkdir()
    monkeypatch.setenv("MAIC_HOME", str(home))
    for key in ("MAIC_MODEL", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "MAIC_VOICE",
                "MAIC_VOICE_API_BASE", "MAIC_VOICE_API_KEY", "ELEVENLABS_API_KEY"):
        monkeypatch.delenv(key, raising=False)
    return home


@pytest.fixture
def loopback_server() -> Iterator[LoopbackOpenAIServer]:
    server = LoopbackOpenAIServer().start()
    try:
        yield server
    finally:
        server.stop()
