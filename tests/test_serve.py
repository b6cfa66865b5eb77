"""``maic serve`` as a real process on 127.0.0.1, driven by maic's own thin client (``--server``): a batch
through the server says what the same batch says in process; the model's calls leave from the server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from maic_cli.cli.app import app
from maic_cli.testing.openai_server import LoopbackOpenAIServer
from maic_cli.testing.serve_process import ServeProcess
from tests.helpers import decision, reply

SCENARIO = """id: sky
class: {agents: [teacher, curious_student]}
messages: ["Why is the sky blue?", "And sunsets?"]
expect: {first_speaker: teacher}
"""
SCRIPT = (decision("teacher"), reply("Light scatters off the air.", {"type": "action", "name": "wb_open",
                                                                     "params": {}}),
          decision("curious_student"), reply("So blue scatters most?"), decision("USER"),
          decision("teacher"), reply("At sunset light crosses more air."), decision("USER"))


def batch(tmp_path: Path, name: str, *flags: str) -> dict[str, Any]:
    scenario = tmp_path / "sky.yaml"
    scenario.write_text(SCENARIO, encoding="utf-8")
    out = tmp_path / name
    result = CliRunner().invoke(app, ["run", str(scenario), "--out", str(out), "--plain", *flags])
    assert result.exit_code == 0, result.output
    runs = list((out / "runs").glob("*.json"))
    assert len(runs) == 1
    run: dict[str, Any] = json.loads(runs[0].read_text(encoding="utf-8"))
    run["events"] = [json.loads(line) for line in (out / "transcripts" / runs[0].with_suffix(".jsonl").name)
                     .read_text(encoding="utf-8").splitlines() if '"kind":"event"' in line.replace(" ", "")]
    return run


def said(run: dict[str, Any]) -> list[tuple[str, ...]]:
    """What the class said and did, in order (ids and timings differ between two runs)."""
    out: list[tuple[str, ...]] = []
    for line in run["events"]:
        event = line["event"]
        if event["type"] in ("agent_start", "agent_end"):
            out.append((event["type"], event["agent_id"]))
        elif event["type"] == "text_delta":
            out.append(("text", event["content"]))
        elif event["type"] == "action":
            out.append(("action", event["action_name"]))
        elif event["type"] == "done":
            out.append(("done", json.dumps(event["director_state"], sort_keys=True), str(event.get("retried", 0))))
    return out


def test_a_batch_through_a_real_server_says_what_the_same_batch_says_in_process(tmp_path: Path) -> None:
    with LoopbackOpenAIServer(SCRIPT) as here:
        local = batch(tmp_path, "local", "--model", "openai/loopback", "--api-base", here.base_url)
        assert len(here.requests) == len(SCRIPT)
    with LoopbackOpenAIServer(SCRIPT) as there, \
            ServeProcess("--model", "openai/loopback", "--api-base", there.base_url) as server:
        remote = batch(tmp_path, "remote", "--model", "openai/loopback", "--server", server.url)
        assert len(there.requests) == len(SCRIPT)  # every model call left from the server
        log = server.log()
    assert log.count("\"POST /v1/turn HTTP/1.1\" 200") == 5  # one request per turn
    assert said(remote) == said(local) and len(said(local)) > 10
    for key in ("status", "failures", "error", "learner"):
        assert remote[key] == local[key]
    untimed = [{k: v for k, v in r.items() if k != "turn_latencies"} for r in local["rounds"]]
    assert [{k: v for k, v in r.items() if k != "turn_latencies"} for r in remote["rounds"]] == untimed
    assert local["status"] == "complete" and untimed[0]["speakers"] == ["teacher", "curious_student"]


def test_the_wire_carries_what_a_turn_needs_that_a_session_never_keeps() -> None:
    from maic_cli.engine.models import LessonContext, TurnConfig, TurnRequest, UserProfile
    from maic_cli.serve.limits import read_json
    from maic_cli.serve.wire import decode_request, encode_request

    request = TurnRequest(config=TurnConfig(agent_ids=["teacher"], trigger_agent_id="teacher",
                                            allow_repeat_speaker=True, compact_prompts=True,
                                            lesson=LessonContext(title="Fractions", scene="Halves", task="lecture")),
                          user_profile=UserProfile(nickname="Ada", memory=["mixed up 1/2 and 1/3 last time"]))
    back = decode_request(read_json(encode_request(request)))
    assert back == request
    assert back.config.trigger_agent_id == "teacher" and back.config.lesson is not None
    assert back.user_profile.memory == ["mixed up 1/2 and 1/3 last time"]


def test_an_addressed_question_reaches_its_agent_through_the_server(tmp_path: Path) -> None:
    scenario = tmp_path / "ask.yaml"
    scenario.write_text("id: ask\nclass: {agents: [teacher, curious_student]}\n"
                        "messages: [\"@curious_student what do you think?\"]\n", encoding="utf-8")
    with LoopbackOpenAIServer([reply("I think it is blue."), decision("USER")]) as model, \
            ServeProcess("--model", "openai/loopback", "--api-base", model.base_url) as server:
        out = tmp_path / "out"
        result = CliRunner().invoke(app, ["run", str(scenario), "--out", str(out), "--plain", "--model",
                                          "openai/loopback", "--server", server.url])
        assert result.exit_code == 0, result.output
        first_call = model.requests[0]
    run = json.loads(next((out / "runs").glob("*.json")).read_text(encoding="utf-8"))
    assert run["rounds"][0]["speakers"] == ["curious_student"]  # the trigger crossed the wire: no director call
    assert "Mia" in json.dumps(first_call["messages"])[:4000]


def post_turn(url: str) -> bytes:
    import urllib.request

    from maic_cli.engine.models import Message, MessagePart, TurnConfig, TurnRequest
    from maic_cli.serve.wire import encode_request

    body = encode_request(TurnRequest(messages=[Message(role="user", parts=[MessagePart(kind="text", text="Why?")])],
                                      config=TurnConfig(agent_ids=["teacher"])))
    with urllib.request.urlopen(urllib.request.Request(url + "/v1/turn", data=body, method="POST"), timeout=60) as r:
        data: bytes = r.read()
    return data


def test_serve_spreads_its_calls_with_a_router_file_and_stops_cleanly_on_sigterm(tmp_path: Path) -> None:
    with LoopbackOpenAIServer(default=reply("From a.")) as one, LoopbackOpenAIServer(default=reply("From b.")) as two:
        router = tmp_path / "router.yaml"
        router.write_text(f"""model_list:
  - model_name: classroom
    litellm_params: {{model: openai/loopback-a, api_base: "{one.base_url}", api_key: sk-a}}
  - model_name: classroom
    litellm_params: {{model: openai/loopback-b, api_base: "{two.base_url}", api_key: sk-b}}
router_settings:
  routing_strategy: simple-shuffle
""", encoding="utf-8")
        server = ServeProcess("--router", str(router), "--model", "classroom", "--director", "rules").start()
        try:
            said_here = [post_turn(server.url) for _ in range(12)]
        finally:
            code = server.stop()
        assert one.requests and two.requests and len(one.requests) + len(two.requests) == 12
    assert all(b'"type":"done"' in body for body in said_here)
    assert code == 0  # SIGTERM: listening stops, what was open finishes, exit 0


def test_a_port_in_use_is_one_line_exit_2() -> None:
    with ServeProcess("--model", "demo") as first:
        result = CliRunner().invoke(app, ["serve", "--model", "demo", "--port", str(first.port)])
    assert result.exit_code == 2 and "cannot listen" in result.output
