"""The batch report as one typed model: what ``report.json`` holds, field for field.

report/reports.py builds a :class:`BatchReport` once from the run results; report.md,
the CSVs (report/report_tutoring.py), report.html (report/report_data.py, report/report_html.py,
report/report_tutoring_html.py) and the terminal summary (report/batch_summary.py) read it by
attribute.  report.json is its dump (:meth:`BatchReport.to_json`) and keeps the field
names and bytes it always had: a part that a batch does not have (the judge's sections
in an unjudged batch, ``tutoring``, ``learning``, ``simulated_learner``, a run's
``tutoring``) is left out of the file rather than written as ``null``, because it was
never set (``exclude_unset``).

A report.json read back (report/reports.py ``load_report``) goes through the same model:
an unknown field, a wrong type or a number that is not finite is refused (``extra="forbid"``);
a part an older report lacks takes its default.  Numbers
keep the type they were computed with (``int | float``), so ``0`` stays ``0`` and ``0.0``
stays ``0.0``.  Pure data: this module reads no file (ui/ and store/ both read it).
"""

from __future__ import annotations

import json
import re
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from ..evaluation.judge import RoundVerdict
from ..evaluation.tutoring import TutoringOutcome
from ..lessons.learner_quiz import LearningGain

Number = Annotated[int | float, Field(allow_inf_nan=False)]  # as computed: an int stays an int
MetaValue = str | bool | int | Annotated[float, Field(allow_inf_nan=False)]  # report.json is strict JSON
GROUPINGS = ("by_scenario", "by_model", "by_prompts", "by_director")


class Part(BaseModel):
    """A part of the report: no field it does not know, nothing left out silently."""

    model_config = ConfigDict(extra="forbid")


class RateEntry(Part):
    """A rate: its value, counts and 95% Wilson interval (``low``/``high`` None under two runs)."""

    value: Number | None = None
    successes: int = 0
    trials: int = 0
    low: Number | None = None
    high: Number | None = None


class MeanEntry(Part):
    """A mean over runs and its percentile bootstrap interval."""

    value: Number | None = None
    runs: int = 0
    low: Number | None = None
    high: Number | None = None


class Point(Part):
    """One value of a curve (success@k, telling@k) and its interval."""

    value: Number | None = None
    low: Number | None = None
    high: Number | None = None


class Intervals(Part):
    rates: dict[str, RateEntry] = Field(default_factory=dict)
    means: dict[str, MeanEntry] = Field(default_factory=dict)


class TokenUse(Part):
    prompt: int = 0
    completion: int = 0
    cached: int = 0
    cost: Number = 0.0
    calls: int = 0


class JudgeUsage(Part):
    calls: int = 0
    prompt: int = 0
    completion: int = 0
    cached: int = 0
    cost: Number = 0.0
    errors: int = 0


class GroupJudge(Part):
    """A group's (or a run's) judge scores: counts, rates and means with intervals, the judge's usage."""

    runs_judged: int = 0
    runs_not_judged: int = 0
    turns_judged: int = 0
    turns_missing: int = 0
    rounds_judged: int = 0
    rounds_missing: int = 0
    repaired_replies: int = 0
    run_errors: int = 0
    rates: dict[str, RateEntry] = Field(default_factory=dict)
    means: dict[str, MeanEntry] = Field(default_factory=dict)
    usage: JudgeUsage = Field(default_factory=JudgeUsage)
    labels: dict[str, dict[str, int]] | None = None  # a labelled rubric's distribution of labels


class GroupSummary(Part):
    """The numbers of a group of runs (also of one run, without intervals)."""

    runs: int = 0
    complete: int = 0
    passed: int = 0
    errors: int = 0
    cancelled: int = 0
    rounds: int = 0
    agent_turns: int = 0
    end_reasons: dict[str, int] = Field(default_factory=dict)
    cue_user_rate: Number | None = None
    rounds_with_repeated_speaker: int = 0
    same_role_in_a_row: int = 0
    second_greetings: int = 0
    empty_turns: int = 0
    dropped_replies: int = 0
    parse_recoveries: int = 0
    dropped_actions: int = 0
    invalid_picks: int = 0
    director_corrections: int = 0
    tokens: dict[str, TokenUse] = Field(default_factory=dict)
    total_cost: Number = 0.0
    ttft_p50: Number | None = None
    ttft_p95: Number | None = None
    turn_latency_p50: Number | None = None
    turn_latency_p95: Number | None = None
    intervals: Intervals | None = None
    judge: GroupJudge | None = None

    @property
    def total_tokens(self) -> int:
        return sum(t.prompt + t.completion for t in self.tokens.values())


class ComparedMetric(Part):
    """One metric of two groups: first, second, the difference with its interval, and the verdict."""

    metric: str
    a: Number | None = None
    b: Number | None = None
    difference: Number | None = None
    low: Number | None = None
    high: Number | None = None
    method: str = ""
    verdict: str = ""


class Comparison(Part):
    a: str
    b: str
    metrics: list[ComparedMetric] = Field(default_factory=list)


class Comparisons(Part):
    by_model: list[Comparison] = Field(default_factory=list)
    by_prompts: list[Comparison] = Field(default_factory=list)
    by_director: list[Comparison] = Field(default_factory=list)


class CriterionLabels(Part):
    labels: list[str]
    good: str


class JudgeOverview(Part):
    """The top-level ``judge``: who judged with which rubric, the criteria's names, the judge's usage."""

    models: list[str] = Field(default_factory=list)
    rubric: str | None = None  # named when not the default rubric
    rubrics: list[str] | None = None  # named when runs were judged on several
    criterion_labels: dict[str, CriterionLabels] | None = None
    rubric_versions: list[str] = Field(default_factory=list)
    rubric_fingerprints: list[str] = Field(default_factory=list)
    rubric_sources: list[str] = Field(default_factory=list)
    criteria: dict[str, str] = Field(default_factory=dict)
    scale: str = ""
    labels: dict[str, str] = Field(default_factory=dict)
    runs_judged: int = 0
    runs_not_judged: int = 0
    usage: JudgeUsage = Field(default_factory=JudgeUsage)


class RunJudge(Part):
    model: str
    rubric: str | None = None  # written when not the default
    rubric_version: str
    rubric_fingerprint: str
    error: str | None = None
    summary: GroupJudge
    rounds: list[RoundVerdict] = Field(default_factory=list)


class RunRow(Part):
    """One run as the report lists it."""

    run_id: str
    scenario: str
    model: str
    prompts: str
    director: str
    repeat: int
    status: str
    passed: bool
    failures: list[str] = Field(default_factory=list)
    error: str | None = None
    speaker_sequence: list[list[str]] = Field(default_factory=list)
    end_reasons: list[str] = Field(default_factory=list)
    transcript: str | None = None
    duration: Number = 0.0
    metrics: GroupSummary = Field(default_factory=GroupSummary)
    judge: RunJudge | None = None  # in a judged batch (None: this run was not judged)
    learning: LearningGain | None = None
    tutoring: TutoringOutcome | None = None


class Curves(Part):
    tasks: int = 0
    runs: int = 0
    success: list[Point] = Field(default_factory=list)
    telling: list[Point] = Field(default_factory=list)


class Tutoring(Part):
    """success@k and telling@k over tasks, per group, and the groups compared."""

    k: list[int] = Field(default_factory=list)
    left_out: int = 0
    definition: str = ""
    interval: str = ""
    overall: Curves = Field(default_factory=Curves)
    by_model: dict[str, Curves] = Field(default_factory=dict)
    by_prompts: dict[str, Curves] = Field(default_factory=dict)
    by_director: dict[str, Curves] = Field(default_factory=dict)
    comparisons: dict[str, list[Comparison]] = Field(default_factory=dict)

    def grouping(self, key: str) -> dict[str, Curves]:
        """``by_model``, ``by_prompts`` or ``by_director``."""
        groups: dict[str, Curves] = getattr(self, key) if key in GROUPINGS[1:] else {}
        return groups


class LearningMeans(Part):
    runs: int = 0
    pre: MeanEntry = Field(default_factory=MeanEntry)
    post: MeanEntry = Field(default_factory=MeanEntry)
    gain: MeanEntry = Field(default_factory=MeanEntry)


class Learning(Part):
    overall: LearningMeans = Field(default_factory=LearningMeans)
    by_model: dict[str, LearningMeans] = Field(default_factory=dict)
    by_prompts: dict[str, LearningMeans] = Field(default_factory=dict)
    by_director: dict[str, LearningMeans] = Field(default_factory=dict)

    def grouping(self, key: str) -> dict[str, LearningMeans]:
        """``by_model``, ``by_prompts`` or ``by_director``."""
        groups: dict[str, LearningMeans] = getattr(self, key) if key in GROUPINGS[1:] else {}
        return groups


class LearnerUsage(Part):
    runs: int = 0
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: Number = 0.0
    errors: int = 0


class SimulatedLearner(Part):
    overall: LearnerUsage = Field(default_factory=LearnerUsage)
    by_model: dict[str, LearnerUsage] = Field(default_factory=dict)


class SpeechTotals(Part):
    """maic run --voice: what was synthesized over the batch, apart from the model's calls."""

    engine: str = ""
    runs: int = 0
    sentences: int = 0
    characters: int = 0
    seconds: Number = 0.0
    cost: Number | None = None  # None: the engine's price is not known
    errors: int = 0


class Methods(Part):
    """How the intervals were computed (report/report_stats.py ``METHODS``): maic's own text."""

    confidence: Number = 0.95
    rates: str = ""
    means: str = ""
    rate_differences: str = ""
    mean_differences: str = ""
    larger_than_noise: str = ""
    min_runs: int = 2


class BatchReport(Part):
    """The whole report of a batch (or of merged batches)."""

    meta: dict[str, MetaValue] = Field(default_factory=dict)
    statistics: Methods = Field(default_factory=Methods)
    judge: JudgeOverview | None = None
    overall: GroupSummary = Field(default_factory=GroupSummary)
    by_scenario: dict[str, GroupSummary] = Field(default_factory=dict)
    by_model: dict[str, GroupSummary] = Field(default_factory=dict)
    by_prompts: dict[str, GroupSummary] = Field(default_factory=dict)
    by_director: dict[str, GroupSummary] = Field(default_factory=dict)
    comparisons: Comparisons = Field(default_factory=Comparisons)
    runs: list[RunRow] = Field(default_factory=list)
    learning: Learning | None = None
    tutoring: Tutoring | None = None
    simulated_learner: SimulatedLearner | None = None
    speech: SpeechTotals | None = None

    def grouping(self, key: str) -> dict[str, GroupSummary]:
        """``by_scenario``, ``by_model``, ``by_prompts`` or ``by_director``."""
        groups: dict[str, GroupSummary] = getattr(self, key) if key in GROUPINGS else {}
        return groups

    def to_json(self) -> str:
        """report.json's text: the fields that were set, in their order, strict JSON (no NaN), byte for
        byte what ``json.dumps(model_dump(exclude_unset=True), indent=1, ensure_ascii=False)`` writes.

        pydantic writes it (in Rust: ``json.dumps`` with an indent is pure Python, 5× slower) and only its
        floats in exponent form or under 1e-4 are rewritten as Python writes them (:func:`python_floats`)."""
        try:
            return python_floats(self.model_dump_json(exclude_unset=True, indent=1))
        except ValueError:  # a string UTF-8 cannot encode, say: as json.dumps writes it (or refuses it)
            return json.dumps(self.model_dump(exclude_unset=True), indent=1, ensure_ascii=False, allow_nan=False)


# pydantic writes a float differently from Python's ``repr`` only in exponent form (``1e-7``, ``1e16``: Python
# writes ``1e-07``, ``1e+16``) or between 1e-5 and 1e-4 (``0.000061``: Python writes ``6.1e-05``), so only a
# line holding one of these needles can hold such a float.  With an indent, a number is a whole line's
# value: spaces, maybe a key, the number, maybe a comma (a string's own line breaks are escaped).
_NEEDLES = ("e-", "0.0000", *(f"{digit}e" for digit in "0123456789"))
_NUMBER_LINE = re.compile(r'( *(?:"(?:[^"\\]|\\.)*": )?)(-?\d+(?:\.\d+)?(?:e[-+]?\d+)?)(,?)')


def python_floats(text: str) -> str:
    """pydantic's indented JSON ``text`` with every float written as Python's ``json`` writes it
    (``float.__repr__``; a number with a point or an exponent is a float, an int has neither)."""
    lines: set[int] = set()  # where the lines to look at start
    for needle in _NEEDLES:
        found = text.find(needle)
        while found != -1:
            lines.add(text.rfind("\n", 0, found) + 1)
            found = text.find(needle, found + 1)
    if not lines:
        return text
    parts, done = [], 0
    for start in sorted(lines):
        end = text.find("\n", start)
        end = len(text) if end == -1 else end
        match = _NUMBER_LINE.fullmatch(text, start, end)
        if match is None or not any(mark in match.group(2) for mark in ".e"):
            continue
        parts += [text[done:match.start(2)], repr(float(match.group(2)))]
        done = match.end(2)
    return "".join([*parts, text[done:]])


class ReportHead(BaseModel):
    """What ``maic report DIR`` keeps of a batch's last report when it rebuilds it: its ``meta`` (the rest of an
    older or newer report.json is not read)."""

    model_config = ConfigDict(extra="ignore")

    meta: dict[str, MetaValue] = Field(default_factory=dict)
