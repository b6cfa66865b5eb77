"""Help as Click and Typer users expect it: maic's ``--help`` option and the help's conventions.

The ``--help``/``-h`` option of a command group is declared by maic instead of by Typer.
Typer's own help option has no default, so a group whose ``--help`` was not given
(``maic`` in ``maic chat --help``) coerces that missing value through a pydantic
TypeAdapter, and importing pydantic for that costs about as much again as a bare
Typer app's whole ``--help``.  This option defaults to ``False``, a plain bool that
Typer passes through, and prints the same help the same way.

Recent Typer releases label every value in angle brackets with its Python type (``--plain
<bool>``, ``--model <str>``, ``Usage: maic lesson new [OPTIONS] {topic}``).  :class:`ConventionalGroup`
(the root command's class) gives every command under it Click's conventions instead, in one
place: a flag shows no value, a value shows its kind in capitals (``TEXT``, ``INTEGER``,
``FLOAT``, ``PATH``, ``INTEGER RANGE [1<=x<=50]``), an argument is named in capitals
(``TOPIC``), optional ones in brackets (``[PATHS]...``).  A metavar a command sets itself wins.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import typer
from typer.core import TyperGroup

# The help of the options several commands share (kept here so they say the same everywhere).
LOCAL_MODEL = "local (the built-in offline model, SmolLM2-135M on the CPU)"
LITELLM_MODELS = "any litellm model (openai/gpt-4o-mini, anthropic/…, ollama/llama3, …)"
MODEL_KINDS = f"{LOCAL_MODEL}, demo (canned replies, no model), {LITELLM_MODELS}"
MODEL_DEFAULT = ("the model of a provider whose key is set (OPENAI_API_KEY: openai/gpt-4o-mini, ANTHROPIC_API_KEY, "
                 "GEMINI_API_KEY, …), else local when installed, else demo")
MODEL_HELP = (f"The model: {MODEL_KINDS}, scripted:FILE or replay:FILE. Default: {MODEL_DEFAULT}. "
              "Also read from MAIC_MODEL.")
TEMPERATURE_HELP = ("Sampling temperature of every reply: 0 the most predictable, higher more varied. Default: "
                    "the provider's own (0.6 for local).")
MAX_TURNS_HELP = "Agent turns per round at most (default 6)."
VOICE_HELP = ("The voice engine of the export: local (the offline voice, the default), espeak, openai-compatible "
              "(with --voice-api-base) or a provider's speech model such as openai/tts-1.")

_KINDS = {"str": "TEXT", "int": "INTEGER", "float": "FLOAT", "path": "PATH", "bool": "BOOLEAN",
          "datetime": "DATETIME", "uuid": "UUID"}


def _show_help(ctx: typer.Context, value: bool) -> None:
    if value and not ctx.resilient_parsing:
        typer.echo(ctx.get_help(), color=ctx.color)
        raise typer.Exit()


def help_option() -> Any:
    """The default of a group callback's parameter: ``--help``/``-h``, eager, not passed on."""
    return typer.Option(False, "--help", "-h", callback=_show_help, is_eager=True, expose_value=False,
                        help="Show this message and exit.")


def kind_label(typed: str) -> str:
    """Typer's ``<int range>``/``<list[Path]>``/``<str>`` as Click names it: ``INTEGER RANGE``, ``PATH``, ``TEXT``."""
    label = typed.strip().removeprefix("<").removesuffix(">")
    while (inner := re.fullmatch(r"list\[(.*)\]", label)) is not None:  # repeated: each value is one of these
        label = inner.group(1)
    words = label.split(" ", 1)
    head = _KINDS.get(words[0].lower(), words[0])
    return " ".join([head, *words[1:]]).upper() if "|" not in label else label


def _conventional(param: Any) -> None:
    """Click's conventions for one parameter (see the module): set on the object Typer built."""
    kind = getattr(param, "param_type_name", "")
    typed: Callable[[Any], str] | None = getattr(param, "display_type", None)
    if kind == "option":
        if getattr(param, "is_flag", False) or getattr(param, "count", False):
            setattr(param, "display_type", lambda ctx: "")  # noqa: B010 - an instance's method, replaced
        elif typed is not None and param.metavar is None:
            setattr(param, "display_type", lambda ctx: kind_label(typed(ctx)))  # noqa: B010
    elif kind == "argument":
        if param.metavar is None:
            param.metavar = (param.name or "value").upper()
        if typed is not None:
            setattr(param, "display_type", lambda ctx: kind_label(typed(ctx)))  # noqa: B010
        piece = param.metavar if param.required else f"[{param.metavar}]"
        piece += "..." if param.nargs != 1 else ""
        setattr(param, "get_usage_pieces", lambda ctx: [piece])  # noqa: B010


def _help_option_of(command: Any) -> None:
    """A command's own ``--help`` is made when its help is asked for: made conventional then too."""
    make: Callable[[Any], Any] | None = getattr(command, "get_help_option", None)
    if make is None:
        return

    def conventional_help_option(ctx: Any) -> Any:
        option = make(ctx)
        if option is not None:
            _conventional(option)
        return option

    setattr(command, "get_help_option", conventional_help_option)  # noqa: B010


def conventional(command: Any) -> None:
    """Click's help conventions for ``command``, its parameters and every command under it."""
    for param in getattr(command, "params", []):
        _conventional(param)
    _help_option_of(command)
    for sub in getattr(command, "commands", {}).values():
        conventional(sub)


class ConventionalGroup(TyperGroup):
    """The root command's class: every command under it gets Click's help conventions when built."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        conventional(self)
