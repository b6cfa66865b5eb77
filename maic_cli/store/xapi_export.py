"""Learning records from transcripts: the statements of a recorded class, written as JSON lines.

A transcript (``store/transcript.py``) holds what :mod:`maic_cli.engine.xapi` needs: the
learner's lines and the engine's events, each at the transcript's clock (``t`` seconds after
the header's ``created_at``), and the class's own key (its header).  So ``maic replay FILE
--export FILE.xapi.jsonl``, ``maic learner export NAME --xapi FILE`` and ``maic run --xapi``
write the same statements, with the same ids, for the same class.

A learner's transcripts are the ones under ``$MAIC_HOME/transcripts`` whose header names
them (``maic chat`` records there unless ``--transcript`` says otherwise); a transcript that
cannot be read is skipped with a warning.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..engine.session_record import Happening
from ..engine.xapi import DEFAULT_HOMEPAGE, ClassKey, class_key, statements
from ..errors import InputError, MaicError
from .paths import maic_home, write_atomic
from .transcript import EventLine, LearnerLine, Transcript, read_transcript

MAX_STATEMENTS = 100_000  # in one export


def transcript_statements(transcript: Transcript, *, homepage: str = DEFAULT_HOMEPAGE) -> list[dict[str, Any]]:
    header = transcript.header
    key = ClassKey(learner=header.profile.nickname, key=class_key(header.created_at, header.session, header.model),
                   homepage=homepage, topic=header.config.discussion_topic)
    happenings = []
    for entry in transcript.entries:
        at = header.created_at + max(entry.t, 0.0)
        if isinstance(entry, LearnerLine):
            happenings.append(Happening(at=at, learner=entry.text))
        elif isinstance(entry, EventLine):
            happenings.append(Happening(at=at, event=entry.event))
    return statements(key, happenings, {agent.id: agent.role for agent in header.agents})


def write_statements(path: Path, found: Iterable[dict[str, Any]]) -> int:
    """``path`` holds the statements, one JSON object a line (private, written at once); how many."""
    lines = [json.dumps(statement, ensure_ascii=False) for statement in found]
    if len(lines) > MAX_STATEMENTS:
        raise MaicError(f"{path}: more than {MAX_STATEMENTS:,} statements; export fewer classes at once")
    try:
        write_atomic(path.expanduser(), "".join(line + "\n" for line in lines))
    except OSError as exc:
        raise InputError(f"{path}: cannot write: {exc.strerror or exc}") from None
    return len(lines)


def learner_transcripts(name: str, home: Path | None = None) -> tuple[list[Transcript], list[str]]:
    """The learner's transcripts (oldest first) and what could not be read."""
    folder = (home or maic_home()) / "transcripts"
    wanted = " ".join(name.split()).casefold()
    found: list[Transcript] = []
    problems: list[str] = []
    for path in sorted(folder.glob("*.jsonl")) if folder.is_dir() else []:
        try:
            transcript = read_transcript(path)
        except MaicError as exc:
            problems.append(str(exc))
            continue
        if " ".join(transcript.header.profile.nickname.split()).casefold() == wanted:
            found.append(transcript)
    found.sort(key=lambda t: t.header.created_at)
    return found, problems
