"""The Typer application: ``maic chat | replay | run | report | agents | prompts | lesson | judge | voices | serve``."""

from __future__ import annotations

import typer

from .. import __version__
from . import (
    agents_cmd,
    chat_cmd,
    judge_cmd,
    learner_cmd,
    lesson_cmd,
    prompts_cmd,
    replay_cmd,
    report_cmd,
    run_cmd,
    serve_cmd,
    voices_cmd,
)
from .help_option import ConventionalGroup, help_option

app = typer.Typer(
    name="maic",
    help="A classroom of AI agents — teacher, assistant and students — and you.",
    no_args_is_help=True,
    cls=ConventionalGroup,  # Click's help conventions for every command (cli/help_option.py)
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"maic {__version__}")
        raise typer.Exit()


@app.callback()
def _root(version: bool = typer.Option(False, "--version", "-V", callback=_version, is_eager=True,
                                       help="Show the version and exit."),
          show_help: bool = help_option()) -> None:
    """A classroom of AI agents — teacher, assistant and students — and you."""


app.add_typer(agents_cmd.app, name="agents")
app.add_typer(prompts_cmd.app, name="prompts")
app.add_typer(lesson_cmd.app, name="lesson")
app.add_typer(learner_cmd.app, name="learner")
app.add_typer(judge_cmd.app, name="judge")
app.add_typer(voices_cmd.app, name="voices")
app.command("chat")(chat_cmd.chat)
app.command("replay")(replay_cmd.replay)
app.command("run")(run_cmd.run)
app.command("report")(report_cmd.report)
app.command("serve")(serve_cmd.serve)
