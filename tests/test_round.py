"""generate_turn details and run_round's stop reasons, with the scripted model."""

from __future__ import annotations

import asyncio

from maic_cli.engine.classroom import Classroom
from maic_cli.engine.events import DoneEvent, Event
from maic_cli.engine.models import Slide, SlideElement, TurnConfig, TurnRequest
from maic_cli.engine.outcomes import DirectorOutcome
from maic_cli.engine.round import RoundResult, run_round
from maic_cli.engine.turn import generate_turn
from maic_cli.llm.scripted import ScriptedLLM, ScriptedReply
from tests.helpers import action, agent, decision, reply

CLASS = {a.id: a for a in (agent("teacher", "teacher", "Ms. T"), agent("mia", "student", "Mia"),
                           agent("leo", "student", "Leo", allowed_actions=["wb_draw_text"]))}
ALL = list(CLASS)


def play(classroom: Classroom, config: TurnConfig, llm: ScriptedLLM, events: list | None = None) -> RoundResult:
    return asyncio.run(run_round(classroom, config, llm, registry=CLASS,
                                 on_event=None if events is None else events.append))


def new_class(question: str = "Why is the sky blue?") -> Classroom:
    classroom = Classroom()
    classroom.add_learner_message(question)
    return classroom


def test_full_round_director_agent_director_agent_end() -> None:
    llm = ScriptedLLM([
        decision("teacher"),
        reply("Sunlight scatters.", action("wb_open"), action("wb_draw_latex", latex="I \\propto 1/\\lambda^4")),
        decision("mia"),
        reply("So red scatters less?"),
        decision("END"),
    ])
    events: list = []
    classroom = new_class()
    result = play(classroom, TurnConfig(agent_ids=ALL), llm, events)
    assert result.reason == "end"
    assert result.speakers == ["teacher", "mia"]
    assert [e.outcome for e in events if e.type == "done"] == [
        DirectorOutcome.agent("teacher"), DirectorOutcome.agent("mia"), DirectorOutcome.end()]
    assert result.outcome == DirectorOutcome.end()
    assert [m.role for m in classroom.messages] == ["user", "agent", "agent"]
    assert classroom.messages[1].text == "Sunlight scatters."
    assert [a.name for a in classroom.messages[1].actions] == ["wb_open", "wb_draw_latex"]
    assert classroom.store.whiteboard[0].kind == "latex"
    assert classroom.director_state is not None and classroom.director_state.turn_count == 2
    # The second agent's prompt saw what the first said, and the director saw both.
    mia_prompt = llm.calls[3].messages[-1]["content"]
    assert "Ms. T: Sunlight scatters." in mia_prompt
    assert "[wb_1] latex" in mia_prompt
    assert sum(1 for e in events if e.type == "done") == 3
    assert classroom.usage.agent.calls == 2 and classroom.usage.director.calls == 3


def test_round_ends_on_cue_user() -> None:
    llm = ScriptedLLM([decision("teacher"), reply("What do you think?"), decision("USER")])
    result = play(new_class(), TurnConfig(agent_ids=ALL), llm)
    assert result.reason == "cue_user"
    assert result.outcome == DirectorOutcome.user()


def test_round_stops_at_max_turns() -> None:
    llm = ScriptedLLM([decision("teacher"), reply("One."), decision("mia"), reply("Two.")])
    result = play(new_class(), TurnConfig(agent_ids=ALL, max_turns=2), llm)
    assert result.reason == "max_turns"
    assert result.outcome == DirectorOutcome.end()  # rule 1: no director call once the limit is reached
    assert llm.remaining == 0


def test_round_stops_after_two_empty_turns() -> None:
    llm = ScriptedLLM([decision("teacher"), "[]", decision("mia"), '[{"type":"text","content":"  "}]'])
    result = play(new_class(), TurnConfig(agent_ids=ALL), llm)
    assert result.reason == "empty_turns"


def test_provider_error_mid_stream_keeps_partial_message() -> None:
    text = reply("This answer will be cut off halfway through.")
    llm = ScriptedLLM([decision("teacher"), ScriptedReply(reply=text, disconnect_after=40)])
    events: list = []
    classroom = new_class()
    result = play(classroom, TurnConfig(agent_ids=ALL), llm, events)
    assert result.reason == "error"
    assert "stream dropped after 40 characters" in (result.error or "")
    assert classroom.messages[-1].text == text[len('[{"type": "text", "content": "'):40]
    assert [e.type for e in events][-3:] == ["agent_end", "error", "done"]


def test_cancelling_the_round_keeps_the_partial_message_marked_interrupted() -> None:
    llm = ScriptedLLM([decision("teacher"), ScriptedReply(reply=reply("A long, slow answer " * 20),
                                                          chunk_size=5, chunk_delay=0.01)])
    classroom = new_class()

    async def main() -> RoundResult:
        speaking = asyncio.Event()

        def on_event(event: Event) -> None:
            if event.type == "text_delta":
                speaking.set()

        task = asyncio.create_task(run_round(classroom, TurnConfig(agent_ids=ALL), llm, registry=CLASS,
                                             on_event=on_event))
        await speaking.wait()
        task.cancel()
        return await task

    result = asyncio.run(main())
    assert result.reason == "aborted"
    last = classroom.messages[-1]
    assert last.interrupted and last.text.startswith("A ")  # speech streams a whole word at a time
    assert result.interrupted_message_id == last.id


def test_new_learner_message_starts_a_new_round() -> None:
    llm = ScriptedLLM([decision("teacher"), reply("Hi."), decision("END"),
                       decision("mia"), reply("Hello again."), decision("END")])
    classroom = new_class()
    play(classroom, TurnConfig(agent_ids=ALL), llm)
    classroom.add_learner_message("And sunsets?")
    assert classroom.director_state is None
    play(classroom, TurnConfig(agent_ids=ALL), llm)
    assert classroom.director_state is not None and classroom.director_state.turn_count == 1


def test_disallowed_and_unknown_actions_are_dropped_and_counted() -> None:
    llm = ScriptedLLM([reply("Hi", action("wb_draw_text", content="ok"), action("wb_clear"),
                             action("teleport"), action("spotlight", elementId="e1"))])
    request = TurnRequest(config=TurnConfig(agent_ids=["leo"]))

    async def collect() -> list[Event]:
        return [e async for e in generate_turn(request, llm, CLASS)]

    events = asyncio.run(collect())
    assert [e.action_name for e in events if e.type == "action"] == ["wb_draw_text"]
    done = events[-1]
    assert isinstance(done, DoneEvent) and done.dropped_actions == 3 and done.total_actions == 1


def test_slide_actions_only_in_slide_scenes() -> None:
    teacher_reply = reply("Look here.", action("spotlight", elementId="title"))
    slides = [Slide(id="s1", title="Light", elements=[SlideElement(id="title", content="Light")])]

    def run(with_slides: bool) -> Classroom:
        classroom = new_class()
        if with_slides:
            classroom.store.slides = slides
        play(classroom, TurnConfig(agent_ids=["teacher"]), ScriptedLLM([teacher_reply]))
        return classroom

    assert [a.name for a in run(True).messages[-1].actions] == ["spotlight"]
    assert run(True).store.spotlight == "title"
    assert run(False).messages[-1].actions == []


def test_text_items_are_joined_with_a_space() -> None:
    llm = ScriptedLLM([reply("First.", action("wb_open"), "Second.")])
    classroom = new_class()
    play(classroom, TurnConfig(agent_ids=["teacher"]), llm)
    assert classroom.messages[-1].text == "First. Second."


def test_request_scoped_agent_config_overrides_the_registry() -> None:
    override = agent("mia", "student", "Mia Override")
    llm = ScriptedLLM([reply("I am new.")])
    classroom = new_class()
    asyncio.run(run_round(classroom, TurnConfig(agent_ids=["mia"], agent_configs={"mia": override}),
                          llm, registry=CLASS))
    assert classroom.messages[-1].agent_name == "Mia Override"


def test_scripted_model_running_out_is_a_clear_error() -> None:
    result = play(new_class(), TurnConfig(agent_ids=ALL), ScriptedLLM([]))
    assert result.reason == "error"
    assert "all 0 scripted replies are used up" in (result.error or "")


def test_an_agents_next_prompt_starts_with_its_last_prompt_and_reply() -> None:
    first_reply = reply("Scattering.", action("wb_draw_text", content="Rayleigh"))
    llm = ScriptedLLM([decision("teacher"), first_reply, decision("mia"), reply("Why blue?"), decision("USER"),
                       decision("teacher"), reply("Good question."), decision("END")])
    classroom = new_class()
    play(classroom, TurnConfig(agent_ids=ALL), llm)
    classroom.add_learner_message("And sunsets?")
    play(classroom, TurnConfig(agent_ids=ALL), llm)
    teacher_calls = [c.messages for c in llm.calls if c.purpose == "agent" and c.agent_id == "teacher"]
    before, after = teacher_calls
    assert after[:len(before)] == before  # system, history and the context it saw then: unchanged
    assert after[len(before)] == {"role": "assistant", "content": first_reply}  # its raw reply, verbatim


def test_an_unknown_pick_falls_back_to_the_best_eligible_agent() -> None:
    llm = ScriptedLLM([decision("teacher"), reply("Hi."), decision("principal"), reply("Hello."), decision("END")])
    result = play(new_class(), TurnConfig(agent_ids=ALL), llm)  # routing guard (engine/guards.py)
    assert result.reason == "end" and result.speakers == ["teacher", "mia"]
    assert result.outcome == DirectorOutcome.end()
