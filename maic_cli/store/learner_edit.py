"""``maic learner edit``'s files: the draft an editor opens, and saving it back without losing anything.

The profile is read as ``list`` and ``show`` read it (a regular file of at most
:data:`~.learner_profile.MAX_PROFILE_BYTES`: a FIFO, ``/dev/zero`` or a folder is one line) and
copied, as it is, to a draft beside it (``.<name>.edit.yaml``).  Saving the edited draft takes the
lock a chat takes when it saves the learner's memory (:func:`~.learner_profile.profile_lock`) and
refuses — keeping the draft, saying where — when the profile changed since the draft was made (a
chat of the learner ended meanwhile), when the edit renames the learner to a name whose file is
another learner's, or when the draft is not a valid profile.  A draft kept by an earlier edit is
never overwritten: the next edit refuses until it is dealt with.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from filelock import Timeout

from ..errors import InputError
from ..files import read_bounded
from .learner_profile import MAX_PROFILE_BYTES, dump_profile, load_profile, profile_lock, profile_path
from .paths import write_atomic


def draft_path(path: Path) -> Path:
    return path.with_name(f".{path.stem}.edit.yaml")


def read_profile_bytes(path: Path) -> bytes:
    """The profile file as it is (bounded; a regular file only)."""
    return read_bounded(path, MAX_PROFILE_BYTES, "learner profile")


def start_edit(path: Path) -> tuple[Path, bytes]:
    """The draft to edit, a copy of the profile, and what the profile held when it was made."""
    draft = draft_path(path)
    if draft.exists() or draft.is_symlink():
        raise InputError(f"an earlier edit of this learner is kept in {draft}: take from it what you want to "
                         "keep, delete it, then edit again")
    original = read_profile_bytes(path)
    write_atomic(draft, original)
    return draft, original


def save_edit(path: Path, original: bytes, draft: Path) -> Path:
    """Write the edited ``draft`` over the profile (or, renamed, to its new name's file); the file saved.
    Every refusal is an :class:`InputError` that says where the draft is kept."""
    note = f"your edit is kept in {draft}"
    kept = f"{path} is unchanged, {note}"
    try:
        profile = load_profile(draft)
    except InputError as exc:
        raise InputError(f"{exc}; {kept}") from None
    target = profile_path(profile.name)
    try:
        with contextlib.ExitStack() as locks:
            for locked in sorted({path, target}):  # always in the same order: two edits never wait on each other
                locks.enter_context(profile_lock(locked))
            _check_unchanged(path, original, note)
            if target != path and (target.exists() or target.is_symlink()):
                raise InputError(f"{target} holds another learner's memory: renaming this learner to "
                                 f"{profile.name[:60]!r} would overwrite it (edit or forget that learner first); "
                                 f"{kept}")
            write_atomic(target, dump_profile(profile))
            if target != path:  # renamed: the profile moved to its new name's file
                path.unlink(missing_ok=True)
    except Timeout:
        raise InputError(f"the learner's profile is locked (a chat of this learner is saving it); {kept}: "
                         "edit again in a moment") from None
    except OSError as exc:
        raise InputError(f"{target}: cannot save the profile ({exc.strerror or exc}); {kept}") from None
    draft.unlink(missing_ok=True)
    return target


def _check_unchanged(path: Path, original: bytes, note: str) -> None:
    try:
        current = read_profile_bytes(path)
    except InputError:
        current = None
    if current != original:
        raise InputError(f"{path} changed while you edited it (a chat of this learner ended, or it was "
                         f"forgotten); it is left as it is and {note}: compare the two and "
                         "edit again")
