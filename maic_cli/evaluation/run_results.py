"""A batch's per-run results: ``OUT/runs/<run_id>.json``, one file per finished run.

Written (atomically) when a run ends, so ``--resume`` can skip it and
``--merge`` can combine folders from several machines; report/reports.py,
report/report_stats.py and report/report_tables.py read them.  A judged run
(``maic run --judge``, ``maic report --judge``) carries its verdicts and the judge's
own calls in ``judge``, apart from the class's ``calls``; a simulated learner's calls are in
``learner_calls``, and a tutoring task's run has its ``tutoring`` outcome.  Which transcript is a run's
(:func:`transcript_path`, :func:`transcript_mismatch`) is decided here for the judge and the report alike.
"""

from __future__ import annotations

import math
import re
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import (
    BaseModel,
    Field,
    PrivateAttr,
    SerializerFunctionWrapHandler,
    ValidationError,
    model_serializer,
    model_validator,
)

from ..errors import InputError
from ..files import read_bounded
from ..lessons.learner_quiz import LearningGain
from ..llm.recording import CallRecord
from ..replies.sanitize import clean_tree
from ..store.paths import write_atomic
from ..untrusted import one_line
from .judge import RoundVerdict
from .metrics import RoundSummary
from .tutoring import TutoringOutcome

if TYPE_CHECKING:
    from ..store.transcript import Transcript

MAX_SECONDS = 1e7  # a duration or latency (115 days): a file that says more was not written by maic
MAX_AMOUNT = 1e12  # tokens or dollars
Seconds = Annotated[float, Field(ge=0, le=MAX_SECONDS, allow_inf_nan=False)]
Amount = Annotated[float, Field(ge=0, le=MAX_AMOUNT, allow_inf_nan=False)]
Count = Annotated[int, Field(ge=0, le=int(MAX_AMOUNT))]


class CallStat(BaseModel):
    purpose: str
    agent_id: str | None = None
    prompt_tokens: Count = 0
    completion_tokens: Count = 0
    cached_tokens: Count = 0
    cost: Amount = 0.0
    ttft: Seconds | None = None
    duration: Seconds = 0.0
    error_kind: str | None = None

    @classmethod
    def from_record(cls, record: CallRecord) -> CallStat:
        return cls(purpose=record.purpose, agent_id=record.agent_id, ttft=record.ttft, duration=record.duration,
                   error_kind=record.error_kind,
                   **{k: getattr(record.usage, k) for k in ("prompt_tokens", "completion_tokens", "cached_tokens",
                                                            "cost")})


class RunJudgement(BaseModel):
    """A judge's verdicts on one run: one per round, and the judge's calls (priced apart from the class's)."""

    model: str
    rubric_version: str
    rubric_fingerprint: str
    rubric_source: str = "built-in"
    rubric: Literal["default", "pedagogy"] = "default"  # evaluation/judge_rubrics.py; written when not the default
    rounds: list[RoundVerdict] = Field(default_factory=list)
    calls: list[CallStat] = Field(default_factory=list)
    error: str | None = None  # the run could not be judged at all (its transcript is unreadable)
    judged_at: float = Field(default_factory=time.time)

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if self.rubric == "default":  # a default judgement is written in the true/false fields
            data.pop("rubric", None)
        return data

    def verdict(self, round_number: int) -> RoundVerdict | None:
        return next((v for v in self.rounds if v.round == round_number), None)


class SpeechStat(BaseModel):
    """A run's voice (``maic run --voice``): what was synthesized, priced apart from the model's calls."""

    engine: str
    sentences: Count = 0  # synthesis calls (a sentence found in the speech cache is not one)
    cached: Count = 0  # sentences said from the cache
    characters: Count = 0
    seconds: Seconds = 0.0  # of audio synthesized
    cost: Amount | None = None  # None: the engine's price is not known (an offline engine costs 0)
    audio: str | None = None  # the files written
    captions: str | None = None
    error: str | None = None  # the voice failed: the class's result stands


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
    started_at: Annotated[float, Field(allow_inf_nan=False)] = Field(default_factory=time.time)
    duration: Seconds = 0.0
    judge: RunJudgement | None = None
    learner: str | None = None  # a simulated learner's name (None: the learner's lines were scripted)
    learner_model: str | None = None  # its model
    learner_calls: list[CallStat] = Field(default_factory=list)  # its calls, priced apart from the class's
    tutoring: TutoringOutcome | None = None  # a tutoring task's run (evaluation/tutoring.py)
    learning: LearningGain | None = None  # a lesson's quiz before and after it (lesson.pre_post)
    speech: SpeechStat | None = None  # maic run --voice: its audio and captions, synthesis counted apart
    # Not saved: the entries of its transcript that turns.csv reads, kept while this process played
    # the run (report/report_tables.py then reads no file); None for a run loaded from its file.
    _recorded: Transcript | None = PrivateAttr(default=None)

    @model_validator(mode="after")
    def _finite_latencies(self) -> RunResult:
        """Statistics read every latency: each one is a real duration (a crafted ``-1e308`` or ``NaN`` is refused)."""
        for index, summary in enumerate(self.rounds):
            if not all(math.isfinite(x) and 0 <= x <= MAX_SECONDS for x in summary.turn_latencies):
                raise ValueError(f"rounds.{index}.turn_latencies: a latency that is not between 0 and "
                                 f"{MAX_SECONDS:g} seconds")
        return self

    @property
    def passed(self) -> bool:
        return self.status == "complete" and not self.failures

    @property
    def recorded(self) -> Transcript | None:
        """The transcript's entries kept in memory while this process played the run (else None)."""
        return self._recorded

    def keep_recorded(self, transcript: Transcript) -> None:
        self._recorded = transcript


_PLAIN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,254}")  # a file name: no separator, no "..", no dot first


def plain_run_id(run_id: str) -> bool:
    """Whether ``run_id`` is a plain file name (letters, digits, _ . -; no separator, no dot first)."""
    return bool(_PLAIN_ID.fullmatch(run_id))


def runs_dir(out: Path) -> Path:
    return out / "runs"


def run_file(out: Path, run_id: str) -> Path:
    """``out/runs/<run_id>.json``; a run id that is not a plain file name is refused (a results file
    someone sent never decides where maic writes)."""
    if not plain_run_id(run_id):
        raise InputError(f"run id {one_line(run_id)[:80]!r} is not a plain name (letters, digits, _ . -); "
                         "not written")
    return runs_dir(out) / f"{run_id}.json"


SAVED_DEPTH = 24  # containers in a saved result (a verdict's reason is 6 deep)


def save_run(out: Path, result: RunResult) -> None:
    """Atomic (never half a file) but not fsynced: after a machine crash ``--resume`` reruns it.

    Strings that entered unclean (a lone surrogate no file can encode) are mended on the way out
    rather than failing the save: a result is never lost to one character."""
    path = run_file(out, result.run_id)
    try:
        text = result.model_dump_json(indent=1)
    except ValueError:  # pydantic's serialization error: a string UTF-8 cannot encode
        mended = RunResult.model_validate(clean_tree(result.model_dump(), SAVED_DEPTH, cut=True))
        text = mended.model_dump_json(indent=1)
    write_atomic(path, text, durable=False)


def load_runs(folder: Path) -> list[RunResult]:
    directory = runs_dir(folder)
    if not directory.is_dir():
        raise InputError(f"{folder}: no runs/ folder here (not a maic run output folder)")
    results = []
    for path in sorted(directory.glob("*.json")):
        try:
            result = RunResult.model_validate_json(read_bounded(path, 2**26, "run result"))
        except (ValidationError, ValueError) as exc:
            raise InputError(f"{path}: damaged run result ({str(exc).splitlines()[0]})") from None
        if result.run_id != path.stem or not plain_run_id(result.run_id):
            raise InputError(f"{path}: run_id {one_line(result.run_id)[:80]!r} does not match the file name "
                             f"{path.stem!r}; the file was not written by maic for this run")
        results.append(result)
    return results


def transcript_path(out: Path, result: RunResult) -> Path | None:
    """The run's transcript: in this batch folder, else (a ``--merge``) in the batch folder it was run in.

    A results file may be hostile, so the path it names is read only when it is a batch folder's
    ``transcripts/<run_id>.jsonl`` beside that folder's ``runs/<run_id>.json``.
    """
    run_id = result.run_id
    if not plain_run_id(run_id):
        return None
    here = out / "transcripts" / f"{run_id}.jsonl"
    if _plain_file(here):
        return here
    stored = Path(result.transcript) if result.transcript else None
    if (stored is not None and stored.name == f"{run_id}.jsonl" and stored.parent.name == "transcripts"
            and _plain_file(stored.parent.parent / "runs" / f"{run_id}.json") and _plain_file(stored)):
        return stored
    return None


def _plain_file(path: Path) -> bool:
    """A regular file reached without a symbolic link (in it or its folder): a link could point anywhere."""
    return not path.is_symlink() and not path.parent.is_symlink() and path.is_file()


def transcript_mismatch(result: RunResult, transcript: Transcript) -> str | None:
    """Why ``transcript`` is not this run's (its header names another scenario or model), or None."""
    header = transcript.header
    if header.scenario != result.scenario or header.model != result.model:
        return (f"{transcript.path}: the transcript is of scenario {one_line(str(header.scenario))[:80]!r} with "
                f"model {one_line(header.model)[:80]!r}, not this run's")
    return None
