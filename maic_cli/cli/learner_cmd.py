"""``maic learner list | show NAME | edit NAME | forget NAME | export NAME``: the learner's own record.

The memory maic keeps of a named learner (``$MAIC_HOME/learners/``, store/learner_profile.py)
is theirs: to read (``show`` prints the file and the lines the class gets), to correct
(``edit`` opens ``$VISUAL``/``$EDITOR`` on a copy and keeps it only if it is still a valid
profile), to forget (``forget`` removes the profile; with ``--all`` also the sessions and
transcripts under ``$MAIC_HOME`` that hold the learner's words) and to take elsewhere
(``export --xapi FILE`` writes the learner's classes as xAPI statements; ``--lrs URL`` sends
them to a learning record store).

``maic learner --help`` stays light: the stores are imported inside the commands.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from pathlib import Path

import typer

from ..errors import InputError, MaicError
from ..untrusted import clean
from .errors import friendly
from .help_option import help_option
from .xapi_send import LRS_HELP

app = typer.Typer(help="The learner's memory and learning records: list, show, edit, forget, export.",
                  no_args_is_help=True)
MAX_SESSION_BYTES = 8 * 2**20  # a session file read to see whose it is


@app.callback()
def _learner(show_help: bool = help_option()) -> None:
    """The learner's memory and learning records: list, show, edit, forget, export."""


@app.command("list")
@friendly
def list_learners() -> None:
    """The learners maic remembers: name, sessions, lessons, last update."""
    from ..store.learner_profile import learners_dir, list_profiles

    found = list_profiles()
    if not found:
        typer.echo(f"No learner profiles in {learners_dir()} (chat with --name NAME to start one).", err=True)
        return
    for path, profile in found:
        if isinstance(profile, str):
            typer.echo(f"{clean(path.name)}\tunreadable: {clean(profile)}")
        else:
            typer.echo(f"{clean(profile.name)}\t{profile.sessions} sessions\t{len(profile.lessons)} lessons\t"
                       f"updated {clean(profile.updated) or '-'}")


def _require(name: str) -> Path:
    from ..store.learner_profile import profile_path

    path = profile_path(name)
    if not path.exists():
        raise InputError(f"no learner {clean(name)[:60]!r} ({path} does not exist; `maic learner list` lists them)")
    return path


@app.command("show")
@friendly
def show(name: str = typer.Argument(..., help="The learner's name.")) -> None:
    """The profile, and the lines the class gets in its prompts."""
    from ..store.learner_profile import dump_profile, load_profile, memory_lines

    path = _require(name)
    profile = load_profile(path)
    typer.echo(f"# {path}")
    typer.echo(clean(dump_profile(profile)), nl=False)
    lines = memory_lines(profile)
    typer.echo("\n# What the class is told (maic prompts show … --name NAME shows it in place):")
    for line in lines or ["(nothing yet)"]:
        typer.echo(f"- {clean(line)}")


@app.command("edit")
@friendly
def edit(name: str = typer.Argument(..., help="The learner's name.")) -> None:
    """Edit the profile in $VISUAL or $EDITOR; it is kept only if it is still valid."""
    from ..store.learner_edit import save_edit, start_edit

    path = _require(name)
    command = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    try:
        editor = shlex.split(command)
    except ValueError as exc:
        raise InputError(f"$VISUAL/$EDITOR {clean(command)[:80]!r}: cannot be read as a command ({exc})") from None
    if not editor:
        raise InputError("$VISUAL/$EDITOR: empty; set it to your editor (e.g. EDITOR=nano)")
    draft, original = start_edit(path)
    try:
        subprocess.run([*editor, str(draft)], check=True)
    except (OSError, subprocess.CalledProcessError) as exc:
        draft.unlink(missing_ok=True)
        raise MaicError(f"the editor {clean(' '.join(editor))[:80]!r} failed ({exc}); {path} is unchanged") from None
    typer.echo(f"Saved {save_edit(path, original, draft)}")


@app.command("forget")
@friendly
def forget(
    name: str = typer.Argument(..., help="The learner's name."),
    everything: bool = typer.Option(False, "--all", help="Also delete the sessions and transcripts under "
                                    "$MAIC_HOME that hold this learner's words."),
) -> None:
    """Remove the learner's profile (and, with --all, their sessions and transcripts)."""
    from ..store.learner_profile import profile_path
    from ..store.paths import maic_home

    path = profile_path(name)
    removed = path.exists()
    path.unlink(missing_ok=True)
    path.with_name(f".{path.stem}.edit.yaml").unlink(missing_ok=True)
    held = _held_files(name)
    if everything:
        for file in held:
            file.unlink(missing_ok=True)
    said = f"Removed {path}" if removed else f"No profile for {clean(name)[:60]!r} ({path})"
    if held and everything:
        said += f"; deleted {len(held)} sessions and transcripts under {maic_home()} that hold their words"
    elif held:
        said += (f"; {len(held)} sessions and transcripts under {maic_home()} still hold their words "
                 "(forget --all deletes them)")
    typer.echo(said + ". The prompt history ($MAIC_HOME/history) is shared by every learner and is not touched.")


def _held_files(name: str) -> list[Path]:
    """The learner's transcripts and session files under ``$MAIC_HOME`` (by the name in them)."""
    from ..files import read_bounded
    from ..store.paths import maic_home
    from ..store.xapi_export import learner_transcripts

    transcripts, _ = learner_transcripts(name)
    found = [t.path for t in transcripts]
    wanted = " ".join(name.split()).casefold()
    sessions = maic_home() / "sessions"
    for path in sorted(sessions.glob("*.json")) if sessions.is_dir() else []:
        try:
            data = json.loads(read_bounded(path, MAX_SESSION_BYTES, "session file"))
        except (MaicError, ValueError, RecursionError):
            continue
        nickname = data.get("profile", {}).get("nickname") if isinstance(data, dict) else None
        if isinstance(nickname, str) and " ".join(nickname.split()).casefold() == wanted:
            found.append(path)
    return found


@app.command("export")
@friendly
def export(
    name: str = typer.Argument(..., help="The learner's name."),
    xapi: Path = typer.Option(None, "--xapi", help="Write the learner's classes (their transcripts under "
                              "$MAIC_HOME/transcripts) as xAPI statements, one JSON object a line."),
    lrs: str = typer.Option(None, "--lrs", help=LRS_HELP),
) -> None:
    """The learner's learning records (xAPI), to a file and/or a learning record store."""
    from .xapi_send import all_statements, write_and_send

    if xapi is None and lrs is None:
        raise InputError("say where: --xapi FILE.jsonl and/or --lrs URL")
    from ..store.xapi_export import learner_transcripts

    transcripts, problems = learner_transcripts(name)
    for problem in problems:
        typer.echo(f"maic: warning: {clean(problem)}; skipped", err=True)
    if not transcripts:
        raise InputError(f"no transcripts of {clean(name)[:60]!r} under $MAIC_HOME/transcripts")
    write_and_send(all_statements(transcripts), to_file=xapi, lrs=lrs)
