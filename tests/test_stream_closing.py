"""An abandoned model stream is closed by the code that abandons it, so its call is recorded while
the transcript is still open — not later by an asyncio finalizer task that nobody awaits
("Task exception was never retrieved" after a bad reply in ``maic run``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from maic_cli.evaluation.run_results import RunResult
from tests.test_run import QA_SCENARIO, write


class WrongUsageLLM:
    """A client whose usage has the wrong type: the engine fails while the call's stream is open."""

    model = "wrong-usage"

    async def stream(self, request):  # type: ignore[no-untyped-def]
        from maic_cli.llm.port import StreamPiece, Usage

        yield StreamPiece(text='{"next_agent": "teacher"}')
        yield StreamPiece(usage=Usage(prompt_tokens="many"))  # type: ignore[arg-type]


def test_a_failing_turn_closes_its_call_before_the_run_ends(tmp_path: Path) -> None:
    import asyncio
    import gc

    from maic_cli.cli.batch_plan import expand
    from maic_cli.evaluation.batch import RunContext, run_all

    specs = expand([write(tmp_path / "sky.yaml", QA_SCENARIO)], ["wrong-usage"], 1, None, [])
    from maic_cli.llm.pool import ClientPool

    context = RunContext(out=tmp_path / "out", clients=ClientPool(lambda spec: WrongUsageLLM()))
    problems: list[dict] = []

    async def main() -> tuple[list[RunResult], bool]:
        asyncio.get_running_loop().set_exception_handler(lambda loop, problem: problems.append(problem))
        return await run_all(specs, context, 1, lambda result: None)

    (result,), _ = asyncio.run(main())
    gc.collect()  # a stream left open would be finalized in a task nobody awaits ("never retrieved")
    assert result.status == "error"
    assert problems == []
    transcript = tmp_path / "out" / "transcripts" / f"{result.run_id}.jsonl"
    lines = [json.loads(line) for line in transcript.read_text().splitlines()]
    assert [line["kind"] for line in lines if line["kind"] == "llm_call"] == ["llm_call"]  # recorded in time


def test_an_event_consumer_that_fails_closes_the_open_call_at_once() -> None:
    import asyncio

    from maic_cli.engine.classroom import Classroom
    from maic_cli.engine.models import TurnConfig
    from maic_cli.engine.round import run_round
    from maic_cli.llm.recording import RecordingLLM
    from maic_cli.llm.scripted import ScriptedLLM
    from tests.helpers import agent, decision, reply

    records: list = []
    llm = RecordingLLM(ScriptedLLM([decision("teacher"), reply("A long answer. " * 20), decision("USER")]),
                       records.append)
    classroom = Classroom()
    classroom.add_learner_message("hi")

    def on_event(event) -> None:  # type: ignore[no-untyped-def]
        if event.type == "text_delta":
            assert len(records) == 1  # the director's call is recorded, the agent's is open
            raise RuntimeError("the view failed")

    async def main() -> list[str]:
        with pytest.raises(RuntimeError, match="the view failed"):
            await run_round(classroom, TurnConfig(agent_ids=["teacher", "mia"]), llm, on_event=on_event,
                            registry={"teacher": agent("teacher", "teacher"), "mia": agent("mia")})
        return [r.purpose for r in records]  # before anything else runs on the loop

    assert asyncio.run(main()) == ["director", "agent"]  # the agent's call was closed by run_round itself
    assert records[1].error_kind == "cancelled"
