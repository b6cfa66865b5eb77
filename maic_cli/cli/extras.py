"""Optional parts of maic, asked for by name: a command that needs an extra says which, in one line (exit 2).

``maic run`` and ``maic report`` draw report.html's charts with matplotlib (the ``report`` extra);
they check before any work, so a batch never runs for an hour to fail at its report.  The check
finds the module without importing it (``maic --help`` stays light).
"""

from __future__ import annotations

import importlib.util

from ..errors import InputError

REPORT = ("matplotlib", "report", "report.html's charts")


def require(module: str, extra: str, needed_for: str) -> None:
    """Refuse (exit 2) when ``module`` is not installed, naming the extra that brings it."""
    try:
        found = importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        raise InputError(f"{needed_for} need {module}, which is not installed: pip install 'maic-cli[{extra}]'")


def require_report() -> None:
    require(*REPORT)
