"""A simulated learner in the seat of a ``maic run`` class, and tutoring tasks as runs.

A scenario with ``learner: {simulated: …}`` (store/learners.py) or a line of a
tutoring tasks file (evaluation/tutoring_tasks.py) is played by :func:`play_learner`
instead of scripted ``messages:``: the learner (engine/learner.py) opens, the
class answers (one round, checked against the scenario's expectations like a
scripted round), the learner answers the class, and so on until it is satisfied
(``<done>``), gives up (its turn limit) or a round fails.  Its lines are marked in
the transcript with its name and model; its calls are recorded there too (so
``maic replay --check`` replays its lines as recorded, without calling it) and
counted apart from the class's (``learner_calls``).  A tutoring run ends with its
success@k / telling@k outcome (evaluation/tutoring.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from ..engine.learner import LearnerProfile, SimulatedLearner
from ..engine.models import AgentConfig, Message
from ..engine.runner import ClassRunner
from ..llm.port import LLMError
from ..llm.spec import ModelSpec
from ..store.learners import seat_learner
from .expectations import check_round
from .metrics import RoundLog
from .run_results import RunResult
from .scenarios import Scenario, load_scenario
from .tutoring import DEFAULT_K, TEACHER_ROLES, Utterance, outcome
from .tutoring_tasks import TutoringTask, read_tasks, task_scenario


@dataclass
class LearnerSetup:
    """Who sits in the learner's seat of a run, on which model, for how many turns; and the tutoring
    task it stands for (``None``: a scenario's simulated learner)."""

    profile: LearnerProfile
    model: ModelSpec
    turns: int | None = None
    task: TutoringTask | None = None


def load_sources(path: Path, tutors: tuple[str, ...] | None = None) -> list[tuple[Scenario, TutoringTask | None]]:
    """The scenarios a file holds: one for a scenario file, one per task for a ``.jsonl`` tasks file."""
    if path.suffix == ".jsonl":
        stem = path.stem
        return [(task_scenario(task, stem, *((tutors,) if tutors else ())), task) for task in read_tasks(path)]
    return [(load_scenario(path), None)]


def learner_setup(scenario: Scenario, path: Path, task: TutoringTask | None, class_model: ModelSpec,
                  learner_model: str | None, turns: int | None, *, client: str = "auto",
                  router: bool = False, api_base: str | None = None) -> LearnerSetup | None:
    """The run's simulated learner (``None``: scripted).  Its model: the scenario's ``learner.model``,
    else ``--learner-model``, else the class's.  A tutoring task's student speaks K + 1 times
    (its opening and K answers: success@K needs its utterance K)."""
    profile = seat_learner(scenario.learner, path)
    if profile is None:
        return None
    raw = scenario.learner.model or learner_model
    model = ModelSpec.parse(raw, client=client, router=router, api_base=api_base) if raw else class_model
    if task is not None:
        limit: int | None = (turns or DEFAULT_K) + 1
    else:
        limit = scenario.learner.turns or turns
    return LearnerSetup(profile, model, limit, task)


def utterances(messages: Sequence[Message], agents: dict[str, AgentConfig]) -> list[Utterance]:
    """The conversation as MathDial counts it: the learner is the student, the teacher-side agents the
    teacher (classmates are neither); a message without text is no utterance."""
    found: list[Utterance] = []
    for message in messages:
        if not message.text.strip():
            continue
        if message.role == "user":
            found.append(Utterance("student", message.text))
        elif (agent := agents.get(message.agent_id or "")) is not None and agent.role in TEACHER_ROLES:
            found.append(Utterance("teacher", message.text))
    return found


class _Hooks(Protocol):
    """What play_learner needs of the run's hooks (evaluation/batch.py's ``_RunHooks``): where the round's
    metrics go."""

    log: RoundLog


async def play_learner(runner: ClassRunner, hooks: _Hooks, learner: SimulatedLearner, setup: LearnerSetup,
                       scenario: Scenario, result: RunResult, opening: str | None,
                       on_status: Callable[[int, str], None] = lambda index, status: None) -> None:
    """The class with a simulated learner in the seat (``opening``: a discussion's initiator speaks first;
    ``on_status``: the round under way and what happens in it, for a progress display)."""
    index = 0

    def track(status: str) -> None:
        on_status(index, status)

    try:
        if opening is not None:
            track("the discussion opens")
            if not await _round(runner, hooks, scenario, result, index, None, opening):
                return
            index += 1
        while learner.may_speak:
            track(f"{learner.profile.name} (simulated) is thinking")
            try:
                move = await learner.next_move(runner.classroom.messages)
            except LLMError as exc:
                result.status, result.error = "error", f"simulated learner: {exc}"
                return
            if not move.text:
                break
            track("the class answers")
            if not await _round(runner, hooks, scenario, result, index, move.text, None):
                return
            index += 1
    except asyncio.CancelledError:
        result.status, result.error = "cancelled", "stopped by Ctrl-C"
    finally:
        if setup.task is not None:
            result.tutoring = outcome(setup.task.qid, setup.task.ground_truth,
                                      utterances(runner.classroom.messages, runner.agents),
                                      k=max(1, learner.turns - 1))


async def _round(runner: ClassRunner, hooks: _Hooks, scenario: Scenario, result: RunResult, index: int,
                 text: str | None, opening: str | None) -> bool:
    """One round, checked like a scripted one; ``False`` when the run must stop."""
    log = hooks.log = RoundLog(index, text)
    played = await (runner.play(text) if text is not None else runner.play_round(opening))
    if played.reason == "aborted":
        raise asyncio.CancelledError
    expect = scenario.expect.merged(scenario.opening_expect if text is None else None)
    failures = check_round(expect, log)
    result.failures.extend(f"round {index + 1}: {failure}" for failure in failures)
    result.rounds.append(log.summary(failures))
    if log.reason == "error":
        result.status, result.error = "error", log.error
        return False
    return True
