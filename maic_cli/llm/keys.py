"""The API key a hosted model needs, checked before a class, a batch, a lesson or a judge starts.

litellm knows which environment variables each provider reads (``OPENAI_API_KEY``,
``ANTHROPIC_API_KEY`` …); :func:`check_key` asks it (``litellm.validate_environment``, litellm
imported only here and only for a hosted model) and, when a key is missing, refuses with one line
that names the variable to set — before any session, transcript or output folder is written and
before any request is made, so no HTTP status is reported for a call that never happened.

Not checked: the offline model, the demo, scripted and replayed replies (no provider); a model
served at ``--api-base`` (a local or self-hosted server usually needs no key, and litellm cannot
know); a router file (its entries carry their own keys); an explicit ``api_key``.  A provider
litellm does not know is left to the call, which reports its own error.
"""

from __future__ import annotations

import re

from ..errors import InputError
from ..untrusted import one_line
from .spec import ModelSpec

_VARIABLE = re.compile(r"^[A-Z][A-Z0-9_]{1,63}$")


def missing_keys(spec: ModelSpec, *, api_base: str | None = None, api_key: str | None = None) -> list[str]:
    """The environment variables litellm says ``spec`` needs and does not find (none: nothing to set)."""
    if not spec.is_real or spec.kind == "router" or api_base or api_key:
        return []
    from .litellm_client import import_litellm

    try:
        found = import_litellm().validate_environment(model=spec.raw)
    except Exception:  # noqa: BLE001 - a model litellm cannot place: the call itself says what is wrong
        return []
    if not isinstance(found, dict) or found.get("keys_in_environment"):
        return []
    names = found.get("missing_keys") or []
    return [name for name in names if isinstance(name, str) and _VARIABLE.match(name)][:4]


def check_key(spec: ModelSpec, *, flag: str = "--model", api_base: str | None = None,
              api_key: str | None = None) -> None:
    """Refuse a hosted model whose key is not set: one :class:`InputError` line (exit 2) naming the variable."""
    names = missing_keys(spec, api_base=api_base, api_key=api_key)
    if not names:
        return
    variables = " and ".join(names)
    raise InputError(f"{flag} {one_line(spec.raw)[:120]}: no API key: set {variables} (export {names[0]}=…), "
                     "or use --model local for the offline model")
