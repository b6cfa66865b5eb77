"""Running many classes: expand scenarios × models × repeats, shard, run concurrently, report.

Each run is one class: a fresh classroom, one round per learner message, a
transcript, metrics from the events, expectations checked per round.  Runs are
independent: one that fails never stops the others.  Ctrl-C stops launching
new runs, cancels the running ones and still writes a (partial) report.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..engine.classroom import Classroom
from ..engine.events import Event
from ..engine.expectations import Expectations, check_round
from ..engine.metrics import RoundLog
from ..engine.models import AgentConfig, TurnConfig
from ..engine.round import run_round
from ..llm.port import LLMClient
from ..llm.recording import CallRecord, RecordingLLM
from ..store.reports import CallStat, RunResult, save_run
from ..store.scenarios import Scenario, initial_store
from ..store.transcript import TranscriptHeader, TranscriptWriter, produced_by
from .chat_loop import MENTION
from .signals import on_sigint


@dataclass
class RunSpec:
    scenario: Scenario
    path: Path
    agents: list[AgentConfig]
    config: TurnConfig
    model: str
    repeat: int

    @property
    def run_id(self) -> str:
        model = self.model
        if model.startswith(("scripted:", "replay:")):  # the file's name says enough
            kind, _, path = model.partition(":")
            model = f"{kind}-{Path(path).stem}"
        slug = re.sub(r"[^A-Za-z0-9._-]+", "-", model).strip("-")[:60]
        return f"{self.scenario.id}__{slug}__r{self.repeat}"

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
    make_llm: Callable[[str], LLMClient]
    progress: dict[str, Progress] = field(default_factory=dict)  # the running classes; a display polls it

    async def close_clients(self) -> None:
        """Close what the shared clients hold open (the direct client's connections)."""
        for client in getattr(self.make_llm, "shared", {}).values():
            closer = getattr(client, "aclose", None)
            if closer is not None:
                await closer()


async def execute_run(spec: RunSpec, context: RunContext) -> RunResult:
    client = context.make_llm(spec.model)  # a bad model file fails the run before its transcript is opened
    started = time.time()
    clock = time.monotonic()
    progress = Progress(spec.run_id, rounds=len(spec.rounds()))
    context.progress[spec.run_id] = progress
    result = RunResult(run_id=spec.run_id, scenario=spec.scenario.id or spec.path.stem,
                       scenario_path=str(spec.path), model=spec.model, repeat=spec.repeat, status="complete",
                       started_at=started)
    transcript_path = context.out / "transcripts" / f"{spec.run_id}.jsonl"
    header = TranscriptHeader(model=spec.model, produced_by=produced_by(spec.model), agents=spec.agents,
                              config=spec.config, profile=spec.scenario.learner,
                              store=initial_store(spec.scenario), scenario=result.scenario)
    writer = await asyncio.to_thread(_open_transcript, transcript_path, header)
    result.transcript = str(transcript_path)

    def on_call(record: CallRecord) -> None:
        writer.call(record)
        result.calls.append(CallStat(purpose=record.purpose, agent_id=record.agent_id,
                                     ttft=record.ttft, duration=record.duration, error_kind=record.error_kind,
                                     **{k: record.usage.get(k, 0) for k in ("prompt_tokens", "completion_tokens",
                                                                           "cached_tokens", "cost")}))

    llm = RecordingLLM(client, on_call)
    classroom = Classroom(store=initial_store(spec.scenario))
    agents = {a.id: a for a in spec.agents}
    try:
        for index, (text, expect) in enumerate(spec.rounds()):
            progress.round, progress.status = index + 1, "the director is choosing"
            log = await _play_round(spec, classroom, llm, writer, agents, index, text, progress)
            failures = check_round(expect, log)
            result.failures.extend(f"round {index + 1}: {failure}" for failure in failures)
            summary = log.summary()
            summary["failures"] = failures
            result.rounds.append(summary)
            if log.reason == "error":
                result.status, result.error = "error", log.error
                break
    except asyncio.CancelledError:
        result.status, result.error = "cancelled", "stopped by Ctrl-C"
    finally:
        writer.close()
        result.duration = time.monotonic() - clock
        context.progress.pop(spec.run_id, None)
    if result.status != "cancelled":
        await asyncio.to_thread(save_run, context.out, result)  # file system work off the event loop
    return result


def _open_transcript(path: Path, header: TranscriptHeader) -> TranscriptWriter:
    """A fresh transcript for this run (a re-run starts afresh); opened off the event loop."""
    path.unlink(missing_ok=True)
    return TranscriptWriter(path, header, durable=False)


async def _play_round(spec: RunSpec, classroom: Classroom, llm: LLMClient, writer: TranscriptWriter,
                      agents: dict[str, AgentConfig], index: int, text: str | None,
                      progress: Progress) -> RoundLog:
    config = spec.config
    trigger = config.initiator_id if text is None else None  # the initiator opens a discussion
    if trigger is not None:
        config = config.model_copy(update={"trigger_agent_id": trigger})
    if text is not None:
        classroom.add_learner_message(text)
        writer.learner(text)
        mention = MENTION.match(text)
        if mention and mention.group(1) in agents:
            trigger = mention.group(1)
            config = config.model_copy(update={"trigger_agent_id": trigger})
    log = RoundLog(index, text)
    writer.round_started(trigger)
    last = time.monotonic()

    def on_event(event: Event) -> None:
        nonlocal last
        writer.event(event)
        elapsed = None
        if event.type == "done":
            now = time.monotonic()
            elapsed, last = now - last, now
        log.observe(event, agents, elapsed)
        if event.type == "agent_start":
            progress.status = f"{event.agent_name} is speaking"

    outcome = await run_round(classroom, config, llm, registry=agents, profile=spec.scenario.learner,
                              on_event=on_event)
    log.reason, log.error = outcome.reason, outcome.error
    writer.round_finished(outcome.reason, outcome.error)
    if outcome.reason == "aborted":  # run_round absorbed a Ctrl-C: stop this run too
        raise asyncio.CancelledError
    return log


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
                result = RunResult(run_id=spec.run_id, scenario=spec.scenario.id or "", model=spec.model,
                                   scenario_path=str(spec.path), repeat=spec.repeat, status="error",
                                   error=f"{type(exc).__name__}: {exc}")
                save_run(context.out, result)
            results.append(result)
            on_done(result)

    tasks = [asyncio.ensure_future(one(spec)) for spec in specs]

    def interrupt() -> None:  # Ctrl-C: launch nothing more, cancel what runs
        stopping.set()
        for task in tasks:
            task.cancel()

    try:
        with on_sigint(interrupt):
            await asyncio.gather(*tasks, return_exceptions=True)
    finally:
        await context.close_clients()
    return results, stopping.is_set()
