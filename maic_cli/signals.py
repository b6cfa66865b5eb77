"""Ctrl-C while work runs on the event loop: call a handler instead of raising KeyboardInterrupt."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Callable, Iterator


@contextlib.contextmanager
def on_sigint(callback: Callable[[], object]) -> Iterator[None]:
    """While inside, SIGINT calls ``callback`` (e.g. cancels a task); outside, Ctrl-C is as usual."""
    loop = asyncio.get_running_loop()
    try:
        loop.add_signal_handler(signal.SIGINT, callback)
    except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, or no signals here
        yield
        return
    try:
        yield
    finally:
        loop.remove_signal_handler(signal.SIGINT)
