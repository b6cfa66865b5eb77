"""Entry point of the ``maic`` command.

Kept tiny so that ``maic --help`` and ``maic --version`` import only Typer and
the command modules, never litellm.
"""

from __future__ import annotations


def main() -> None:
    from .app import app

    app(prog_name="maic")
