"""The one base error users see, and its exit codes.

Everything that should reach the user as a single line on stderr derives from
:class:`MaicError`; the CLI prints ``str(error)`` and exits with ``exit_code``.
"""

from __future__ import annotations


class MaicError(Exception):
    """An error meant for the user: one line, no traceback."""

    exit_code = 1


class InputError(MaicError):
    """Invalid input from the user: a bad file, option or argument (exit 2)."""

    exit_code = 2


class SessionError(MaicError):
    """A session file that cannot be used (corrupt, newer, locked)."""

    exit_code = 1
