"""Routing guards (engine/guards.py) under a scripted director that tries to break the rules."""

from __future__ import annotations

import asyncio
import itertools
from pathlib import Path

import pytest

from maic_cli.engine.classroom import Classroom
from maic_cli.engine.guards import guard_pick
from maic_cli.engine.models import AgentTurnSummary, DirectorState, TurnConfig
from maic_cli.engine.outcomes import Pick
from maic_cli.engine.round import RoundResult, run_round
from maic_cli.llm.scripted import ScriptedLLM
from tests.helpers import agent, decision, reply

CLASS = {a.id: a for a in (agent("mia", "student", "Mia", priority=4), agent("teacher", "teacher", "Ms. T"),
                           agent("assistant", "assistant", "Sam"), agent("leo", "student", "Leo", priority=9))}


def play(llm: ScriptedLLM, config: TurnConfig | None = None,
         agents: dict | None = None) -> tuple[RoundResult, list]:
    classroom = Classroom()
    classroom.add_learner_message("Why is the sky blue?")
    events: list = []
    config = config or TurnConfig(agent_ids=list(agents or CLASS))
    result = asyncio.run(run_round(classroom, config, llm, registry=agents or CLASS, on_event=events.append))
    assert llm.remaining == 0  # every scripted reply was used: no extra call, none missing
    return result, events


def corrections(events: list) -> list[tuple[str, str, str]]:
    return [(e.original, e.corrected, e.rule) for e in events if e.type == "director_correction"]


def test_a_repeated_speaker_is_replaced_by_the_best_who_has_not_spoken() -> None:
    llm = ScriptedLLM([decision("teacher"), reply("Scattering."), decision("teacher"), reply("Adding."),
                       decision("USER")])
    result, events = play(llm)
    assert result.speakers == ["teacher", "assistant"] and result.reason == "cue_user"
    assert corrections(events) == [("teacher", "assistant", "repeat_speaker")]


def test_a_repeat_when_configured_is_allowed_but_never_twice_in_a_row() -> None:
    llm = ScriptedLLM([decision("teacher"), reply("Scattering."), decision("teacher"), reply("Adding."),
                       decision("teacher"), reply("More."), decision("USER")])
    result, events = play(llm, TurnConfig(agent_ids=list(CLASS), allow_repeat_speaker=True))
    assert result.speakers == ["teacher", "assistant", "teacher"]
    assert corrections(events) == [("teacher", "assistant", "repeat_speaker")]


def test_a_repeat_when_nobody_else_is_left_hands_to_the_learner() -> None:
    pair = {a.id: a for a in (CLASS["teacher"], CLASS["leo"])}
    llm = ScriptedLLM([decision("teacher"), reply("A."), decision("leo"), reply("B?"), decision("teacher")])
    result, events = play(llm, agents=pair)
    assert result.speakers == ["teacher", "leo"] and result.reason == "cue_user"
    assert corrections(events) == [("teacher", "USER", "repeat_speaker")]


def test_ending_before_anyone_answered_dispatches_the_teacher() -> None:
    llm = ScriptedLLM([decision("END"), reply("Scattering."), decision("END")])
    result, events = play(llm)
    assert result.speakers == ["teacher"] and result.reason == "end"
    assert corrections(events) == [("END", "teacher", "unanswered")]


def test_cueing_the_learner_before_anyone_answered_dispatches_the_teacher() -> None:
    llm = ScriptedLLM([decision("USER"), reply("Scattering."), decision("USER")])
    result, events = play(llm)
    assert result.speakers == ["teacher"] and result.reason == "cue_user"
    assert corrections(events) == [("USER", "teacher", "unanswered")]
    assert [e.type for e in events].index("director_correction") < [e.type for e in events].index("agent_start")


def test_an_unparseable_director_reply_before_an_answer_still_gets_an_answer() -> None:
    llm = ScriptedLLM(["no idea", reply("Scattering."), decision("END")])
    result, events = play(llm)
    assert result.speakers == ["teacher"] and corrections(events) == [("END", "teacher", "unanswered")]


def test_an_unknown_id_falls_back_to_the_best_eligible_agent() -> None:
    llm = ScriptedLLM([decision("teacher"), reply("Scattering."), decision("principal"), reply("Adding."),
                       decision("END")])
    result, events = play(llm)
    assert result.speakers == ["teacher", "assistant"]
    assert corrections(events) == [("principal", "assistant", "unknown_agent")]


def test_an_unknown_id_when_everyone_spoke_hands_back_to_the_learner() -> None:
    spoken = [AgentTurnSummary(agent_id=i, agent_name=i, content_preview="x") for i in CLASS]
    state = DirectorState(turn_count=4, agent_responses=spoken)
    found = guard_pick(Pick.agent("principal"), CLASS, TurnConfig(agent_ids=list(CLASS)), state)
    assert found is not None and (found.corrected, found.rule) == (Pick.user(), "unknown_agent")


def test_best_eligible_after_the_teacher_prefers_assistant_then_student_priority() -> None:
    config = TurnConfig(agent_ids=list(CLASS))
    spoken = [AgentTurnSummary(agent_id=i, agent_name=i, content_preview="x") for i in ("teacher", "assistant")]
    found = guard_pick(Pick.agent("teacher"), CLASS, config, DirectorState(turn_count=2, agent_responses=spoken))
    assert found is not None and found.corrected == Pick.agent("leo")  # priority 9 before Mia's 4


def test_a_discussion_may_hand_back_before_an_answer_and_the_initiator_is_best() -> None:
    config = TurnConfig(agent_ids=list(CLASS), discussion_topic="Is math invented?", initiator_id="mia")
    assert guard_pick(Pick.user(), CLASS, config, DirectorState()) is None
    found = guard_pick(Pick.agent("nobody"), CLASS, config, DirectorState())
    assert found is not None and found.corrected == Pick.agent("mia")


def test_correct_picks_pass_untouched() -> None:
    config = TurnConfig(agent_ids=list(CLASS))
    spoken = [AgentTurnSummary(agent_id="teacher", agent_name="T", content_preview="x")]
    answered = DirectorState(turn_count=1, agent_responses=spoken)
    assert guard_pick(Pick.agent("teacher"), CLASS, config, DirectorState()) is None
    picks = (Pick.user(), Pick.end(), Pick.agent("mia"))
    assert all(guard_pick(pick, CLASS, config, answered) is None for pick in picks)


def test_corrections_are_counted_in_round_metrics_and_reports(tmp_path: Path) -> None:
    from maic_cli.evaluation.metrics import RoundLog
    from maic_cli.evaluation.run_results import RunResult
    from maic_cli.report.reports import write_reports

    llm = ScriptedLLM([decision("END"), reply("Scattering."), decision("principal"), reply("Adding."),
                       decision("USER")])
    _, events = play(llm)
    log = RoundLog(0, "Why is the sky blue?")
    for event in events:
        log.observe(event, CLASS)
    summary = log.summary()
    assert summary.director_corrections == 2 and summary.invalid_picks == 1
    result = RunResult(run_id="r1", scenario="sky", scenario_path="s.yaml", model="scripted", director="llm",
                       repeat=1, status="complete", rounds=[summary])
    report = write_reports(tmp_path, [result], {})
    assert report.by_model["scripted"].director_corrections == 2
    assert report.by_scenario["sky"].director_corrections == 2
    assert report.by_director["llm"].director_corrections == 2
    markdown = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "| corrections |" in markdown and "## By director policy" in markdown
    row = next(line for line in markdown.splitlines() if line.startswith("| sky"))
    assert row.rstrip().endswith("| 2 |")


STUBBORN_CLASS = {a.id: a for a in (agent("teacher", "teacher", "Ms. T"), agent("mia", "student", "Mia"),
                                    agent("assistant", "assistant", "Sam"))}


def _stubborn_round(policy_name: str, allow_repeat: bool) -> tuple[RoundResult, list, int]:
    """A round whose director (the LLM, or a policy hook) always names the teacher."""
    from maic_cli.engine.policies import DirectorPolicy
    from maic_cli.llm.scripted import FunctionLLM

    def respond(request):  # type: ignore[no-untyped-def]
        return decision("teacher") if request.purpose == "director" else reply("Something new to add.")

    llm = FunctionLLM(respond)
    policy = None if policy_name == "llm" else DirectorPolicy("tests:teacher", lambda *_: "teacher")
    classroom = Classroom()
    classroom.add_learner_message("Why is the sky blue?")
    events: list = []
    config = TurnConfig(agent_ids=list(STUBBORN_CLASS), max_turns=8, allow_repeat_speaker=allow_repeat)
    result = asyncio.run(run_round(classroom, config, llm, registry=STUBBORN_CLASS, policy=policy,
                                   on_event=events.append))
    return result, events, sum(1 for c in llm.calls if c.purpose == "director")


@pytest.mark.parametrize("policy_name", ["llm", "hook"])
@pytest.mark.parametrize("allow_repeat", [False, True])
def test_a_director_that_always_names_the_teacher_gets_everyone_once_then_the_learner(
        policy_name: str, allow_repeat: bool) -> None:
    result, events, _ = _stubborn_round(policy_name, allow_repeat)
    speakers = result.speakers
    assert all(a != b for a, b in itertools.pairwise(speakers))  # nobody twice in a row
    assert speakers[0] == "teacher" and result.reason == "cue_user"
    if not allow_repeat:
        assert speakers == ["teacher", "assistant", "mia"]
    fixes = corrections(events)
    assert fixes and all(rule == "repeat_speaker" and original == "teacher" for original, _, rule in fixes)
    assert fixes[-1][1] == "USER"  # the round hands to the learner
    from maic_cli.evaluation.metrics import RoundLog
    log = RoundLog(0, "Why is the sky blue?")
    for event in events:
        log.observe(event, STUBBORN_CLASS)
    assert log.director_corrections == len(fixes) == sum(1 for e in events if e.type == "director_correction")
