"""``maic agents list | show | validate``: the personas a class can use.

Persona files may come from anyone: every string from them (and their file names)
is cleaned of terminal control sequences before it is printed.

``maic agents --help`` must stay as quick as a bare Typer app's: the persona store,
the engine (pydantic) and the Rich renderables are imported by the commands that
use them, not here.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from ..errors import InputError
from ..untrusted import clean, one_line
from .errors import friendly
from .help_option import help_option

if TYPE_CHECKING:
    from ..store.personas import Registry

app = typer.Typer(help="List, show and validate personas.", no_args_is_help=True)

@app.callback()
def _agents(show_help: bool = help_option()) -> None:
    """List, show and validate personas."""


AgentsDir = typer.Option(None, "--agents-dir", help="A folder of persona YAML files (adds to or "
                         "overrides the built-in class by id). Repeatable.")


@app.command("list")
@friendly
def list_agents(agents_dir: list[Path] = AgentsDir) -> None:
    """List every persona: built-in, in $MAIC_HOME/agents, and in --agents-dir."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from ..store.personas import load_registry
    from ..ui.text import color_or_default

    registry = load_registry(agents_dir or [])
    table = Table(box=None, pad_edge=False)
    for column in ("id", "", "name", "role", "priority", "from"):
        table.add_column(column)
    for agent in sorted(registry.agents.values(), key=lambda a: (-a.priority, a.id)):
        table.add_row(Text(clean(agent.id)), Text(clean(agent.avatar)),
                      Text(clean(agent.name), style=color_or_default(agent.color)),
                      Text(agent.role), str(agent.priority), Text(_from(registry, agent.id)))
    Console().print(table)


def _from(registry: Registry, agent_id: str) -> str:
    """The file a persona came from, and the one it overrode (a user's copy of a built-in id)."""
    where = _where(registry.sources[agent_id])
    if agent_id in registry.overridden:
        where += f" (overrides {_where(registry.overridden[agent_id][-1])})"
    return where


def _where(source: Path) -> str:
    from ..store.paths import builtin_dir

    return "built-in" if source.parent == builtin_dir("agents") else one_line(str(source))


@app.command("show")
@friendly
def show_agent(agent_id: str = typer.Argument(..., help="The persona's id."),
               agents_dir: list[Path] = AgentsDir) -> None:
    """Show one persona in full, with the actions it may use."""
    from rich.console import Console
    from rich.text import Text

    from ..engine.actions import allowed_actions
    from ..store.personas import load_registry
    from ..ui.text import color_or_default

    registry = load_registry(agents_dir or [])
    agent = registry.require([agent_id])[0]
    console = Console()
    console.print(Text.assemble((f"{clean(agent.avatar)} {clean(agent.name)}", f"bold {color_or_default(agent.color)}"),
                                f"  ({clean(agent.id)}, {agent.role}, priority {agent.priority})"))
    console.print(Text(f"from {_from(registry, agent.id)}", style="dim"))
    console.print()
    console.print(Text(clean(agent.persona.strip())))
    console.print()
    console.print(Text("whiteboard scenes: " + ", ".join(allowed_actions(agent, "whiteboard"))))
    console.print(Text("slide scenes:      " + ", ".join(allowed_actions(agent, "slide"))))
    console.print(Text("voice:             " + _voice(registry, agent.id)))


def _voice(registry: Registry, agent_id: str) -> str:
    """How the agent sounds in the configured voice engine (the offline one when the voice is off)."""
    from ..speech.cast import cast
    from ..speech.piper_engine import PiperEngine
    from ..speech.port import SpeechEngine
    from .voice_setup import describe, origin, settings_for, the_class, voice_spec

    settings = settings_for(None, None)
    spec = voice_spec(settings, voice_flag=None)
    engine: SpeechEngine = PiperEngine()  # the offline voice's when off (espeak lists its voices by running)
    if spec.kind in ("litellm", "direct"):
        from ..speech.factory import make_engine

        engine = make_engine(spec) or engine
    agents = the_class(registry, settings, agent_id)
    agent = registry.require([agent_id])[0]
    off = "" if spec.enabled else "; the voice is off: maic voices say to try it"
    how = "derived from id and role" if origin(agent) == "derived" else f"chosen by the {origin(agent)}"
    return f"{clean(describe(cast(agents, engine)[agent_id]))} ({engine.name}, {how}{off})"


@app.command("validate")
@friendly
def validate(paths: list[Path] = typer.Argument(None, help="Persona files or folders "
                                                "(default: built-in, $MAIC_HOME/agents, --agents-dir)."),
             agents_dir: list[Path] = AgentsDir) -> None:
    """Check persona files; exit 2 if any is invalid."""
    from ..store.paths import builtin_dir, maic_home
    from ..store.personas import validate_paths

    targets = list(paths or [])
    if not targets:
        targets = [p for p in (builtin_dir("agents"), maic_home() / "agents", *(agents_dir or []))
                   if p.is_dir()]
    missing = [p for p in targets if not p.exists()]
    results = validate_paths(p for p in targets if p.exists())
    for path, error in results:
        if error is None:
            typer.echo(f"ok       {one_line(str(path))}")
        else:
            typer.echo(f"invalid  {one_line(error)}", err=True)
    for path in missing:
        typer.echo(f"invalid  {one_line(str(path))}: no such file or folder", err=True)
    valid = sum(error is None for _, error in results)
    bad = len(results) - valid + len(missing)
    if not results and not missing:
        where = ", ".join(one_line(str(p)) for p in targets) or "any folder"
        raise InputError(f"no persona files (*.yaml) in {where}")
    typer.echo(f"{valid} valid, {bad} invalid")
    if bad:
        raise typer.Exit(2)
