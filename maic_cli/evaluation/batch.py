"""Running many classes: expand scenarios × models × prompt sets × repeats, shard, run concurrently, report.

Each run is one class: a fresh classroom, one round per learner message, a
transcript, metrics from the events, expectations checked per round.  Runs are
independent: one that fails never stops the others.  Ctrl-C stops launching
new runs, cancels the running ones and still writes a (partial) report.  With a
judge (``maic run --judge``, evaluation/judging.py) each complete run's rounds are judged from its
transcript once its class has ended; its result is saved before (a Ctrl-C while the judge scores
keeps the class, unjudged) and again with the verdicts.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..engine.classroom import Classroom
from ..engine.events import Event
from ..engine.models import AgentConfig, ClassSettings, RoundOverrides, UserProfile
from ..engine.policies import DirectorPolicy, choose_policy
from ..engine.prompt_set import PromptSet
from ..engine.round import RoundResult, TurnClient
from ..engine.runner import ClassRunner, RunnerHooks
from ..errors import MaicError
from ..lessons.lesson import Lesson
from ..llm.pool import ClientPool
from ..llm.port import LLMError
from ..llm.recording import CallRecord, RecordingLLM
from ..llm.spec import ModelSpec
from ..signals import on_sigint
from ..store.transcript import TranscriptHeader, TranscriptWriter, turn_entry
from .batch_learner import LearnerSetup, play_learner
from .batch_lesson import LessonRunner
from .collector import fewer_collections
from .expectations import Expectations, check_round
from .metrics import RoundLog
from .run_results import CallStat, RunJudgement, RunResult, save_run
from .scenarios import Scenario, initial_store

if TYPE_CHECKING:
    from .batch_voice import BatchVoice
    from .judging import Judge


@dataclass
class RunSpec:
    scenario: Scenario
    path: Path
    agents: list[AgentConfig]
    config: ClassSettings
    model: ModelSpec
    repeat: int
    prompts: PromptSet | None = None  # None: the built-in set
    prompts_label: str = "builtin"  # the set's short name, recorded in the run's result
    label_in_id: bool = False  # several prompt sets are compared: the run id names this one
    director: DirectorPolicy | None = None  # --director; None: the model's default
    director_in_id: bool = False  # several --director values compared: the run id names the policy
    lesson: Lesson | None = None  # the lesson the scenario plays (evaluation/batch_lesson.py)
    learner: LearnerSetup | None = None  # a simulated learner in the seat (evaluation/batch_learner.py)

    @property
    def run_id(self) -> str:
        label = f"__{self.prompts_label}" if self.label_in_id else ""
        policy = f"__{re.sub(r'[^A-Za-z0-9_.-]+', '-', self.policy.name)}" if self.director_in_id else ""
        return f"{self.scenario.id}__{self.model.slug}{label}{policy}__r{self.repeat}"

    @property
    def policy(self) -> DirectorPolicy:
        """Who picks the speakers in this run (engine/policies.py)."""
        return choose_policy(self.director, self.config.director, self.model.compact_prompts)

    def rounds(self) -> list[tuple[str | None, Expectations]]:
        """(learner text or None for a discussion's opening round, what the round must do)."""
        plan: list[tuple[str | None, Expectations]] = []
        if self.config.discussion_topic and self.config.initiator_id:
            plan.append((None, self.scenario.expect.merged(self.scenario.opening_expect)))
        plan.extend((turn.text, self.scenario.expect.merged(turn.expect)) for turn in self.scenario.messages)
        return plan


@dataclass
class Progress:
    """What the progress display shows about one running class."""

    run_id: str
    round: int = 0
    rounds: int = 0
    status: str = "starting"


@dataclass
class RunContext:
    out: Path
    clients: ClientPool
    progress: dict[str, Progress] = field(default_factory=dict)  # the running classes; a display polls it
    judge: Judge | None = None  # --judge: each run is judged when its class ends
    voice: BatchVoice | None = None  # --voice: each run's audio and captions when its class ends
    turns: TurnClient | None = None  # where the classes' turns run (None: here; --server: serve/client.py)


async def execute_run(spec: RunSpec, context: RunContext) -> RunResult:
    client = context.clients.get(spec.model)  # a bad model file fails the run before its transcript is opened
    started = time.time()
    clock = time.monotonic()
    progress = Progress(spec.run_id, rounds=(spec.learner.turns or 0) if spec.learner else len(spec.rounds()))
    context.progress[spec.run_id] = progress
    result = RunResult(run_id=spec.run_id, scenario=spec.scenario.id or spec.path.stem,
                       scenario_path=str(spec.path), model=spec.model.raw, director=spec.policy.name,
                       repeat=spec.repeat, status="complete", prompts=spec.prompts_label, started_at=started)
    transcript_path = context.out / "transcripts" / f"{spec.run_id}.jsonl"
    header = TranscriptHeader(model=spec.model.raw, produced_by=spec.model.produced_by, agents=spec.agents,
                              config=spec.config.model_copy(update={"director": spec.policy.name}),
                              profile=_profile(spec),
                              store=initial_store(spec.scenario), scenario=result.scenario)
    writer = await asyncio.to_thread(_open_transcript, transcript_path, header)
    result.transcript = str(transcript_path)

    def on_call(record: CallRecord) -> None:
        writer.call(record)
        result.calls.append(CallStat.from_record(record))

    hooks = _RunHooks(writer, {a.id: a for a in spec.agents}, progress)
    runner = ClassRunner(Classroom(store=initial_store(spec.scenario)), spec.config, RecordingLLM(client, on_call),
                         agents=hooks.agents, profile=_profile(spec), spec=spec.model, prompts=spec.prompts,
                         hooks=[hooks], director=spec.policy, turns=context.turns)
    try:
        try:
            if spec.learner is not None:
                await _play_simulated(spec, spec.learner, context, runner, hooks, result)
            else:
                await _play_rounds(spec, runner, hooks, progress, result)
        finally:
            writer.close()
            result.duration = time.monotonic() - clock
            result.keep_recorded(writer.in_memory())  # turns.csv's entries: the report reads no file back
        if context.voice is not None and result.status != "cancelled":
            from .batch_voice import voice_run

            progress.status = "voicing"
            result.speech = await asyncio.to_thread(voice_run, context.voice, context.out, spec.run_id,
                                                    transcript_path)
        if result.status != "cancelled":  # saved before the judge scores it: a Ctrl-C then keeps the class
            try:
                await asyncio.to_thread(save_run, context.out, result)  # file system work off the event loop
            except (OSError, MaicError, ValueError) as exc:  # reported, and it fails the batch: never lost
                result.status, result.error = "error", f"its result could not be saved: {_reason(exc)}"
                return result
        if context.judge is not None and result.status == "complete":  # an error run's model failed: not judged
            from .judging import judge_run

            progress.status = "the judge is scoring"
            try:
                result.judge = await judge_run(context.judge, result, transcript_path)
                await asyncio.to_thread(save_run, context.out, result)
            except asyncio.CancelledError:  # Ctrl-C: the class is kept (saved above), without verdicts
                return result
            except Exception as exc:  # noqa: BLE001 - the judge failed: the class's result saved above stands
                rubric = context.judge.rubric
                result.judge = RunJudgement(model=context.judge.spec.raw, rubric_version=rubric.version,
                                            rubric_fingerprint=rubric.fingerprint, rubric_source=rubric.source,
                                            error=f"the judge failed: {type(exc).__name__}: {exc}")
    finally:
        context.progress.pop(spec.run_id, None)
    return result


async def _play_rounds(spec: RunSpec, runner: ClassRunner, hooks: _RunHooks, progress: Progress,
                       result: RunResult) -> None:
    """The class, one round per learner message, each checked against its expectations."""
    try:
        if spec.lesson is not None:
            assert spec.scenario.lesson is not None  # the lesson is the one the scenario names
            lesson = LessonRunner(runner, spec.lesson, spec.scenario.lesson, result,
                                  lambda log: setattr(hooks, "log", log), spec.scenario.expect)
            await lesson.play()
            return
        for index, (text, expect) in enumerate(spec.rounds()):
            progress.round, progress.status = index + 1, "the director is choosing"
            log = hooks.log = RoundLog(index, text)
            # A discussion's opening round has no learner text: its initiator speaks first.
            played = await (runner.play(text) if text is not None else runner.play_round(spec.config.initiator_id))
            if played.reason == "aborted":  # the round absorbed a Ctrl-C: stop this run too
                raise asyncio.CancelledError
            failures = check_round(expect, log)
            result.failures.extend(f"round {index + 1}: {failure}" for failure in failures)
            result.rounds.append(log.summary(failures))
            if log.reason == "error":
                result.status, result.error = "error", log.error
                break
    except asyncio.CancelledError:
        result.status, result.error = "cancelled", "stopped by Ctrl-C"


def _reason(exc: BaseException) -> str:
    return str(exc.strerror or exc) if isinstance(exc, OSError) else str(exc)


def _profile(spec: RunSpec) -> UserProfile:
    """How the class sees its learner: a simulated learner's name and persona, else the scenario's."""
    if spec.learner is not None:
        return spec.learner.profile.user_profile()
    return UserProfile(nickname=spec.scenario.learner.nickname, bio=spec.scenario.learner.bio)


async def _play_simulated(spec: RunSpec, setup: LearnerSetup, context: RunContext, runner: ClassRunner,
                          hooks: _RunHooks, result: RunResult) -> None:
    """The class with a simulated learner in the seat, on its own model; its calls are recorded in the
    transcript and counted apart from the class's."""
    from ..engine.learner import SimulatedLearner

    result.learner, result.learner_model = setup.profile.name, setup.model.raw

    def on_call(record: CallRecord) -> None:
        hooks.writer.call(record)
        result.learner_calls.append(CallStat.from_record(record))

    learner = SimulatedLearner(setup.profile, RecordingLLM(context.clients.get(setup.model), on_call),
                               turns=setup.turns)
    hooks.simulated = (setup.profile.name, setup.model.raw)
    opening = spec.config.initiator_id if spec.config.discussion_topic and spec.config.initiator_id else None

    def on_status(index: int, status: str) -> None:
        hooks.progress.round, hooks.progress.status = index + 1, status

    if spec.lesson is None:
        await play_learner(runner, hooks, learner, setup, spec.scenario, result, opening, on_status)
        return
    assert spec.scenario.lesson is not None  # the lesson is the one the scenario names
    lesson = LessonRunner(runner, spec.lesson, spec.scenario.lesson, result, lambda log: setattr(hooks, "log", log),
                          spec.scenario.expect, simulated=learner)
    try:
        await lesson.play()
    except LLMError as exc:  # the learner's model (a grading error never raises)
        result.status, result.error = "error", f"simulated learner: {exc}"
    except asyncio.CancelledError:
        result.status, result.error = "cancelled", "stopped by Ctrl-C"



def _open_transcript(path: Path, header: TranscriptHeader) -> TranscriptWriter:
    """A fresh transcript for this run (a re-run starts afresh); opened off the event loop."""
    path.unlink(missing_ok=True)
    return TranscriptWriter(path, header, durable=False, keep=turn_entry)


class _RunHooks(RunnerHooks):
    """One run's transcript, round metrics (with turn latencies) and progress line."""

    def __init__(self, writer: TranscriptWriter, agents: dict[str, AgentConfig], progress: Progress) -> None:
        self.writer = writer
        self.agents = agents
        self.progress = progress
        self.log = RoundLog(0, None)
        self._last = time.monotonic()
        self.simulated: tuple[str, str] | None = None  # a simulated learner's name and model

    def learner(self, text: str) -> None:
        name, model = self.simulated or (None, None)
        self.writer.learner(text, simulated=name, model=model)

    def round_started(self, trigger: str | None, overrides: RoundOverrides | None = None) -> None:
        self.writer.round_started(trigger, overrides)
        self._last = time.monotonic()

    def lecture_started(self, trigger: str | None) -> None:
        self.writer.lecture_started(trigger)
        self._last = time.monotonic()

    def event(self, event: Event) -> None:
        self.writer.event(event)
        elapsed = None
        if event.type == "done":
            now = time.monotonic()
            elapsed, self._last = now - self._last, now
        self.log.observe(event, self.agents, elapsed)
        if event.type == "agent_start":
            self.progress.status = f"{event.agent_name} is speaking"

    def round_finished(self, result: RoundResult) -> None:
        self.log.reason, self.log.error = result.reason, result.error
        self.writer.round_finished(result.reason, result.error)


async def run_all(specs: list[RunSpec], context: RunContext, concurrency: int,
                  on_done: Callable[[RunResult], None]) -> tuple[list[RunResult], bool]:
    """Run ``specs`` with at most ``concurrency`` at once; returns (results, interrupted)."""
    semaphore = asyncio.Semaphore(concurrency)
    results: list[RunResult] = []
    stopping = asyncio.Event()

    async def one(spec: RunSpec) -> None:
        async with semaphore:
            if stopping.is_set():
                return
            try:
                result = await execute_run(spec, context)
            except Exception as exc:  # noqa: BLE001 - one failing run never stops the others
                result = RunResult(run_id=spec.run_id, scenario=spec.scenario.id or "", model=spec.model.raw,
                                   scenario_path=str(spec.path), repeat=spec.repeat, status="error",
                                   prompts=spec.prompts_label,
                                   error=f"{type(exc).__name__}: {exc}")
                try:
                    save_run(context.out, result)
                except (OSError, MaicError, ValueError) as save_error:  # still reported: the batch fails
                    result.error = f"{result.error}; its result could not be saved: {_reason(save_error)}"
            results.append(result)
            on_done(result)

    tasks = [asyncio.ensure_future(one(spec)) for spec in specs]

    def interrupt() -> None:  # Ctrl-C: launch nothing more, cancel what runs
        stopping.set()
        for task in tasks:
            task.cancel()

    try:
        with on_sigint(interrupt), fewer_collections():
            await asyncio.gather(*tasks, return_exceptions=True)
    finally:
        await context.clients.aclose()
        if context.judge is not None:
            await context.judge.aclose()
    return results, stopping.is_set()
