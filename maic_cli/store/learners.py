"""Learner files (``learners/<name>.yaml``) and the learner seat of a scenario.

A learner file describes a simulated learner (engine/learner.py: name, level,
persona, what they know, misconceptions, an incorrect solution they believe, how
they behave); a bad one is reported as ``path:line: field: problem``, and every
text in it is cleaned when read.  Built-in samples ship in the ``learners``
folder (like ``agents``); ``maic chat --watch NAME`` and a scenario's
``learner: {simulated: NAME}`` find them by name.

A scenario seats a simulated learner with ``learner: {simulated: FILE or mapping,
model: MODEL, turns: N}``: ``FILE`` is relative to the scenario's folder (and may
not lead out of it) or names a built-in learner; a mapping is the learner inline.
"""

from __future__ import annotations

from pathlib import Path, PurePath

from pydantic import ConfigDict, Field, field_validator

from ..engine.learner import LearnerProfile
from ..engine.models import UserProfile
from ..errors import InputError
from ..yamlfile import load_model, yaml_files
from .paths import builtin_dir, maic_home


class LearnerSeat(UserProfile):
    """A scenario's ``learner:``: a profile for the class (``nickname``, ``bio``), and optionally a
    simulated learner in the seat instead of scripted ``messages:``."""

    model_config = ConfigDict(extra="forbid")

    simulated: str | LearnerProfile | None = None  # a learner file (beside the scenario, or built in) or inline
    model: str | None = Field(default=None, min_length=1)  # its model (default: --learner-model, then the class's)
    turns: int | None = Field(default=None, ge=1, le=50)  # the most it speaks

    @field_validator("simulated")
    @classmethod
    def _plain_reference(cls, value: str | LearnerProfile | None) -> str | LearnerProfile | None:
        if isinstance(value, str) and (not value or PurePath(value).is_absolute() or ".." in PurePath(value).parts):
            raise ValueError("a learner file relative to the scenario file, inside its folder (no absolute "
                             "path, no ..), or a built-in learner's name")
        return value


def load_learner(path: Path) -> LearnerProfile:
    return load_model(path, LearnerProfile)


def learner_folders() -> list[Path]:
    return [builtin_dir("learners"), maic_home() / "learners"]


def builtin_learners() -> dict[str, Path]:
    """Learner files found by name: the built-in ones, then ``$MAIC_HOME/learners`` (a later one wins)."""
    found: dict[str, Path] = {}
    for folder in learner_folders():
        if folder.is_dir():
            found.update({path.stem: path for path in yaml_files(folder)})
    return found


def find_learner(reference: str, base: Path | None = None) -> LearnerProfile:
    """A learner by file name (relative to ``base``, staying inside it) or by a built-in learner's name."""
    if base is not None:
        folder = base.resolve()
        candidate = (folder / reference).resolve()
        if candidate.is_file():
            if not candidate.is_relative_to(folder):
                raise InputError(f"{reference}: the learner file leads outside {base}")
            return load_learner(candidate)
    else:
        candidate = Path(reference)
        if candidate.is_file() or (candidate.suffix in (".yaml", ".yml") and (candidate.exists() or
                                                                            candidate.is_symlink())):
            return load_learner(candidate)  # a FIFO, a device or a broken link: the reader says what it is
    known = builtin_learners()
    stem = Path(reference).stem if reference.endswith((".yaml", ".yml")) else reference
    if stem in known and ("/" not in reference):
        return load_learner(known[stem])
    raise InputError(f"{reference}: no such learner file (built-in learners: {', '.join(sorted(known)) or 'none'})")


def seat_learner(seat: LearnerSeat, scenario_path: Path) -> LearnerProfile | None:
    """The simulated learner a scenario seats (``None``: its learner is scripted)."""
    if seat.simulated is None:
        return None
    if isinstance(seat.simulated, LearnerProfile):
        return seat.simulated
    try:
        return find_learner(seat.simulated, scenario_path.parent)
    except InputError as exc:
        raise InputError(f"{scenario_path}: learner.simulated: {exc}") from None
