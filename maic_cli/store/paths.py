"""Where things live: ``$MAIC_HOME`` moves all user data; built-in data ships with the package."""

from __future__ import annotations

import os
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent.parent


def maic_home() -> Path:
    """User data: ``$MAIC_HOME``, else the platform's data dir (e.g. ``~/.local/share/maic``)."""
    env = os.environ.get("MAIC_HOME")
    if env:
        return Path(env).expanduser()
    from platformdirs import user_data_dir  # noqa: PLC0415 - only needed without MAIC_HOME

    return Path(user_data_dir("maic", appauthor=False))


def builtin_dir(name: str) -> Path:
    """A folder shipped with maic (``agents``, ``scenarios``, ``transcripts``).

    In a wheel it is inside the package (``maic_cli/_defaults/NAME``); in a source
    checkout (editable install, tests) it is the repository's top-level folder.
    """
    packaged = PACKAGE_DIR / "_defaults" / name
    if packaged.is_dir():
        return packaged
    return PACKAGE_DIR.parent / name
