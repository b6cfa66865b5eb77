"""A batch's per-run results: ``OUT/runs/<run_id>.json``, one file per finished run.

Written (atomically) when a run ends, so ``--resume`` can skip it and
``--merge`` can combine folders from several machines; store/reports.py,
store/report_stats.py and store/report_tables.py read them.
"""

from __future__ import annotations

import time
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from ..engine.metrics import RoundSummary
from ..errors import InputError
from ..files import read_bounded
from .paths import write_atomic


class CallStat(BaseModel):
    purpose: str
    agent_id: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    cost: float = 0.0
    ttft: float | None = None
    duration: float = 0.0
    error_kind: str | None = None


class RunResult(BaseModel):
    run_id: str
    scenario: str
    scenario_path: str
    model: str
    director: str = "llm"  # the director policy (engine/policies.py); runs before it were "llm"
    repeat: int
    status: str  # complete | error | cancelled
    prompts: str = "builtin"  # the prompt set's label (results saved before prompt sets: the built-in one)
    rounds: list[RoundSummary] = Field(default_factory=list)
    calls: list[CallStat] = Field(default_factory=list)
    failures: list[str] = Field(default_factory=list)
    error: str | None = None
    transcript: str | None = None
    started_at: float = Field(default_factory=time.time)
    duration: float = 0.0

    @property
    def passed(self) -> bool:
        return self.status == "complete" and not self.failures


def runs_dir(out: Path) -> Path:
    return out / "runs"


def save_run(out: Path, result: RunResult) -> None:
    """Atomic (never half a file) but not fsynced: after a machine crash ``--resume`` reruns it."""
    write_atomic(runs_dir(out) / f"{result.run_id}.json", result.model_dump_json(indent=1), durable=False)


def load_runs(folder: Path) -> list[RunResult]:
    directory = runs_dir(folder)
    if not directory.is_dir():
        raise InputError(f"{folder}: no runs/ folder here (not a maic run output folder)")
    results = []
    for path in sorted(directory.glob("*.json")):
        try:
            results.append(RunResult.model_validate_json(read_bounded(path, 2**26, "run result")))
        except (ValidationError, ValueError) as exc:
            raise InputError(f"{path}: damaged run result ({str(exc).splitlines()[0]})") from None
    return results
