"""``--judge MODEL``: a judge model scores the recorded rounds of a batch's runs.

``maic run --judge`` judges each run as soon as its class ends; ``maic report DIR
--judge`` judges the stored transcripts of a finished batch.  Both read the run's
transcript back (evaluation/judge_rounds.py) and ask the judge once per round
(evaluation/judge.py); the verdicts and the judge's own calls are kept in the run's
result (``runs/<run_id>.json``, field ``judge``), priced apart from the class's calls.

The judge model string is parsed like ``--model`` (a ``scripted:``/``replay:`` file, the
offline model, any litellm string; ``--judge-api-base`` for an OpenAI-compatible
server).  One rubric judges the whole batch: the judge templates of the prompt set
in use (``--prompts``, ``$MAIC_HOME/prompts`` or the built-in ones); prompt sets that
are compared must agree on them, or their scores could not be compared.  The rubric
is rendered once on a sample round before anything runs, so a broken override is
``path:line: problem``, exit 2.  ``--rubric NAME`` picks the rubric (evaluation/judge_rubrics.py:
``default``, or ``pedagogy`` for the teacher-side turns); the run's judgement records it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

import typer

from ..engine.prompt_set import PromptError, PromptSet
from ..errors import InputError
from ..llm.factory import make_llm
from ..llm.keys import check_key
from ..llm.pool import ClientPool
from ..llm.port import LLMClient, close_llm
from ..llm.recording import CallRecord, RecordingLLM
from ..llm.spec import ModelSpec
from ..store.transcript import read_transcript
from ..untrusted import clean
from .judge import RoundToJudge, RubricIdentity, TurnToJudge, judge_messages, judge_rounds, rubric_identity
from .judge_rounds import rounds_to_judge
from .judge_rubrics import DEFAULT, Rubric, rubric_named
from .run_results import CallStat, RunJudgement, RunResult, save_run, transcript_mismatch, transcript_path

MAX_JUDGED_TURNS = 50  # per round (a batch's --max-turns is at most 50)
_SAMPLE = RoundToJudge(index=0, learner="Why is the sky blue?", learner_name="Ana", topic=None,
                       turns=(TurnToJudge("teacher", "Teacher", "teacher", "A teacher.", "Light scatters.",
                                          ("wb_draw_text",)),))


@dataclass
class Judge:
    spec: ModelSpec
    prompts: PromptSet
    rubric: RubricIdentity
    clients: ClientPool
    kind: Rubric = DEFAULT  # which rubric: its templates, criteria and judged roles

    def same_judge(self, judged: RunJudgement | None) -> bool:
        """Verdicts by this model with this rubric, the run readable."""
        return (judged is not None and judged.error is None and judged.model == self.spec.raw
                and judged.rubric == self.kind.name and judged.rubric_fingerprint == self.rubric.fingerprint)

    def judged_already(self, result: RunResult) -> bool:
        """Judged by this model with this rubric, no round left unjudged by a failing judge call (a
        run's verdicts are kept unless ``--rejudge``; the rounds a provider error left are judged again)."""
        judged = result.judge
        return judged is not None and self.same_judge(judged) and not any(v.provider_error for v in judged.rounds)

    def to_judge(self, results: list[RunResult], *, rejudge: bool = False) -> list[RunResult]:
        """The runs a judging has to judge: not cancelled ones, not error ones (their class's model failed:
        an outage is not a verdict on the teaching), not those judged already (unless ``rejudge``)."""
        return [r for r in results if r.status == "complete" and (rejudge or not self.judged_already(r))]

    async def aclose(self) -> None:
        await self.clients.aclose()


def judge_rubric(name: str) -> Rubric:
    """``--rubric NAME``'s rubric (an unknown name: a one-line error, exit 2)."""
    try:
        return rubric_named(name)
    except ValueError as exc:
        raise InputError(f"--rubric: {exc}") from None


def make_judge(model: str, prompts: PromptSet, *, api_base: str | None = None, structured: str = "auto",
               rubric: str = "default") -> Judge:
    """The judge, checked before anything runs: its model file can be read and its rubric renders."""
    kind = judge_rubric(rubric)
    spec = ModelSpec.parse(model)  # --judge, parsed once: the spec is what is passed on
    check_key(spec, flag="--judge", api_base=api_base)

    def build(judge_spec: ModelSpec) -> LLMClient:
        if not judge_spec.is_real:
            return make_llm(judge_spec)
        return make_llm(judge_spec, api_base=api_base, structured=structured, rate_limit_retries=10)

    try:
        judge_messages(prompts, _SAMPLE, kind)
    except PromptError as exc:
        raise PromptError(f"--judge: the rubric does not render: {exc}") from None
    clients = ClientPool(build)
    if spec.per_class:
        clients.get(spec)  # a missing or broken scripted/replay file: exit 2 now, not per run
    return Judge(spec, prompts, rubric_identity(prompts, kind), clients, kind)


def batch_rubric(prompt_sets: Iterable[PromptSet | None], rubric: str = "default") -> PromptSet:
    """The one prompt set whose judge templates judge a batch (compared sets must agree on them)."""
    chosen: dict[str, PromptSet] = {}
    for prompt_set in prompt_sets:
        resolved = prompt_set or PromptSet.builtin()
        chosen.setdefault(rubric_identity(resolved, judge_rubric(rubric)).fingerprint, resolved)
    if len(chosen) > 1:
        names = ", ".join(clean(p.name) for p in chosen.values())
        raise InputError(f"--judge: the prompt sets {names} hold different judge templates (judge/…); one rubric "
                         "must judge every run compared: give them the same judge/ files, or none")
    return next(iter(chosen.values()), PromptSet.builtin())


async def judge_run(judge: Judge, result: RunResult, transcript: Path | None, *,
                    keep: RunJudgement | None = None) -> RunJudgement:
    """The verdicts on one run's rounds; never raises for a bad transcript or reply (they are missing).
    ``keep``: this judge's earlier verdicts on the run; only the rounds a provider error left are asked again."""
    kept = {v.round: v for v in keep.rounds if not v.provider_error} if keep and judge.same_judge(keep) else {}
    calls: list[CallStat] = list(keep.calls) if kept and keep else []
    judgement = RunJudgement(model=judge.spec.raw, rubric_version=judge.rubric.version,
                             rubric_fingerprint=judge.rubric.fingerprint, rubric_source=judge.rubric.source,
                             rubric=judge.kind.name)  # type: ignore[arg-type]  # a name in RUBRICS
    if transcript is None:
        judgement.error = "no transcript of this run in its batch folder"
        return judgement
    try:
        recorded = await asyncio.to_thread(read_transcript, transcript)
    except (InputError, OSError) as exc:
        judgement.error = f"cannot read the transcript: {exc}"
        return judgement
    judgement.error = transcript_mismatch(result, recorded)
    if judgement.error:
        return judgement
    rounds = rounds_to_judge(recorded)
    # Only the rounds the run reports, each with at most MAX_JUDGED_TURNS turns: a transcript someone sent
    # cannot make the judge (and its bill) run without end; what is left out is counted as missing.
    rounds = [replace(r, turns=r.turns[:MAX_JUDGED_TURNS]) for r in rounds[:len(result.rounds)]]
    todo = [r for r in rounds if r.index + 1 not in kept]

    def on_call(record: CallRecord) -> None:
        calls.append(CallStat.from_record(record))

    client = judge.clients.get(judge.spec)
    try:
        fresh = {v.round: v for v in await judge_rounds(RecordingLLM(client, on_call), judge.prompts, todo,
                                                              judge.kind)}
        judgement.rounds = [kept.get(r.index + 1) or fresh[r.index + 1] for r in rounds]
    except PromptError as exc:  # the rubric renders the sample but not this round's text
        judgement.error = str(exc)
    finally:
        judgement.calls = calls  # a model copies a list it is given: the calls are set once made
        if judge.spec.per_class:
            await close_llm(client)
    return judgement


async def judge_folder(judge: Judge, folder: Path, todo: list[RunResult], *, rejudge: bool = False,
                       concurrency: int = 4, saved: list[str] | None = None) -> None:
    """Judge the runs ``todo`` (``Judge.to_judge`` picks them) of a finished batch in place, each saved as
    soon as it is judged, so an interrupted judging continues where it stopped (``saved`` gets each
    saved run's id)."""
    semaphore = asyncio.Semaphore(concurrency)

    async def one(result: RunResult) -> None:
        async with semaphore:
            result.judge = await judge_run(judge, result, transcript_path(folder, result),
                                           keep=None if rejudge else result.judge)
            await asyncio.to_thread(save_run, folder, result)
            if saved is not None:
                saved.append(result.run_id)

    try:
        await asyncio.gather(*(one(result) for result in todo))
    finally:
        await judge.aclose()


def say_error_runs_not_judged(results: list[RunResult]) -> None:
    """Runs whose class's model failed are not judged (an outage is not a verdict on the teaching): say so."""
    failed = sum(r.status == "error" for r in results)
    if failed:
        typer.echo(f"Not judged: {failed} runs that ended in an error (their class's model failed; an outage "
                   "is not a verdict on the teaching)", err=True)
