"""The typed director outcome: its forms, the old string form transcripts hold, metrics, one StopReason."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from maic_cli.engine.director import MAX_PICK, read_pick
from maic_cli.engine.events import EVENT_ADAPTER, DoneEvent
from maic_cli.engine.models import DirectorState
from maic_cli.engine.outcomes import DirectorOutcome, Pick
from maic_cli.evaluation.metrics import RoundLog


@pytest.mark.parametrize(("legacy", "outcome"), [
    ("END", DirectorOutcome.end()),
    ("USER", DirectorOutcome.user()),
    ("teacher", DirectorOutcome.agent("teacher")),
    ("unknown:principal", DirectorOutcome.invalid("principal")),
])
def test_old_decision_strings_are_read_as_outcomes(legacy: str, outcome: DirectorOutcome) -> None:
    line = {"type": "done", "director_state": {}, "decision": legacy}
    event = EVENT_ADAPTER.validate_python(line)
    assert isinstance(event, DoneEvent) and event.outcome == outcome
    assert outcome.label == legacy


def test_outcomes_are_written_typed_and_read_back() -> None:
    event = DoneEvent(director_state=DirectorState(), outcome=DirectorOutcome.invalid("ghost"))
    written = json.loads(event.model_dump_json())
    assert written["outcome"] == {"kind": "invalid", "agent_id": "ghost"} and "decision" not in written
    assert EVENT_ADAPTER.validate_json(event.model_dump_json()) == event


@pytest.mark.parametrize("data", [{"kind": "agent"}, {"kind": "invalid", "agent_id": ""},
                                  {"kind": "end", "agent_id": "teacher"}, {"kind": "maybe"}])
def test_an_outcome_names_an_agent_exactly_when_its_kind_needs_one(data: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        DirectorOutcome.model_validate(data)


def done(outcome: DirectorOutcome, had_content: bool = True) -> DoneEvent:
    return DoneEvent(director_state=DirectorState(), outcome=outcome, agent_had_content=had_content)


def test_round_log_counts_agent_turns_and_invalid_picks_from_the_outcome() -> None:
    log = RoundLog(0, "hi")
    for event in (done(DirectorOutcome.agent("teacher")), done(DirectorOutcome.agent("mia"), had_content=False),
                  done(DirectorOutcome.invalid("ghost")), done(DirectorOutcome.user()),
                  done(DirectorOutcome.end())):
        log.observe(event, {})
    assert (log.agent_turns, log.empty_turns, log.invalid_picks) == (2, 1, 1)
    assert log.summary().invalid_picks == 1


# -- the director's pick: one typed value from the rules, a policy, the LLM and the guards --------------
@pytest.mark.parametrize(("text", "pick"), [
    ("teacher", Pick.agent("teacher")),
    ("  mia\n", Pick.agent("mia")),
    ("user", Pick.user()),
    ("USER", Pick.user()),
    ("End", Pick.end()),
    ("", Pick.end()),
    ("   ", Pick.end()),
    ("x" * 500, Pick.agent("x" * MAX_PICK)),
    ("a" * (MAX_PICK - 1) + " b", Pick.agent("a" * (MAX_PICK - 1))),  # cut, then no trailing space left
    ("ab\ud83d", Pick.agent("ab\ufffd")),
])
def test_a_pick_written_as_a_string_is_read_once(text: str, pick: Pick) -> None:
    assert read_pick(text) == pick


@pytest.mark.parametrize(("pick", "label", "outcome"), [
    (Pick.agent("teacher"), "teacher", DirectorOutcome.agent("teacher")),
    (Pick.agent("principal"), "principal", DirectorOutcome.invalid("principal")),
    (Pick.user(), "USER", DirectorOutcome.user()),
    (Pick.end(), "END", DirectorOutcome.end()),
])
def test_a_pick_gives_its_label_and_its_outcome_in_the_class(pick: Pick, label: str, outcome: DirectorOutcome) -> None:
    assert pick.label == label
    assert pick.outcome({"teacher", "mia"}) == outcome


@pytest.mark.parametrize(("kind", "agent_id"), [("agent", None), ("agent", ""), ("user", "mia"), ("end", "mia")])
def test_a_pick_that_names_the_wrong_thing_is_refused(kind: str, agent_id: str | None) -> None:
    with pytest.raises(ValueError, match="pick"):
        Pick(kind, agent_id)  # type: ignore[arg-type]


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200))
def test_any_string_is_a_pick_whose_label_reads_back_the_same(text: str) -> None:
    pick = read_pick(text)
    assert read_pick(pick.label) == pick
    assert len(pick.label) <= MAX_PICK
    pick.label.encode("utf-8")  # no broken surrogate reaches an event or a prompt
