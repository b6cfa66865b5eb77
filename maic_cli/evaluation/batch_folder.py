"""Which folders ``maic run`` may write into: its own batch folders, or new or empty ones.

A batch (or a merge) first writes ``maic-batch.json`` into its output folder;
that file (or the ``runs/`` folder of a batch from an older maic) is what makes
a folder maic's.  A folder holding anything else is the user's and is never
written to: ``--out`` and ``--resume`` refuse it before anything is touched.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from ..errors import InputError, MaicError
from ..store.paths import write_atomic
from .run_results import runs_dir

MARKER = "maic-batch.json"


def is_batch_folder(folder: Path) -> bool:
    return (folder / MARKER).is_file() or runs_dir(folder).is_dir()


def check_resumable(folder: Path) -> None:
    """``--resume FOLDER``: there must be a batch in it to continue."""
    if not folder.is_dir() or not is_batch_folder(folder):
        raise InputError(f"--resume {folder}: no maic batch there (no {MARKER} or runs/ folder); nothing was changed")


def claim(folder: Path, flag: str, meta: Mapping[str, str | bool | int | float]) -> None:
    """Make ``folder`` this batch's output (created if new); refused if it holds files that are not maic's."""
    try:
        if folder.exists() and not folder.is_dir():
            raise InputError(f"{flag} {folder}: not a folder")
        if folder.is_dir() and any(folder.iterdir()) and not is_batch_folder(folder):
            raise InputError(f"{flag} {folder}: the folder holds other files and no maic batch; "
                             "choose a new or empty folder")
        write_atomic(folder / MARKER, json.dumps({"format": "maic-batch", **meta}, indent=1), durable=False)
    except OSError as exc:
        raise MaicError(f"{flag} {folder}: cannot write there: {exc.strerror or exc}") from None
