"""Prompt sets for ``maic run``: the ``--prompts`` sets compared, a scenario's own, the default.

A set's label (its folder's name, or ``builtin``) names it in reports, in each run's
result and, when several sets are compared, in the run ids.  Every set is loaded,
and so compiled, before a run starts: a broken template is ``path:line: problem``,
exit 2, with nothing run and nothing written.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import InputError
from ..untrusted import clean

if TYPE_CHECKING:
    from ..engine.prompt_set import PromptSet
    from .batch import RunSpec
    from .run_results import RunResult

BUILTIN_LABEL = "builtin"


def prompts_label(folder: Path) -> str:
    """A prompt set's short name for run ids and reports: its folder's name, file-name safe."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", folder.resolve().name).strip("-.") or "prompts"


def compared_prompt_sets(folders: list[Path]) -> list[tuple[str, PromptSet]]:
    """``--prompts`` sets as ``(label, set)``, each compiled now (a broken template stops the batch
    before anything runs); ``builtin`` (when no such folder exists) is the built-in set as shipped."""
    from ..engine.prompt_set import PromptSet
    from ..store.prompts import load_prompt_set

    chosen: list[tuple[str, PromptSet]] = []
    given: dict[str, Path] = {}
    for folder in folders:
        builtin = str(folder) == BUILTIN_LABEL and not folder.is_dir()
        label = BUILTIN_LABEL if builtin else prompts_label(folder)
        if label in given:
            raise InputError(f"--prompts {folder}: the same name ({label}) as --prompts {given[label]}; "
                             "compare folders with distinct names")
        given[label] = folder
        chosen.append((label, PromptSet.builtin() if builtin else load_prompt_set(folder)))
    return chosen


class DefaultPromptSets:
    """The sets a batch uses when ``--prompts`` is not given: a scenario's own, else the default
    (``$MAIC_HOME/prompts`` overrides, or the built-in set); each folder loaded once."""

    def __init__(self) -> None:
        self._loaded: dict[Path | None, tuple[str, PromptSet]] = {}

    def for_scenario(self, folder: Path | None) -> tuple[str, PromptSet]:
        from ..store.prompts import load_prompt_set

        if folder not in self._loaded:
            prompt_set = load_prompt_set(folder)
            label = prompts_label(Path(prompt_set.name)) if prompt_set.overridden else BUILTIN_LABEL
            self._loaded[folder] = (label, prompt_set)
        return self._loaded[folder]


def check_same_prompt_sets(specs: list[RunSpec], done: dict[str, RunResult], folder: Path) -> None:
    """``--resume`` continues a batch with the prompt sets and director policy it began with: a run
    id names neither when only one is used, so another would be mixed in under the same ids."""
    for spec in specs:
        earlier = done.get(spec.run_id)
        if earlier is not None and earlier.prompts != spec.prompts_label:
            raise InputError(f"--resume {folder}: run {clean(spec.run_id)} used the prompt set "
                             f"{clean(earlier.prompts)}, this batch uses {spec.prompts_label}; resume with the "
                             "same --prompts, or start a new --out")
        if earlier is not None and earlier.director != spec.policy.name:
            raise InputError(f"--resume {folder}: run {clean(spec.run_id)} used the director "
                             f"{clean(earlier.director)}, this batch uses {clean(spec.policy.name)}; resume with "
                             "the same --director, or start a new --out")
