"""OpenMAIC's chat request → maic's turn → OpenMAIC's events, without a server (serve/openmaic_*.py).

The requests are OpenMAIC-shaped (tests/openmaic_shapes.py); the turn runs in maic's real engine on a function
model, and its events are translated and framed as the route sends them."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from maic_cli.engine.events import DoneEvent, Event
from maic_cli.engine.models import AgentTurnSummary, DirectorState, TurnRequest
from maic_cli.engine.turn import generate_turn
from maic_cli.llm.port import LLMRequest
from maic_cli.llm.scripted import FunctionLLM, ScriptedReply
from maic_cli.serve.openmaic_class import ClassMap, build_turn
from maic_cli.serve.openmaic_events import EventTranslator, frame
from maic_cli.serve.openmaic_request import RequestProblem, parse_request
from maic_cli.store.personas import load_registry

from .openmaic_shapes import (
    GENERATED_AGENTS,
    agent_message,
    chat_bodies,
    client_events,
    discussion_request,
    qa_request,
    store_state,
    user_message,
)

DEFAULTS = load_registry().agents
TEACHER_REPLY = ('[{"type":"action","name":"spotlight","params":{"elementId":"body_1"}},'
                 '{"type":"action","name":"wb_draw_text","params":{"content":"1/2","x":100,"y":80}},'
                 '{"type":"text","content":"Each half is one of two equal parts."}]')


def _model(pick: str = "default-1", reply: str = TEACHER_REPLY) -> FunctionLLM:
    def respond(request: LLMRequest) -> str:
        return json.dumps({"next_agent": pick}) if request.purpose == "director" else reply
    return FunctionLLM(respond)


def _run(turn: TurnRequest, ids: ClassMap, llm: FunctionLLM) -> list[dict[str, Any]]:
    """The turn's events as the client reads them off the frames the route writes."""
    async def collect() -> bytes:
        translator = EventTranslator(ids)
        out = b""
        async for event in generate_turn(turn, llm):
            translated = translator.translate(event)
            if translated is not None:
                out += frame(translated)
        return out
    return client_events(asyncio.run(collect()))


def test_a_question_to_openmaics_default_class_is_one_maic_turn_and_its_events() -> None:
    turn, ids = build_turn(parse_request(qa_request()), DEFAULTS)
    assert turn.config.agent_ids == ["default-1", "default-4"]
    teacher = turn.config.agent_configs["default-1"]
    assert (teacher.role, teacher.avatar, teacher.color) == ("teacher", "/avatars/teacher.png", "#3b82f6")
    assert turn.config.agent_configs["default-4"].persona == DEFAULTS["curious_student"].persona
    assert [m.role for m in turn.messages] == ["user"] and "same size" in turn.messages[0].text
    assert turn.user_profile.nickname == "Ana"
    assert turn.config.lesson is not None and turn.config.lesson.scene == "What a half is"
    assert [s.title for s in turn.store_state.slides] == ["What a half is"]
    assert "body_1" in [e.id for e in turn.store_state.slides[0].elements]

    events = _run(turn, ids, _model())
    kinds = [e["type"] for e in events]
    assert kinds[0] == "thinking" and kinds[-1] == "done" and kinds.count("done") == 1
    start = next(e["data"] for e in events if e["type"] == "agent_start")
    assert start["agentId"] == "default-1" and start["agentAvatar"] == "/avatars/teacher.png"
    actions = [e["data"] for e in events if e["type"] == "action"]
    assert [a["actionName"] for a in actions] == ["spotlight", "wb_draw_text"]
    assert all(a["agentId"] == "default-1" and a["messageId"] == start["messageId"] for a in actions)
    said = "".join(e["data"]["content"] for e in events if e["type"] == "text_delta")
    assert said == "Each half is one of two equal parts."
    done = events[-1]["data"]
    assert (done["totalAgents"], done["totalActions"], done["agentHadContent"]) == (1, 2, True)
    state = done["directorState"]
    assert state["turnCount"] == 1
    assert state["agentResponses"][0]["agentId"] == "default-1"
    assert [r["actionName"] for r in state["whiteboardLedger"]] == ["wb_draw_text"]


def test_generated_agents_keep_their_ids_in_every_event_and_in_the_director_state() -> None:
    """``gen-T3ach_r1`` is no maic id (capitals): it is mapped on the way in and back on the way out."""
    body = qa_request(agent_ids=tuple(a["id"] for a in GENERATED_AGENTS))
    body["messages"].append(agent_message("gen-Stud_Nt2", "Kai", "Why is that?", 2,
                                          [("wb_draw_text", {"content": "½", "x": 10, "y": 10})]))
    body["config"]["agentConfigs"] = GENERATED_AGENTS
    earlier = {"actionName": "wb_draw_text", "agentId": "gen-Stud_Nt2", "agentName": "Kai",
               "params": {"content": "½", "x": 10, "y": 10}}
    body["directorState"] = {"turnCount": 1, "agentResponses": [
        {"agentId": "gen-Stud_Nt2", "agentName": "Kai", "contentPreview": "Why?", "actionCount": 1,
         "whiteboardActions": [earlier]}], "whiteboardLedger": [earlier]}
    turn, ids = build_turn(parse_request(body), DEFAULTS)
    assert all(agent_id.islower() for agent_id in turn.config.agent_ids)
    teacher = turn.config.agent_configs[ids.to_maic["gen-T3ach_r1"]]
    assert (teacher.name, teacher.role) == ("Professor Lin", "teacher")
    assert teacher.allowed_actions == ["spotlight", "wb_open", "wb_draw_text", "wb_close"]
    assert turn.director_state is not None and turn.director_state.turn_count == 1
    assert [e.params.get("content") for e in turn.store_state.whiteboard] == ["½"]  # the ledger, replayed

    events = _run(turn, ids, _model(pick=ids.to_maic["gen-T3ach_r1"]))
    ids_seen = {e["data"]["agentId"] for e in events if "agentId" in e["data"]}
    assert ids_seen == {"gen-T3ach_r1"}
    state = events[-1]["data"]["directorState"]
    assert state["turnCount"] == 2
    assert [r["agentId"] for r in state["agentResponses"]] == ["gen-Stud_Nt2", "gen-T3ach_r1"]
    assert state["whiteboardLedger"][0] == earlier  # the client's own records come back as it sent them
    assert state["whiteboardLedger"][1]["agentId"] == "gen-T3ach_r1"


def test_a_discussion_is_a_maic_discussion_round_opened_by_its_trigger_agent() -> None:
    turn, ids = build_turn(parse_request(discussion_request()), DEFAULTS)
    kai = ids.to_maic["gen-Stud_Nt2"]
    assert turn.config.discussion_topic == "Is a half of a big pizza still a half?"
    assert turn.config.discussion_prompt is not None and "size of the whole" in turn.config.discussion_prompt
    assert (turn.config.initiator_id, turn.config.trigger_agent_id) == (kai, kai)
    assert turn.config.lesson is not None and turn.config.lesson.task == "discuss"
    llm = _model(reply='[{"type":"text","content":"I think a half is a half."}]')
    events = _run(turn, ids, llm)
    assert not [c for c in llm.calls if c.purpose == "director"]  # the trigger speaks first, no director call
    assert next(e for e in events if e["type"] == "agent_start")["data"]["agentId"] == "gen-Stud_Nt2"

    # The learner joins in (their line one request late): the director decides who answers, not the trigger.
    body = discussion_request()
    body["messages"] = [agent_message("gen-Stud_Nt2", "Kai", "A half is a half.", 1), user_message("Is it?", 2)]
    body["directorState"] = {"turnCount": 1, "agentResponses": [], "whiteboardLedger": []}
    turn, ids = build_turn(parse_request(body), DEFAULTS)
    assert (turn.config.trigger_agent_id, turn.config.initiator_id) == (None, kai)
    llm = _model(pick=ids.to_maic["gen-T3ach_r1"])
    events = _run(turn, ids, llm)
    assert [c.purpose for c in llm.calls] == ["director", "agent"]
    assert next(e for e in events if e["type"] == "agent_start")["data"]["agentId"] == "gen-T3ach_r1"


def test_the_empty_first_request_of_the_client_loop_is_answered_by_the_class() -> None:
    """OpenMAIC's client may send its first request before the typed question is in its messages."""
    turn, ids = build_turn(parse_request(qa_request(None)), DEFAULTS)
    assert turn.messages == [] and turn.config.trigger_agent_id == "default-1"  # the teacher opens
    llm = _model(pick="USER")
    events = _run(turn, ids, llm)
    assert [c.purpose for c in llm.calls] == ["agent"]  # no director call could end it before anyone spoke
    assert [e["type"] for e in events if e["type"] in ("agent_start", "agent_end", "done")] == \
        ["agent_start", "agent_end", "done"]
    assert events[-1]["data"]["totalAgents"] == 1


def test_a_line_that_came_after_the_rounds_turns_begins_maics_round_and_the_clients_count_goes_on() -> None:
    """OpenMAIC's loop sends the typed line one request late: the teacher already opened, yet the line is
    unanswered, so maic's director starts afresh (its guard has someone answer) while the client's count and
    summaries carry on."""
    body = qa_request("And a quarter?")
    body["messages"] = [agent_message("default-1", "T", "Where were we?", 1), *body["messages"]]
    body["directorState"] = {"turnCount": 1, "agentResponses": [
        {"agentId": "default-1", "agentName": "T", "contentPreview": "Where were we?", "actionCount": 0,
         "whiteboardActions": []}], "whiteboardLedger": []}
    turn, ids = build_turn(parse_request(body), DEFAULTS)
    assert turn.director_state == DirectorState()
    events = _run(turn, ids, _model(pick="USER"))  # a director that would hand straight back to the learner
    assert next(e for e in events if e["type"] == "agent_start")["data"]["agentId"] == "default-1"
    state = events[-1]["data"]["directorState"]
    assert state["turnCount"] == 2
    assert [r["contentPreview"] for r in state["agentResponses"]] == ["Where were we?",
                                                                      "Each half is one of two equal parts."]


def test_a_cue_to_the_learner_and_a_dropped_reply_say_what_the_client_loop_needs() -> None:
    body = qa_request()
    body["messages"].append(agent_message("default-1", "T", "Halves.", 2))
    body["directorState"] = {"turnCount": 1, "agentResponses": [
        {"agentId": "default-1", "agentName": "T", "contentPreview": "Halves.", "actionCount": 0,
         "whiteboardActions": []}], "whiteboardLedger": []}
    turn, ids = build_turn(parse_request(body), DEFAULTS)
    events = _run(turn, ids, _model(pick="USER"))
    assert [e["type"] for e in events][-2:] == ["cue_user", "done"]
    assert events[-2]["data"] == {"fromAgentId": "default-1"}
    assert events[-1]["data"]["cueUserReceived"] is True and events[-1]["data"]["totalAgents"] == 0

    translator = EventTranslator(ids)
    dropped = DoneEvent(director_state=DirectorState(turn_count=1, agent_responses=[
        AgentTurnSummary(agent_id="default-1", agent_name="T", content_preview="Halves.")]), reply_dropped=True)
    done = translator.translate(dropped)
    assert done is not None and (done["data"]["totalAgents"], done["data"]["agentHadContent"]) == (1, False)
    assert translator.translate(dropped) is None  # nothing after done


def test_a_failed_turn_ends_with_error_then_done_and_the_clients_state_unchanged() -> None:
    body = qa_request()
    body["directorState"] = {"turnCount": 3, "agentResponses": [], "whiteboardLedger": []}
    turn, ids = build_turn(parse_request(body), DEFAULTS)
    llm = FunctionLLM(lambda request: ScriptedReply(error="server_error"))
    events = _run(turn, ids, llm)
    assert [e["type"] for e in events][-2:] == ["error", "done"]
    assert "server error" in events[-2]["data"]["message"]
    assert events[-1]["data"]["directorState"]["turnCount"] == 3
    assert EventTranslator(ids).done()["data"]["directorState"]["turnCount"] == 3


@pytest.mark.parametrize(("body", "code", "words"), [
    ({"storeState": store_state(), "config": {"agentIds": ["default-1"]}}, "MISSING_REQUIRED_FIELD", "messages"),
    ({"messages": [], "config": {"agentIds": ["default-1"]}}, "MISSING_REQUIRED_FIELD", "storeState"),
    ({"messages": [], "storeState": store_state(), "config": {"agentIds": []}}, "MISSING_REQUIRED_FIELD",
     "config.agentIds"),
    ({"messages": [], "storeState": store_state(), "config": {"agentIds": [1]}}, "INVALID_REQUEST",
     "config.agentIds.0"),
    ({"messages": [{"role": "user", "parts": "hi"}], "storeState": store_state(),
      "config": {"agentIds": ["default-1"]}}, "INVALID_REQUEST", "messages.0.parts"),
    ({"messages": [], "storeState": store_state(), "config": {"agentIds": ["default-1"]},
      "directorState": {"turnCount": "1"}}, "INVALID_REQUEST", "directorState.turnCount"),
    ({"messages": [], "storeState": store_state(), "config": {"agentIds": ["a" * 201]}}, "INVALID_REQUEST",
     "config.agentIds.0"),
    ({"messages": [], "storeState": store_state(), "config": {"agentIds": [f"a{n}" for n in range(21)]}},
     "INVALID_REQUEST", "config.agentIds"),
    ([1, 2], "INVALID_REQUEST", "JSON object"),
])
def test_a_malformed_request_is_one_problem_naming_its_field(body: Any, code: str, words: str) -> None:
    with pytest.raises(RequestProblem) as caught:
        parse_request(body)
    assert caught.value.code == code and words in caught.value.message


def test_the_browsers_model_settings_are_not_part_of_the_request_maic_reads() -> None:
    chat = parse_request(qa_request(baseUrl="http://127.0.0.1:9/v1"))
    dumped = json.dumps(chat.model_dump())
    assert "sk-browser-key" not in dumped and "127.0.0.1:9" not in dumped and "gpt-4o-mini" not in dumped
    turn, _ = build_turn(chat, DEFAULTS)
    assert "sk-browser-key" not in turn.model_dump_json() and "127.0.0.1:9" not in turn.model_dump_json()


def test_frames_are_one_data_line_and_a_blank_line_whatever_the_text() -> None:
    nasty = "line\nbreak\r\n\u2028sep\x85\x1b[31m \ud800 \"quoted\" 二分之一 \n\ndata: fake"
    out = frame({"type": "text_delta", "data": {"content": nasty}})
    assert out.startswith(b"data: ") and out.endswith(b"\n\n") and out.count(b"\n") == 2 and b"\r" not in out
    assert "二分之一".encode() in out  # UTF-8 as written
    assert client_events(out)[0]["data"]["content"] == nasty.replace("\ud800", "\ufffd")


# -- hypothesis: any JSON body is a problem or a turn, never anything else -------------------------------------

@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(chat_bodies)
def test_any_body_is_a_clear_problem_or_a_turn(body: dict[str, Any]) -> None:
    try:
        chat = parse_request(body)
        turn, ids = build_turn(chat, DEFAULTS)
    except RequestProblem as problem:
        assert problem.code in ("MISSING_REQUIRED_FIELD", "INVALID_REQUEST")
        assert "\n" not in problem.message and len(problem.message) < 400
        return
    assert turn.config.agent_ids and set(turn.config.agent_ids) <= set(ids.to_openmaic)
    done = EventTranslator(ids).done()
    json.dumps(done)  # what goes back is always JSON


def _events_of(turn: TurnRequest) -> list[Event]:
    async def collect() -> list[Event]:
        return [e async for e in generate_turn(turn, _model())]
    return asyncio.run(collect())


def test_a_whole_classroom_of_scenes_is_read_as_the_lesson_and_a_bad_scene_is_skipped() -> None:
    body = qa_request()
    body["storeState"]["scenes"] = [{"type": "interactive"}, 7, store_state()["scenes"][1],
                                    store_state()["scenes"][0]]
    body["storeState"]["currentSceneId"] = "scene-quiz"
    turn, _ = build_turn(parse_request(body), DEFAULTS)
    assert turn.config.lesson is not None and (turn.config.lesson.kind, turn.config.lesson.scene) == ("quiz", "Check")
    assert _events_of(turn)[-1].type == "done"


def test_a_slow_turn_is_kept_alive_by_heartbeats_the_client_skips() -> None:
    """The route's own heartbeat (a comment frame) between the events of a slow turn, on a real aiohttp server."""
    from aiohttp import ClientSession, web

    from maic_cli.llm.spec import ModelSpec
    from maic_cli.serve.openmaic_api import OpenMaicChat
    from maic_cli.serve.service import TurnService

    def slow(request: LLMRequest) -> ScriptedReply:
        if request.purpose == "director":
            return ScriptedReply(reply='{"next_agent": "default-1"}')
        return ScriptedReply(reply=TEACHER_REPLY, chunk_size=40, chunk_delay=0.08)

    async def exchange() -> bytes:
        service = TurnService(FunctionLLM(slow), ModelSpec.parse("demo"), registry=DEFAULTS)
        app = web.Application()
        app.router.add_post("/api/chat", OpenMaicChat(service, heartbeat=0.05).handle)
        runner = web.AppRunner(app)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = runner.addresses[0][1]
        try:
            async with ClientSession() as session, \
                    session.post(f"http://127.0.0.1:{port}/api/chat", json=qa_request()) as response:
                assert response.status == 200 and response.headers["Content-Type"] == "text/event-stream"
                return await response.read()
        finally:
            await runner.cleanup()

    raw = asyncio.run(exchange())
    assert raw.count(b":heartbeat\n\n") >= 2
    assert b"data: :heartbeat" not in raw and raw.endswith(b"\n\n")
    events = client_events(raw)
    assert [e["type"] for e in events][-1] == "done" and "heartbeat" not in json.dumps(events)
    assert "".join(e["data"]["content"] for e in events if e["type"] == "text_delta") == \
        "Each half is one of two equal parts."


def test_the_learners_graded_quiz_answers_reach_the_class_on_the_quiz_scene() -> None:
    body = qa_request("Why was I wrong?")
    body["storeState"]["currentSceneId"] = "scene-quiz"
    body["storeState"]["quizResults"] = {"sceneId": "scene-quiz", "answers": {"q1": ["B"]}, "results": [
        {"questionId": "q1", "correct": False, "status": "incorrect", "earned": 0}]}
    turn, _ = build_turn(parse_request(body), DEFAULTS)
    assert turn.config.lesson is not None and turn.config.lesson.kind == "quiz"
    assert turn.config.lesson.quiz == ['How many halves make a whole? They answered "B": 0 of 1 points; '
                                       'the key: A']
    body["storeState"]["quizResults"]["sceneId"] = "another-scene"  # results for another scene: not these
    turn, _ = build_turn(parse_request(body), DEFAULTS)
    assert turn.config.lesson is not None and turn.config.lesson.quiz == []


def test_the_stages_whiteboard_is_the_board_the_class_sees() -> None:
    """OpenMAIC keeps its board in ``stage.whiteboard``: a new round (no ledger yet) still sees what is on it."""
    body = qa_request()
    body["storeState"]["stage"] = {**body["storeState"]["stage"], "whiteboard": [{"id": "wb-1", "elements": [
        {"id": "sum_1", "type": "text", "left": 100, "top": 50, "width": 300, "height": 40,
         "content": "<p>1/2 + 1/2 = 1</p>"},
        {"id": "frac_1", "type": "latex", "left": 100, "top": 150, "latex": "\\frac{1}{2}"},
        {"id": "line_1", "type": "line", "left": 0, "top": 0, "start": [0, 0], "end": [10, 10]}]}]}
    body["storeState"]["whiteboardOpen"] = True
    turn, ids = build_turn(parse_request(body), DEFAULTS)
    board = turn.store_state.whiteboard
    assert [(e.id, e.kind) for e in board] == [("sum_1", "text"), ("frac_1", "latex")]
    assert board[0].params["content"] == "1/2 + 1/2 = 1" and turn.store_state.whiteboard_open
    llm = _model()
    _run(turn, ids, llm)
    agent_call = next(c for c in llm.calls if c.purpose == "agent")
    assert "[sum_1] text: 1/2 + 1/2 = 1" in agent_call.messages[-1]["content"]


def test_a_classroom_is_read_once_for_the_requests_of_a_loop_and_again_when_it_changes() -> None:
    from maic_cli.serve.openmaic_lesson import read_request_lesson

    state = store_state()
    first = read_request_lesson(state["stage"], state["scenes"], "scene-halves")
    again = read_request_lesson(state["stage"], state["scenes"], "scene-quiz")
    assert first is not None and again is not None
    assert again[0].lesson is first[0].lesson and (first[0].scene, again[0].scene) == (0, 1)
    assert again[1] is not first[1] and again[1] == first[1]  # each turn its own list of the slides
    changed = json.loads(json.dumps(state["scenes"]))
    changed[0]["content"]["canvas"]["elements"][1]["content"] = "<p>Halves are equal.</p>"
    other = read_request_lesson(state["stage"], changed, "scene-halves")
    assert other is not None and other[0].lesson is not first[0].lesson
    assert [e.content for e in other[1][0].elements] == ["Halves are equal."]


def test_what_is_long_but_legitimate_is_cut_not_refused() -> None:
    """A long session, a pasted essay, a generated agent with its picture inline: served, within maic's bounds."""
    body = qa_request("essay " * 5_000)
    body["messages"] = [user_message(f"line {n}", n) for n in range(450)] + body["messages"]
    body["config"]["agentIds"] = ["gen-Pic"]
    body["config"]["agentConfigs"] = [{"id": "gen-Pic", "name": "Pic", "role": "teacher", "persona": "p" * 30_000,
                                       "avatar": "data:image/png;base64," + "A" * 50_000, "color": "#123456",
                                       "allowedActions": [], "priority": 7}]
    turn, ids = build_turn(parse_request(body), DEFAULTS)
    assert len(turn.messages) == 400 and turn.messages[0].text == "line 51"
    assert len(turn.messages[-1].text) <= 20_000 and turn.messages[-1].text.startswith("essay essay")
    agent = turn.config.agent_configs[ids.to_maic["gen-Pic"]]
    assert len(agent.persona) <= 20_000 and agent.avatar == ""
    events = _run(turn, ids, _model())
    start = next(e["data"] for e in events if e["type"] == "agent_start")
    assert start["agentId"] == "gen-Pic" and "agentAvatar" not in start and start["agentColor"] == "#123456"


def test_a_drawing_is_sent_with_the_id_its_element_has_on_maics_board() -> None:
    """The client draws it under that id, so a later ``wb_delete`` from the class finds it on the client's board."""
    reply = ('[{"type":"action","name":"wb_draw_text","params":{"content":"first","x":10,"y":10}},'
             '{"type":"action","name":"wb_draw_latex","params":{"latex":"x^2","elementId":"my_formula"}},'
             '{"type":"action","name":"wb_delete","params":{"elementId":"wb_1"}},'
             '{"type":"action","name":"wb_draw_text","params":{"content":"second","x":10,"y":60}},'
             '{"type":"text","content":"There."}]')
    turn, ids = build_turn(parse_request(qa_request()), DEFAULTS)
    llm = _model(reply=reply)

    async def collect() -> list[dict[str, Any]]:
        translator = EventTranslator(ids, turn.store_state.model_copy(deep=True))
        return [out async for event in generate_turn(turn, llm) if (out := translator.translate(event)) is not None]
    actions = [e["data"] for e in asyncio.run(collect()) if e["type"] == "action"]
    assert [(a["actionName"], a["params"].get("elementId")) for a in actions] == [
        ("wb_draw_text", "wb_1"), ("wb_draw_latex", "my_formula"), ("wb_delete", "wb_1"), ("wb_draw_text", "wb_2")]
