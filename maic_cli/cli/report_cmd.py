"""``maic report DIR…``: rebuild the reports of finished batches without running anything.

One folder: its report.json, report.md, turns.csv and rounds.csv are written again
from its ``runs/`` results (after an upgrade of maic, or to get the new tables and
intervals for an old batch).  Several folders: their runs are combined into
``--out``, as ``maic run --merge`` does, each folder and each run counted once.
Only maic's own batch folders are read or written.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import typer

from .. import __version__
from ..errors import InputError
from .errors import friendly


def previous_meta(folder: Path) -> dict[str, Any]:
    """What the batch's last report said about how it was run (kept when the report is rebuilt)."""
    try:
        meta = json.loads((folder / "report.json").read_text(encoding="utf-8")).get("meta", {})
    except (OSError, ValueError, AttributeError, RecursionError):
        return {}
    return {str(k): v for k, v in meta.items() if isinstance(v, str | int | float | bool)} if isinstance(meta, dict) \
        else {}


@friendly
def report(
    folders: list[Path] = typer.Argument(..., help="Output folders of maic run (batches)."),
    out: Path = typer.Option(None, "--out", help="With several folders: where the combined report goes."),
) -> None:
    """Rebuild the reports (md, json, csv) of one or more finished batches; nothing is re-run."""
    from rich.console import Console

    from ..store.batch_folder import claim, is_batch_folder
    from ..store.reports import load_runs
    from .run_cmd import merge_results, print_summary, save_reports

    for folder in folders:
        if not folder.is_dir() or not is_batch_folder(folder):
            raise InputError(f"{folder}: no maic batch there (no runs/ folder); nothing was changed")
    if len(folders) == 1 and out is None:
        target, results = folders[0], load_runs(folders[0])
        meta = {**previous_meta(target), "rebuilt by": f"maic {__version__}"}
    else:
        if out is None:
            raise InputError("several folders need --out: the combined report goes to its own folder")
        target, results = out, merge_results(folders, out)
        meta = {"merged": ", ".join(map(str, folders)), "maic": __version__}
        claim(out, "--out", meta)
    if not results:
        raise InputError(f"{', '.join(map(str, folders))}: no finished runs to report on")
    summary = save_reports(target, results, meta)
    print_summary(summary, Console() if sys.stdout.isatty() else Console(width=160))
    typer.echo(f"Report: {target / 'report.html'}, {target / 'report.md'}, {target / 'report.json'}, turns.csv and "
               "rounds.csv", err=True)
