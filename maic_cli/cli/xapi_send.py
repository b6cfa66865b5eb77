"""The learning-record options the commands share: ``--xapi FILE`` / ``--export FILE.xapi.jsonl``
(write the statements) and ``--lrs URL`` (send them to a learning record store).

``maic replay``, ``maic learner export`` and ``maic run`` build their statements from
transcripts (store/xapi_export.py) and hand them here.  The store's URL is the user's own:
``--lrs URL`` typed on the command line (nothing is sent unless it is); its credentials come from the
environment (store/lrs.py).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from ..errors import InputError
from ..untrusted import clean

if TYPE_CHECKING:
    from ..store.transcript import Transcript

XAPI_SUFFIX = ".xapi.jsonl"
LRS_HELP = ("Send the learning records (xAPI) to this learning record store (its xAPI endpoint, e.g. "
            "http://127.0.0.1:8100/xAPI); credentials from MAIC_LRS_TOKEN, or "
            "MAIC_LRS_USER and MAIC_LRS_PASSWORD.")


def is_xapi_file(path: Path) -> bool:
    return path.name.endswith(XAPI_SUFFIX)


def all_statements(transcripts: Iterable[Transcript]) -> list[dict[str, Any]]:
    from ..store.xapi_export import transcript_statements

    homepage = os.environ.get("MAIC_XAPI_HOMEPAGE")
    if homepage and not homepage.startswith(("http://", "https://")):
        raise InputError(f"MAIC_XAPI_HOMEPAGE={clean(homepage)[:100]}: the learners' account home page is an "
                         "http:// or https:// URL")
    found: list[dict[str, Any]] = []
    for transcript in transcripts:
        found.extend(transcript_statements(transcript, **({"homepage": homepage} if homepage else {})))
    return found


def write_and_send(found: list[dict[str, Any]], *, to_file: Path | None, lrs: str | None) -> None:
    """Write the statements to ``to_file`` and/or send them to ``lrs``, saying what was done."""
    if to_file is not None:
        from ..store.xapi_export import write_statements

        count = write_statements(to_file, found)
        typer.echo(f"Wrote {count} xAPI statements to {clean(str(to_file))}")
    if lrs is not None:
        send(found, lrs)


def send_transcript(path: Path, url: str) -> None:
    """``maic chat --lrs``: the class's records (its whole transcript: ids are stable, so a resumed class's
    earlier statements are not stored twice)."""
    from ..store.transcript import read_transcript

    send(all_statements([read_transcript(path)]), url)


def check_lrs(url: str | None) -> None:
    """A ``--lrs`` URL that cannot be a store's, or credentials that cannot be sent, are refused (exit 2)
    before anything runs."""
    if url is not None:
        from ..store.lrs_auth import credentials

        credentials(url)


def batch_records(folder: Path, run_ids: Iterable[str], *, write: bool, lrs: str | None) -> None:
    """``maic run --xapi/--lrs``: each run's statements to ``OUT/xapi/RUN.xapi.jsonl``, and/or all to ``lrs``."""
    if not write and lrs is None:
        return
    from ..errors import MaicError
    from ..store.transcript import read_transcript

    found: list[dict[str, Any]] = []
    for run_id in sorted(run_ids):
        path = folder / "transcripts" / f"{run_id}.jsonl"
        try:
            statements = all_statements([read_transcript(path)])
        except MaicError as exc:
            typer.echo(f"maic: warning: no learning records for run {clean(run_id)}: {clean(str(exc))}", err=True)
            continue
        if write:
            from ..store.xapi_export import write_statements

            write_statements(folder / "xapi" / f"{run_id}{XAPI_SUFFIX}", statements)
        found.extend(statements)
    if write:
        typer.echo(f"Learning records (xAPI): {folder / 'xapi'}", err=True)
    if lrs is not None:
        send(found, lrs)


def send(found: list[dict[str, Any]], url: str) -> None:
    """Send to the store, saying so; the store is shown without the user, password or query its URL holds."""
    import asyncio

    from ..store.lrs import push, shown_url, statements_url

    target = statements_url(url)  # a bad URL is one line before anything is sent
    result = asyncio.run(push(target, found, waiting=lambda said: typer.echo(f"maic: {said}", err=True)))
    note = f"; {result.conflicts} already held there with other content (not sent again)" if result.conflicts else ""
    typer.echo(f"Sent {result.sent} xAPI statements to {shown_url(target)} in {result.batches} batches{note}")
