"""Rounds through real litellm against an OpenAI-compatible server on 127.0.0.1.

The server streams real ``text/event-stream`` chunks, so litellm's own HTTP and
streaming code runs; nothing leaves the machine.
"""

from __future__ import annotations

import asyncio

import pytest

from maic_cli.engine.classroom import Classroom
from maic_cli.engine.models import TurnConfig
from maic_cli.engine.outcomes import DirectorOutcome
from maic_cli.engine.round import RoundResult, run_round
from maic_cli.llm.litellm_client import LitellmClient
from maic_cli.llm.port import LLMClient, LLMError, LLMRequest, close_llm
from maic_cli.llm.retrying import RetryingClient
from maic_cli.testing.openai_server import LoopbackOpenAIServer, ServedReply
from tests.helpers import action, agent, decision, reply

CLASS = {a.id: a for a in (agent("teacher", "teacher", "Ms. T"), agent("mia", "student", "Mia"),
                           agent("leo", "student", "Leo"))}


def client(server: LoopbackOpenAIServer, retries: int = 0) -> RetryingClient:
    inner = LitellmClient("openai/loopback-model", api_base=server.base_url, api_key="sk-test", timeout=10)
    return RetryingClient(inner, retries=retries, backoff=0.01)


def play(server: LoopbackOpenAIServer, config: TurnConfig, retries: int = 0) -> tuple[RoundResult, Classroom, list]:
    classroom = Classroom()
    classroom.add_learner_message("Why is the sky blue?")
    events: list = []
    result = asyncio.run(run_round(classroom, config, client(server, retries), registry=CLASS,
                                   on_event=events.append))
    return result, classroom, events


def test_full_round_with_the_director_choosing(loopback_server: LoopbackOpenAIServer) -> None:
    loopback_server.enqueue(
        ServedReply(decision("teacher"), chunk_size=3),
        ServedReply(reply("Blue light scatters more. ", action("wb_draw_latex", latex="\\lambda^{-4}"),
                          "Any guesses why?"), chunk_size=5),
        decision("mia"),
        reply("Is it because blue has a shorter wavelength?"),
        decision("USER"),
    )
    result, classroom, events = play(loopback_server, TurnConfig(agent_ids=list(CLASS)))
    assert result.reason == "cue_user"
    assert result.speakers == ["teacher", "mia"]
    assert classroom.messages[1].text == "Blue light scatters more. Any guesses why?"
    assert classroom.store.whiteboard[0].params["latex"] == "\\lambda^{-4}"
    kinds = [e.type for e in events]
    assert kinds[0] == "thinking" and kinds[-2:] == ["cue_user", "done"]
    assert kinds.count("text_delta") > 3  # it streamed
    # Requests really went over HTTP, streaming, asking for usage.
    assert len(loopback_server.requests) == 5
    assert all(r["stream"] and r["stream_options"] == {"include_usage": True} for r in loopback_server.requests)
    assert loopback_server.requests[0]["messages"][0]["content"].startswith("You are the director")
    assert classroom.usage.agent.completion_tokens > 0


def test_trigger_fast_path_sends_no_director_call(loopback_server: LoopbackOpenAIServer) -> None:
    loopback_server.enqueue(reply("Leo here!"), decision("END"))
    result, _, _ = play(loopback_server, TurnConfig(agent_ids=list(CLASS), trigger_agent_id="leo"))
    assert result.reason == "end" and result.speakers == ["leo"]
    assert loopback_server.requests[0]["messages"][0]["content"].startswith("You are Leo")


def test_end_before_an_answer_is_corrected_then_end(loopback_server: LoopbackOpenAIServer) -> None:
    loopback_server.enqueue('{"next_agent": "END"}', reply("Scattering."), '{"next_agent": "END"}')
    result, classroom, _ = play(loopback_server, TurnConfig(agent_ids=list(CLASS)))
    assert result.reason == "end" and result.speakers == ["teacher"] and len(classroom.messages) == 2


def test_unknown_agent_id_falls_back_to_an_agent(loopback_server: LoopbackOpenAIServer) -> None:
    loopback_server.enqueue(decision("headmaster"), reply("Scattering."), decision("END"))
    result, _, events = play(loopback_server, TurnConfig(agent_ids=list(CLASS)))
    assert result.reason == "end" and result.speakers == ["teacher"]
    assert [e.corrected for e in events if e.type == "director_correction"] == ["teacher"]
    assert events[-1].outcome == DirectorOutcome.end() == result.outcome


def test_rate_limit_is_retried_then_succeeds(loopback_server: LoopbackOpenAIServer) -> None:
    loopback_server.enqueue(ServedReply(status=429), ServedReply(status=500), decision("teacher"),
                            reply("Scattering."), decision("END"))
    result, _, _ = play(loopback_server, TurnConfig(agent_ids=list(CLASS)), retries=2)
    assert result.reason == "end"
    assert len(loopback_server.requests) == 5


def test_provider_error_ends_the_round_with_one_line(loopback_server: LoopbackOpenAIServer) -> None:
    loopback_server.enqueue(ServedReply(status=429, text="Too many requests, slow down"))
    result, _, events = play(loopback_server, TurnConfig(agent_ids=list(CLASS)))
    assert result.reason == "error"
    error = next(e for e in events if e.type == "error")
    assert "\n" not in error.message
    assert error.message.startswith("openai/loopback-model: rate limited (HTTP 429)")
    assert "Too many requests" in error.message


async def stream_once(client: LLMClient, request: LLMRequest | None = None) -> None:
    try:
        async for _ in client.stream(request or LLMRequest(messages=[{"role": "user", "content": "x"}])):
            pass
    finally:
        await close_llm(client)  # the direct client holds a session open


def test_auth_error_is_not_retried(loopback_server: LoopbackOpenAIServer) -> None:
    loopback_server.enqueue(ServedReply(status=401, text="Incorrect API key provided"))

    with pytest.raises(LLMError) as caught:
        asyncio.run(stream_once(client(loopback_server, retries=3)))
    assert caught.value.kind == "auth"
    assert "check the API key" in str(caught.value)
    assert len(loopback_server.requests) == 1


def test_dropped_stream_keeps_the_partial_message(loopback_server: LoopbackOpenAIServer) -> None:
    text = reply("This explanation is going to be cut off before it ends, sadly.")
    loopback_server.enqueue(decision("teacher"), ServedReply(text, chunk_size=4, drop_after=60))
    result, classroom, events = play(loopback_server, TurnConfig(agent_ids=list(CLASS)), retries=2)
    assert result.reason == "error"
    partial = classroom.messages[-1]
    assert partial.role == "agent" and partial.text
    assert "This explanation is going to be cut off".startswith(partial.text) or partial.text.startswith("This")
    assert [e.type for e in events][-3:] == ["agent_end", "error", "done"]
    assert "stream dropped" in next(e for e in events if e.type == "error").message
    assert len(loopback_server.requests) == 2  # no retry once tokens had arrived


def test_connection_refused_is_one_line(loopback_server: LoopbackOpenAIServer) -> None:
    url = loopback_server.base_url
    loopback_server.stop()
    dead = LitellmClient("openai/loopback-model", api_base=url, api_key="sk-test", timeout=5)

    with pytest.raises(LLMError) as caught:
        asyncio.run(stream_once(dead))
    assert caught.value.kind == "connection"
    assert "\n" not in str(caught.value)


def test_structured_output_is_sent_as_response_format(loopback_server: LoopbackOpenAIServer) -> None:
    loopback_server.enqueue(decision("teacher"), '{"items": ' + reply("Structured hello.") + "}",
                            decision("END"))
    classroom = Classroom()
    classroom.add_learner_message("hi")
    llm = LitellmClient("openai/loopback-model", api_base=loopback_server.base_url, api_key="sk-test",
                        structured="json_schema")
    result = asyncio.run(run_round(classroom, TurnConfig(agent_ids=list(CLASS)), llm, registry=CLASS))
    assert result.reason == "end"
    assert classroom.messages[-1].text == "Structured hello."  # the {"items": [...]} wrapper is skipped
    director_format = loopback_server.requests[0]["response_format"]
    assert director_format["type"] == "json_schema"
    assert director_format["json_schema"]["schema"]["properties"]["next_agent"]["enum"] == [
        "teacher", "mia", "leo"]  # nobody has spoken yet: the round cannot end unanswered
    later = loopback_server.requests[2]["response_format"]["json_schema"]["schema"]
    assert later["properties"]["next_agent"]["enum"] == ["mia", "leo", "USER", "END"]
    agent_schema = loopback_server.requests[1]["response_format"]["json_schema"]["schema"]
    assert agent_schema["properties"]["items"]["type"] == "array"


def test_structured_json_object_form_for_llama_cpp_servers(loopback_server: LoopbackOpenAIServer) -> None:
    loopback_server.enqueue(decision("END"))
    classroom = Classroom()
    classroom.add_learner_message("hi")
    llm = LitellmClient("openai/loopback-model", api_base=loopback_server.base_url, api_key="sk-test",
                        structured="json_object")
    asyncio.run(run_round(classroom, TurnConfig(agent_ids=list(CLASS)), llm, registry=CLASS))
    sent = loopback_server.requests[0]["response_format"]
    assert sent["type"] == "json_object" and sent["schema"]["required"] == ["next_agent"]


def test_auto_structured_is_off_for_unknown_models(loopback_server: LoopbackOpenAIServer) -> None:
    loopback_server.enqueue(decision("END"))
    classroom = Classroom()
    classroom.add_learner_message("hi")
    asyncio.run(run_round(classroom, TurnConfig(agent_ids=list(CLASS)), client(loopback_server), registry=CLASS))
    assert "response_format" not in loopback_server.requests[0]


def direct(server: LoopbackOpenAIServer, retries: int = 0) -> RetryingClient:
    from maic_cli.llm.direct import DirectClient

    return RetryingClient(DirectClient("openai/loopback-model", api_base=server.base_url), retries=retries,
                          backoff=0.01)


def test_direct_client_runs_a_round_and_retries(loopback_server: LoopbackOpenAIServer) -> None:
    loopback_server.enqueue(ServedReply(status=429), decision("teacher"),
                            ServedReply(reply("Direct and fast."), chunk_size=3), decision("END"))
    classroom = Classroom()
    classroom.add_learner_message("hi")
    client = direct(loopback_server, 2)

    async def play() -> RoundResult:
        try:
            return await run_round(classroom, TurnConfig(agent_ids=list(CLASS)), client, registry=CLASS)
        finally:
            await client.aclose()

    result = asyncio.run(play())
    assert result.reason == "end"
    assert classroom.messages[-1].text == "Direct and fast."
    assert classroom.usage.agent.completion_tokens > 0
    sent = loopback_server.requests[1]
    assert sent["model"] == "loopback-model" and sent["stream"] is True
    assert loopback_server.headers[1]["Authorization"] == "Bearer sk-no-key"


def test_direct_client_sends_the_key_litellm_would(loopback_server: LoopbackOpenAIServer,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    loopback_server.enqueue(decision("END"))
    client = direct(loopback_server)

    asyncio.run(stream_once(client))
    assert loopback_server.headers[0]["Authorization"] == "Bearer sk-from-env"


@pytest.mark.parametrize(("served", "kind"), [
    (ServedReply(status=401, text="bad key"), "auth"),
    (ServedReply(status=500), "server_error"),
    (ServedReply(reply("This will be cut off in the middle."), chunk_size=4, drop_after=30), "stream_dropped"),
])
def test_direct_client_errors_are_one_line(loopback_server: LoopbackOpenAIServer, served: ServedReply,
                                           kind: str) -> None:
    loopback_server.enqueue(served)
    client = direct(loopback_server)

    with pytest.raises(LLMError) as caught:
        asyncio.run(stream_once(client))
    assert caught.value.kind == kind and "\n" not in str(caught.value)


def test_direct_client_body_is_built_from_the_request(loopback_server: LoopbackOpenAIServer) -> None:
    from maic_cli.llm.direct import DirectClient

    loopback_server.enqueue(decision("END"))
    client = DirectClient("openai/loopback-model", api_base=loopback_server.base_url, temperature=0.3,
                          extra={"seed": 7, "reasoning_effort": "low"}, structured="json_object")
    request = LLMRequest(messages=[{"role": "user", "content": "x"}], max_tokens=50,
                         response_schema={"type": "object"})

    asyncio.run(stream_once(client, request))
    sent = loopback_server.requests[0]
    assert sent == {"model": "loopback-model", "messages": request.messages, "stream": True,
                    "stream_options": {"include_usage": True}, "temperature": 0.3, "max_tokens": 50,
                    "response_format": {"type": "json_object", "schema": {"type": "object"}}, "seed": 7}


@pytest.mark.parametrize("text", ["plain", "un café — “quoted”, 数学, 🙂", "a lone \ud800 surrogate",
                                  "new\nline \"q\" \\"])
def test_direct_client_sends_any_text_as_it_is(loopback_server: LoopbackOpenAIServer, text: str) -> None:
    from maic_cli.llm.direct import DirectClient

    loopback_server.enqueue(decision("END"))
    client = DirectClient("openai/loopback-model", api_base=loopback_server.base_url, temperature=0.25)
    request = LLMRequest(messages=[{"role": "system", "content": text}, {"role": "user", "content": "x"}])

    asyncio.run(stream_once(client, request))
    assert loopback_server.requests[0]["messages"] == request.messages
    assert loopback_server.requests[0]["temperature"] == 0.25
    assert loopback_server.headers[0]["Content-Type"] == "application/json"
