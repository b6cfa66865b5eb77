"""The command reference of the documentation site, generated from the Typer app so it cannot drift.

``docs/hooks/commands.py`` (an MkDocs hook) puts :func:`reference_markdown` into
``docs/reference/commands.md`` at every build; ``tests/test_docs.py`` checks that every command and option
of the app is there.  Help text is the commands' own (their docstrings and ``help=``), with Rich's markup
tags removed.  Typer vendors its own copy of Click (0.29 and newer), so the command objects are read by what they
have (``list_commands``, ``opts``, ``param_type_name``), not by Click's classes.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import typer

_MARKUP = re.compile(r"\[/?(?:bold|italic|dim|cyan|green|red|yellow|magenta|blue|underline|b|i)\]")


def _text(help_text: str | None) -> str:
    return _MARKUP.sub("", help_text or "").strip()


def _is_group(command: Any) -> bool:
    return hasattr(command, "list_commands")


def _commands(group: Any, path: list[str]) -> Iterator[tuple[list[str], Any]]:
    yield path, group
    if _is_group(group):
        ctx = group.context_class(group, info_name=" ".join(path))
        for name in sorted(group.list_commands(ctx)):
            command = group.get_command(ctx, name)
            if command is not None and not command.hidden:
                yield from _commands(command, [*path, name])


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _param_row(param: Any, ctx: Any) -> str | None:
    """One row: the names and metavar as ``--help`` prints them, then its help (default and range included)."""
    record = param.get_help_record(ctx)
    if record is None:  # an argument: its name, and its help if it has one
        names, help_text = (param.name or "").upper(), getattr(param, "help", None) or ""
    else:
        names, help_text = record
    if not names or names.endswith("--help"):  # every command has it; the page says so once
        return None
    return f"| `{_cell(names)}` | {_cell(_text(help_text))} |"


def reference_markdown(app: typer.Typer | None = None) -> str:
    """Every command of ``maic``, in order: its usage, what it does, its arguments and options."""
    if app is None:
        from .app import app as maic_app

        app = maic_app
    root = typer.main.get_command(app)
    out: list[str] = []
    for path, command in _commands(root, ["maic"]):
        if _is_group(command) and len(path) > 1 and not command.params:
            out.append(f"## `{' '.join(path)}`\n\n{_text(command.help)}\n")
            continue
        ctx = command.context_class(command, info_name=" ".join(path))
        usage = " ".join(command.collect_usage_pieces(ctx))
        heading = "#" * min(len(path) + 1, 4)
        out.append(f"{heading} `{' '.join(path)}`\n")
        out.append(f"```text\n{' '.join(path)} {usage}\n```\n")
        if command.help:
            out.append(_text(command.help) + "\n")
        params = [p for p in command.params if not getattr(p, "hidden", False)]
        if params:
            out.append("| argument or option | what it does |\n|---|---|")
            out.extend(row for p in params if (row := _param_row(p, ctx)) is not None)
            out.append("")
    return "\n".join(out)
