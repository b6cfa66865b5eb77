"""Where a learning record store is and how maic proves who it is: the ``--lrs`` URL and the credentials.

The URL is the user's (``--lrs URL`` typed on the command line); the credentials come from the
environment — ``MAIC_LRS_TOKEN`` (``Authorization: Bearer``), or ``MAIC_LRS_USER`` and
``MAIC_LRS_PASSWORD`` (HTTP basic auth) — or from the URL itself (``http://user:password@host/…``,
taken out of it and sent as basic auth; not together with the environment's).  A value that cannot be
sent as a header (a line break, a control character; a ``:`` in a basic-auth user name) is one input
error naming where it came from.

Everything sent to prove who the user is — the token, the password, the ``user:password`` pair, its
base64, the header values, a URL query value that looks like a credential, and the forms a store's
echo may show them in (JSON-escaped, percent-encoded) — is a :class:`Credentials`' ``secrets``: the
client redacts them, at any length, from every line it says (untrusted.py ``secrets_in_use``), and the
URL it shows (:func:`shown_url`) holds no user, password or query.
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, quote, unquote, urlsplit, urlunsplit

from ..errors import InputError
from ..untrusted import clean, one_line, register_secret

_CREDENTIAL_WORDS = ("token", "key", "secret", "pass", "auth", "sig", "session", "access", "credential", "jwt")
MAX_URL = 2_000


@dataclass(frozen=True)
class Credentials:
    headers: dict[str, str] = field(default_factory=dict)
    secrets: frozenset[str] = frozenset()


def _controls(value: str) -> bool:
    return any(ord(char) < 0x20 or 0x7f <= ord(char) < 0xa0 for char in value)


def _forms(values: Iterable[str]) -> frozenset[str]:
    """Each value as sent, and as an echo may show it: JSON-escaped, percent-encoded, cleaned."""
    found: set[str] = set()
    for value in values:
        if value:
            escaped = json.dumps(value)[1:-1]
            found.update({value, escaped, escaped.replace("/", "\\/"), quote(value, safe=""), clean(value),
                          one_line(value)})
    return frozenset(form for form in found if form)


def _refuse_unsendable(where: str, value: str) -> None:
    if _controls(value):
        raise InputError(f"{where}: holds a line break or a control character, which cannot be sent in an HTTP "
                         "header (set it again, on one line)")


def split_url(url: str) -> tuple[str, str | None, str | None]:
    """``url`` without its user and password (a bad URL is one input error), and those two (``None``:
    none), percent-decoded."""
    text = url.strip()
    if len(text) > MAX_URL:
        raise InputError(f"--lrs {one_line(text)[:80]}…: longer than {MAX_URL} characters; is this the store's "
                         "xAPI endpoint?")
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 - a port that is not a number raises here
        host = parts.hostname or ""
        if ":" not in host:
            host.encode("idna")  # a label too long (or empty), or not a name at all, raises here
    except ValueError:
        parts = urlsplit("")
    if parts.scheme not in ("http", "https") or not parts.hostname or _controls(text) or any(
            char.isspace() for char in text):
        raise InputError(f"--lrs {one_line(text)[:200]}: an http:// or https:// URL of the store's xAPI endpoint "
                         "is needed")
    user = unquote(parts.username) if parts.username is not None else None
    password = unquote(parts.password) if parts.password is not None else None
    netloc = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=netloc, fragment="")), user, password


def shown_url(url: str) -> str:
    """The store as a line may show it: scheme, host, port and path; no user, password or query."""
    parts = urlsplit(url)
    port = f":{parts.port}" if parts.port else ""
    host = parts.hostname or ""
    host = f"[{host}]" if ":" in host else host
    return one_line(f"{parts.scheme}://{host}{port}{parts.path}")


def _query_secrets(url: str) -> list[str]:
    """The values of a URL's query that look like credentials (any length), and every long one."""
    found = []
    for name, value in parse_qsl(urlsplit(url).query, keep_blank_values=False):
        if any(word in name.lower() for word in _CREDENTIAL_WORDS) or len(value) >= 8:
            found.append(value)
    return found


def credentials(url: str, env: Mapping[str, str] | None = None) -> tuple[str, Credentials]:
    """The store's URL (without user and password) and the credentials to send it."""
    env = os.environ if env is None else env
    target, url_user, url_password = split_url(url)
    token = env.get("MAIC_LRS_TOKEN")
    user, password = env.get("MAIC_LRS_USER"), env.get("MAIC_LRS_PASSWORD")
    query = _query_secrets(target)
    if url_user is not None or url_password is not None:
        named = "MAIC_LRS_TOKEN" if token else "MAIC_LRS_USER" if user else None
        if named is not None:
            raise InputError(f"--lrs: the URL holds a user name and password and {named} is set too: give the "
                             "credentials one way (the environment keeps them out of the shell's history)")
        user, password, token = url_user or "", url_password or "", None
        names = ("--lrs URL's user name", "--lrs URL's password")
    else:
        names = ("MAIC_LRS_USER", "MAIC_LRS_PASSWORD")
    if token:
        _refuse_unsendable("MAIC_LRS_TOKEN", token)
        header = f"Bearer {token}"
        register_secret(token)
        return target, Credentials({"Authorization": header}, _forms([token, header, *query]))
    if user and password is not None:
        _refuse_unsendable(names[0], user)
        _refuse_unsendable(names[1], password)
        if ":" in user:
            raise InputError(f"{names[0]}: a basic-auth user name cannot hold ':'")
        pair = f"{user}:{password}"
        encoded = base64.b64encode(pair.encode("utf-8")).decode("ascii")
        header = f"Basic {encoded}"
        for value in (password, pair, encoded, header):
            register_secret(value)  # the long ones, for the rest of the process too
        sent = [password, pair, encoded, header, quote(password, safe=""), *query]
        return target, Credentials({"Authorization": header}, _forms(sent))
    return target, Credentials({}, _forms(query))


def auth_headers(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The credentials from ``MAIC_LRS_TOKEN``, or ``MAIC_LRS_USER`` and ``MAIC_LRS_PASSWORD``."""
    return credentials("http://lrs.invalid/xAPI", env)[1].headers
