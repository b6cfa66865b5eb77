"""How errors reach the user: one line on stderr and a defined exit code.

``@friendly`` wraps every command: a :class:`MaicError` prints ``maic: error: …``
and exits with its code (1, or 2 for bad input); Ctrl-C exits 130.  Anything else
(a file-system error nobody expected, a bug) is one line too, exit 1 — never a
traceback, unless ``MAIC_DEBUG=1`` asks for it.  Error messages
quote file names, field names and provider text, so :func:`fail` cleans them of
terminal control sequences and keeps them on one line.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import ParamSpec, TypeVar

import typer

from ..errors import InputError, MaicError
from ..untrusted import one_line

P = ParamSpec("P")
R = TypeVar("R")
EXIT_INTERRUPTED = 130


def fail(message: str, code: int = 1) -> typer.Exit:
    typer.echo(f"maic: error: {one_line(message)}", err=True)
    return typer.Exit(code)


def check_choice(flag: str, value: str, allowed: tuple[str, ...]) -> None:
    """Bad input for an option with a fixed set of values: one line, exit 2."""
    if value not in allowed:
        raise InputError(f"{flag} {value}: use one of {', '.join(allowed)}")


def friendly(command: Callable[P, R]) -> Callable[P, R]:
    @functools.wraps(command)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return command(*args, **kwargs)
        except MaicError as exc:
            raise fail(str(exc), exc.exit_code) from None
        except KeyboardInterrupt:
            typer.echo("", err=True)
            raise typer.Exit(EXIT_INTERRUPTED) from None
        except BrokenPipeError:
            raise  # a reader gone away: main ends quietly (exit 141)
        except Exception as exc:
            if _from_the_cli_framework(exc) or os.environ.get("MAIC_DEBUG"):
                raise
            raise fail(unexpected(exc)) from None

    return wrapper


def unexpected(exc: Exception) -> str:
    """One line for an error no code path expected."""
    if isinstance(exc, OSError) and exc.strerror:
        where = f"{exc.filename}: " if exc.filename else ""
        return f"{where}{exc.strerror}"
    return f"unexpected {type(exc).__name__}: {exc} (a bug in maic; MAIC_DEBUG=1 shows the traceback)"


def _from_the_cli_framework(exc: Exception) -> bool:
    """Typer's (and click's) own exits and usage errors, which Typer prints itself."""
    return type(exc).__module__.split(".")[0] in ("typer", "click")
