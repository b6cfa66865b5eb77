"""Entry point of the ``maic`` command.

Kept tiny so that ``maic --help`` and ``maic --version`` import only Typer and
the command modules, never litellm.

The standard streams are made safe here, once, for every command:

* text the output encoding cannot hold (emoji on an ASCII or Latin-1
  terminal, ``LANG=C``) is written as ``?`` instead of crashing
  (``errors="replace"``); invalid UTF-8 on stdin is read as U+FFFD;
* a closed stdin, stdout or stderr (``maic … >&-``) reads as empty and
  swallows output;
* a reader that goes away (``maic … | head -c 10``) ends maic quietly with
  exit code 141 (128 + SIGPIPE, what a shell reports for ``cat`` in the same
  pipe): no traceback, no "Exception ignored" line.  maic does not simply die
  by SIGPIPE, so what it was doing at the time still unwinds (files are closed,
  the session on disk stays whole).
"""

from __future__ import annotations

import os
import select
import sys

EXIT_BROKEN_PIPE = 141


def _safe_streams() -> None:
    for name in ("stdin", "stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is None:  # the descriptor was closed before maic started
            setattr(sys, name, open(os.devnull, "r" if name == "stdin" else "w", encoding="utf-8"))
            continue
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="replace")


def _reader_gone() -> bool:
    """True when stdout is a pipe whose reader has closed it (click turns that into exit 1)."""
    try:
        poller = select.poll()
        poller.register(sys.__stdout__.fileno(), select.POLLOUT)  # type: ignore[union-attr]
        return any(mask & select.POLLERR for _, mask in poller.poll(0))
    except (AttributeError, OSError, ValueError):  # no poll() here, or no stdout at all
        return False


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's last flush cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.__stdout__.fileno() if sys.__stdout__ else 1)
        os.close(devnull)
    except (OSError, ValueError):
        pass


def main() -> None:
    _safe_streams()
    from .app import app

    try:
        app(prog_name="maic")
    except BrokenPipeError:
        _silence_stdout()
        raise SystemExit(EXIT_BROKEN_PIPE) from None
    except SystemExit:
        if _reader_gone():
            _silence_stdout()
            raise SystemExit(EXIT_BROKEN_PIPE) from None
        raise
