"""ClassRunner: the one way a learner turn is played (chat, batch, replay --check)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from maic_cli.engine.classroom import Classroom
from maic_cli.engine.events import Event
from maic_cli.engine.models import TurnConfig
from maic_cli.engine.round import RoundResult
from maic_cli.engine.runner import ClassRunner, RunnerHooks, mentioned
from maic_cli.llm.scripted import ScriptedLLM
from tests.helpers import agent, decision, reply

CLASS = {a.id: a for a in (agent("teacher", "teacher", "Ms. T"), agent("mia", "student", "Mia"))}


class Log(RunnerHooks):
    def __init__(self) -> None:
        self.calls: list[str] = []

    def learner(self, text: str) -> None:
        self.calls.append(f"learner:{text}")

    def round_started(self, trigger: str | None, overrides: object = None) -> None:
        self.calls.append(f"start:{trigger}")

    def event(self, event: Event) -> None:
        if event.type in ("agent_start", "done"):
            self.calls.append(event.type)

    def round_finished(self, result: RoundResult) -> None:
        self.calls.append(f"finished:{result.reason}")

    def save(self) -> None:
        self.calls.append("save")


def runner(llm: ScriptedLLM, hooks: list[RunnerHooks], **config: object) -> ClassRunner:
    return ClassRunner(Classroom(), TurnConfig(agent_ids=list(CLASS), **config), llm,  # type: ignore[arg-type]
                       agents=CLASS, hooks=hooks)


def test_play_records_the_learner_runs_a_round_and_saves_at_its_boundaries_only() -> None:
    log = Log()
    run = runner(ScriptedLLM([decision("teacher"), reply("Light scatters."), decision("END")]), [log])
    result = asyncio.run(run.play("Why is the sky blue?"))
    assert result.reason == "end" and result.speakers == ["teacher"]
    # The order that matters: learner recorded and saved before the round; the round saved once it finished.
    assert log.calls[:3] == ["learner:Why is the sky blue?", "save", "start:None"]
    assert log.calls[-2:] == ["finished:end", "save"]
    assert log.calls.count("save") == 2  # not after each turn: two turns ("done" twice), two saves
    assert log.calls.count("done") == 2
    assert [m.role for m in run.classroom.messages] == ["user", "agent"]


def test_a_mention_of_an_agent_in_the_class_answers_first_without_the_director() -> None:
    llm = ScriptedLLM([reply("Me first!"), decision("END")])
    log = Log()
    result = asyncio.run(runner(llm, [log]).play("@mia what do you think?"))
    assert result.speakers == ["mia"]
    assert "start:mia" in log.calls
    assert llm.calls[0].purpose == "agent"  # no director call before Mia


def test_a_mention_of_someone_not_in_the_class_is_not_a_trigger() -> None:
    run = runner(ScriptedLLM([]), [])
    assert mentioned("@nobody hi") == "nobody"
    assert run.trigger_for("@nobody hi") is None
    assert run.trigger_for("  @teacher hi") == "teacher"
    assert run.trigger_for("no mention") is None


def test_a_discussion_opens_with_its_initiator_once() -> None:
    llm = ScriptedLLM([reply("Let us discuss."), decision("END")])
    run = runner(llm, [], discussion_topic="Is math invented?", initiator_id="mia")
    opened = asyncio.run(run.open_discussion())
    assert opened is not None and opened.speakers == ["mia"]
    assert asyncio.run(run.open_discussion()) is None  # the class has spoken: nothing to open


def test_round_finished_is_called_even_when_a_hook_raises_mid_round() -> None:
    class FailingSave(Log):
        def save(self) -> None:
            super().save()
            if "agent_start" in self.calls:
                raise OSError("disk full")

    hooks = FailingSave()
    run = runner(ScriptedLLM([decision("teacher"), reply("Light scatters."), decision("END")]), [hooks])
    with pytest.raises(OSError):
        asyncio.run(run.play("Why?"))
    assert any(c.startswith("finished:") for c in hooks.calls)


def test_maic_run_with_the_local_model_builds_compact_prompts(tmp_path: Path) -> None:
    """The prompt variant follows the model at request time: ``maic run --model local`` gets the compact
    prompts and the small turn cap, as ``maic chat`` does (it got the full ones before)."""
    from maic_cli.cli.batch_plan import expand
    from maic_cli.engine.calls import COMPACT_MAX_TOKENS
    from maic_cli.evaluation.batch import RunContext, run_all
    from maic_cli.llm.pool import ClientPool
    from tests.test_run import QA_SCENARIO, write

    served: list[ScriptedLLM] = []

    def scripted(spec: object) -> ScriptedLLM:  # stands in for the offline model, which the run asked for
        served.append(ScriptedLLM([decision("teacher"), reply("Light scatters."), decision("END")] * 3))
        return served[-1]

    specs = expand([write(tmp_path / "sky.yaml", QA_SCENARIO)], ["local", "openai/gpt-4o-mini"], 1, None, [])
    context = RunContext(out=tmp_path / "out", clients=ClientPool(scripted))
    asyncio.run(run_all(specs, context, 1, lambda result: None))
    caps = {spec.model.raw: call.max_tokens for spec, llm in zip(specs, served, strict=True)
            for call in llm.calls if call.purpose == "agent"}
    assert caps == {"local": COMPACT_MAX_TOKENS, "openai/gpt-4o-mini": 800}
