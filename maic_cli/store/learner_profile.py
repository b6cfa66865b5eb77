"""The learner's memory: one profile per named learner, ``$MAIC_HOME/learners/<name>.yaml``.

A profile holds the learner's level and interests (theirs to edit), the questions they asked
(the most recent :data:`MAX_QUESTIONS`), the lessons they took with their quiz results and
the misconceptions the class noticed (wrong quiz answers, the teacher's corrections).  It is
updated when a chat ends (:func:`remember`) and summed up in a few quoted lines for the
director's and the agents' prompts (:func:`memory_lines`).

A profile is private (0600, written atomically) and, like any file a user may have been
sent, untrusted when read: a regular file of at most :data:`MAX_PROFILE_BYTES`, read by the
bounded YAML reader, every field checked and bounded (``path:line: field: problem`` when it
is not), every string cleaned of control sequences and kept on one line.
"""

from __future__ import annotations

import hashlib
import re
import time
from pathlib import Path
from typing import Annotated

import yaml
from filelock import FileLock
from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from ..engine.session_record import SessionRecord, cut
from ..errors import InputError
from ..untrusted import one_line
from ..yamlfile import load_model
from .paths import maic_home, write_atomic

MAX_PROFILE_BYTES = 64 * 1024
MAX_QUESTIONS = 20
MAX_LESSONS = 20
MAX_NOTES = 12
MAX_INTERESTS = 10
MEMORY_CHARS = 1000  # the summary in a prompt, at most (with every part full: about 950)
LOCK_SECONDS = 10  # waiting for another chat (or an edit) of the same learner to save the profile


def _one_line(value: str) -> str:
    return " ".join(one_line(value).split())


Line = Annotated[str, AfterValidator(_one_line)]


class LessonEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    title: Line = Field(min_length=1, max_length=200)
    completed: bool = False
    points: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    max_points: int | None = Field(default=None, ge=0)
    date: Line = Field(default="", max_length=40)


class LearnerProfile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: Line = Field(min_length=1, max_length=60)
    level: Line = Field(default="", max_length=120)
    interests: list[Annotated[Line, Field(max_length=80)]] = Field(default_factory=list, max_length=MAX_INTERESTS)
    sessions: int = Field(default=0, ge=0)
    questions: list[Annotated[Line, Field(max_length=300)]] = Field(default_factory=list, max_length=MAX_QUESTIONS)
    lessons: list[LessonEntry] = Field(default_factory=list, max_length=MAX_LESSONS)
    misconceptions: list[Annotated[Line, Field(max_length=300)]] = Field(default_factory=list,
                                                                         max_length=MAX_NOTES)
    updated: Line = Field(default="", max_length=40)


def learners_dir(home: Path | None = None) -> Path:
    return (home or maic_home()) / "learners"


def profile_path(name: str, home: Path | None = None) -> Path:
    """The file of learner ``name`` (names are compared case-insensitively): a readable slug,
    with a short hash when the slug had to leave characters out."""
    key = " ".join(name.split()).casefold()
    if not key:
        raise InputError("a learner needs a name (--name, or `name:` in config.yaml)")
    slug = re.sub(r"[^a-z0-9]+", "-", key).strip("-")[:40]
    if slug != key:
        slug = f"{slug or 'learner'}-{hashlib.sha256(key.encode()).hexdigest()[:8]}"
    return learners_dir(home) / f"{slug}.yaml"


def profile_lock(path: Path) -> FileLock:
    """The lock a chat ending (chat/memory.py) and an edit (store/learner_edit.py) hold while they read the
    profile again and write it."""
    return FileLock(str(path.with_name(f".{path.name}.lock")), timeout=LOCK_SECONDS, mode=0o600)


def load_profile(path: Path) -> LearnerProfile:
    """A profile file, checked (``path:line: field: problem`` when it is wrong)."""
    return load_model(path, LearnerProfile, max_bytes=MAX_PROFILE_BYTES)


def find_profile(name: str, home: Path | None = None) -> LearnerProfile | None:
    path = profile_path(name, home)
    return load_profile(path) if path.exists() else None


def save_profile(profile: LearnerProfile, home: Path | None = None) -> Path:
    path = profile_path(profile.name, home)
    write_atomic(path, dump_profile(profile))
    return path


def dump_profile(profile: LearnerProfile) -> str:
    header = "# maic's memory of a learner: yours to read, edit (maic learner edit) or forget (maic learner forget)\n"
    return header + yaml.safe_dump(profile.model_dump(), sort_keys=False, allow_unicode=True, width=1000)


def list_profiles(home: Path | None = None) -> list[tuple[Path, LearnerProfile | str]]:
    """Each profile file with its profile, or why it cannot be read."""
    folder = learners_dir(home)
    if not folder.is_dir():
        return []
    found: list[tuple[Path, LearnerProfile | str]] = []
    for path in sorted(p for p in folder.glob("*.yaml") if not p.name.startswith(".")):  # not an edit's draft
        try:
            found.append((path, load_profile(path)))
        except InputError as exc:
            found.append((path, str(exc)))
    return found


def remember(profile: LearnerProfile, record: SessionRecord, *, level: str | None = None,
             now: float | None = None) -> LearnerProfile:
    """``profile`` after one more session: what it asked, took and got wrong (bounded, newest kept)."""
    date = time.strftime("%Y-%m-%d", time.gmtime(now if now is not None else time.time()))
    lessons = list(profile.lessons)
    for facts in record.lessons:
        score = facts.score
        entry = LessonEntry(title=cut(facts.title, 200), completed=facts.completed, date=date,
                            points=score[0] if score else None, max_points=score[1] if score else None)
        lessons = [known for known in lessons if known.title != entry.title] + [entry]
    return profile.model_copy(update={
        "level": profile.level or cut(level or "", 120),
        "sessions": profile.sessions + 1,
        "questions": (profile.questions + [cut(q, 300) for q in record.questions])[-MAX_QUESTIONS:],
        "lessons": lessons[-MAX_LESSONS:],
        "misconceptions": _unique(profile.misconceptions + record.misconceptions)[-MAX_NOTES:],
        "updated": date,
    })


def _unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


def memory_lines(profile: LearnerProfile, *, limit: int = MEMORY_CHARS) -> list[str]:
    """The profile as a few short lines for the prompts, at most ``limit`` characters in all.  What the
    learner or a shared file wrote stands in double quotes: data about the learner, not instructions."""
    def quoted(items: list[str], size: int) -> str:
        return "; ".join('"' + cut(item, size).replace('"', "'") + '"' for item in items)

    lines = {  # in the order shown; kept by priority (misconceptions first) while they fit in ``limit``
        "level": f"Level: {quoted([profile.level], 80)}" if profile.level else "",
        "interests": f"Interests: {quoted(profile.interests[:5], 40)}" if profile.interests else "",
        "sessions": f"Sessions with this class before: {profile.sessions}" if profile.sessions else "",
        "lessons": "Lessons taken: " + "; ".join(map(_lesson, profile.lessons[-3:])) if profile.lessons else "",
        "questions": f"Recent questions: {quoted(profile.questions[-3:], 100)}" if profile.questions else "",
        "misconceptions": (f"Misconceptions noticed: {quoted(profile.misconceptions[-3:], 160)}"
                           if profile.misconceptions else ""),
    }
    kept: set[str] = set()
    size = 0
    for name in ("misconceptions", "lessons", "questions", "level", "interests", "sessions"):
        if lines[name] and size + len(lines[name]) <= limit:
            kept.add(name)
            size += len(lines[name])
    return [line for name, line in lines.items() if name in kept]


def _lesson(entry: LessonEntry) -> str:
    state = "completed" if entry.completed else "not finished"
    if entry.points is not None and entry.max_points:
        state += f", quiz {entry.points:g}/{entry.max_points}"
    return '"' + cut(entry.title, 80).replace('"', "'") + f'" ({state})'
