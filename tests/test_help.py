"""Every command's help follows Click's conventions (cli/help_option.py): flags show no value, values show
their kind in capitals, arguments are named in capitals, every option is described; --model names local,
demo and the default."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from maic_cli.cli.app import app
from maic_cli.cli.help_option import MAX_TURNS_HELP, kind_label
from maic_cli.engine.models import DEFAULT_MAX_TURNS

runner = CliRunner()
ANGLE_TYPES = re.compile(r"<(?:bool|str|int|float|path|list|Path|datetime|uuid)[^>]*>")


def commands(command: Any = None, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    command = command if command is not None else typer.main.get_command(app)
    yield path, command
    for name, sub in sorted(getattr(command, "commands", {}).items()):
        yield from commands(sub, (*path, name))


ALL = list(commands())


def help_of(path: tuple[str, ...]) -> str:
    result = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "200", "NO_COLOR": "1", "TERM": "dumb"})
    assert result.exit_code == 0, result.output
    return result.output


def test_every_command_is_walked() -> None:
    names = {" ".join(path) for path, _ in ALL}
    assert {"chat", "run", "replay", "report", "lesson new", "lesson check", "agents list", "prompts show"} <= names


@pytest.mark.parametrize(("path", "command"), ALL, ids=lambda value: " ".join(value) if isinstance(value, tuple)
                         else "")
def test_a_commands_help_follows_the_conventions(path: tuple[str, ...], command: Any) -> None:
    text = help_of(path)
    assert not ANGLE_TYPES.search(text), ANGLE_TYPES.search(text)
    usage = next(line for line in text.splitlines() if "Usage:" in line)
    assert "{" not in usage
    for param in command.params:
        if getattr(param, "hidden", False):
            continue
        assert (param.help or "").strip(), f"{' '.join(path)} {param.name}: no description"
        if param.param_type_name == "argument":
            name = (param.metavar or param.name).upper()  # an explicit metavar is the name shown
            assert re.search(rf"(?<![\w-]){name}\b", usage), (name, usage)
        elif getattr(param, "is_flag", False):  # the flag's row: its names, then straight to its description
            long = next(opt for opt in param.opts if opt.startswith("--"))
            row = next(line for line in text.splitlines() if re.search(rf"(?<![\w-]){re.escape(long)}\b", line))
            after = row.split(long, 1)[1]
            assert not re.search(r"\b(?:TEXT|BOOLEAN|INTEGER|FLOAT|PATH)\b", after.split(param.help.split()[0])[0])


def test_value_options_show_their_kind_in_capitals() -> None:
    text = help_of(("chat",))
    assert re.search(r"--max-turns\s+INTEGER RANGE \[1<=x<=50\]", text)
    assert re.search(r"--session\s+-s\s+PATH", text)
    assert re.search(r"--plain\s+Line-oriented", text)  # a flag: no value
    assert "Usage: maic lesson new [OPTIONS] [TOPIC]" in help_of(("lesson", "new"))  # or --from-outline
    assert "Usage: maic run [OPTIONS] [PATHS]..." in help_of(("run",))


@pytest.mark.parametrize("path", [("chat",), ("lesson", "new"), ("run",)])
def test_the_model_option_names_local_demo_and_the_default(path: tuple[str, ...]) -> None:
    text = " ".join(help_of(path).split())
    text = re.sub(r"\s*│\s*", " ", text)
    model = text[text.index("--model"):]
    assert "local" in model and "demo" in model and "Default:" in model and "OPENAI_API_KEY" in model


def test_temperature_is_described_and_the_turns_default_is_the_engines() -> None:
    assert "Sampling temperature" in " ".join(help_of(("chat",)).split())
    assert f"(default {DEFAULT_MAX_TURNS})" in MAX_TURNS_HELP


@pytest.mark.parametrize(("typed", "label"), [
    ("<str>", "TEXT"), ("<int>", "INTEGER"), ("<float range>", "FLOAT RANGE"), ("<list[Path]>", "PATH"),
    ("<path>", "PATH"), ("<a|b>", "a|b"), ("<datetime>", "DATETIME"),
])
def test_an_options_type_is_shown_as_its_kind(typed: str, label: str) -> None:
    assert kind_label(typed) == label
