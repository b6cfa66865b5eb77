"""Optional parts of maic: a command that needs an extra says which, in one line.

``maic run`` and ``maic report`` draw report.html's charts with matplotlib (the ``report`` extra).
Without it they run all the same and write every file, report.html without its charts (the page
says, where they would be, how to get them); the command says so once on standard error
(:func:`say_if_no_charts`).  The check finds matplotlib without importing it (``maic --help`` and
the start of a batch stay light).  :func:`require` is for a command that cannot work without its
extra: it refuses (exit 2), naming the extra.
"""

from __future__ import annotations

import importlib.util
import shlex
import sys
from pathlib import Path

from ..errors import InputError
from ..untrusted import clean


def require(module: str, extra: str, needed_for: str) -> None:
    """Refuse (exit 2) when ``module`` is not installed, naming the extra that brings it."""
    try:
        found = importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        raise InputError(f"{needed_for} need {module}, which is not installed: pip install 'maic-cli[{extra}]'")


def say_if_no_charts(folder: Path, said: bool = False) -> bool:
    """Without matplotlib, say (on standard error) that ``folder``'s report.html gets no charts, and how to get
    them; whether it has been said (``said``: already, by this command).

    ``maic run`` asks before its runs play (matplotlib is not installed) and again after its report is
    written (an installed matplotlib that could not be imported), so the line is said once either way."""
    from ..report.report_charts import INSTALL, available

    if said or available():
        return said
    sys.stderr.write(f"maic: note: report.html has no charts without matplotlib: {INSTALL} (then `maic report "
                     f"{shlex.quote(clean(str(folder)))}` draws them); everything else is written\n")
    sys.stderr.flush()
    return True
