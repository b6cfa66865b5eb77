"""The ``--help``/``-h`` option of a command group, declared by maic instead of by Typer.

Typer's own help option has no default, so a group whose ``--help`` was not given
(``maic`` in ``maic chat --help``) coerces that missing value through a pydantic
TypeAdapter, and importing pydantic for that costs about as much again as a bare
Typer app's whole ``--help``.  This option defaults to ``False``, a plain bool that
Typer passes through, and prints the same help the same way.
"""

from __future__ import annotations

from typing import Any

import typer


def _show_help(ctx: typer.Context, value: bool) -> None:
    if value and not ctx.resilient_parsing:
        typer.echo(ctx.get_help(), color=ctx.color)
        raise typer.Exit()


def help_option() -> Any:
    """The default of a group callback's parameter: ``--help``/``-h``, eager, not passed on."""
    return typer.Option(False, "--help", "-h", callback=_show_help, is_eager=True, expose_value=False,
                        help="Show this message and exit.")
