"""``maic serve`` attacked through what a body says: JSON deep, wide, of absurd numbers, ``NaN``, lone
surrogates, NUL and terminal escapes; every field of a turn of the wrong type; a format from the future; a
director state forged; a turn that fails inside; a request that names a model, a key, an address, a director
hook or a prompt folder (never honoured); and OpenMAIC's ``/api/chat`` with its model fields pointed at a
decoy and forty slides of hostile HTML — each against a real ``maic serve`` on the loopback model."""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from maic_cli.serve.limits import MAX_STRING
from maic_cli.testing.openai_server import LoopbackOpenAIServer, ServedReply
from maic_cli.testing.serve_process import ServeProcess
from tests.helpers import reply

from .openmaic_shapes import GENERATED_AGENTS, SLIDE_SCENE, client_events, qa_request
from .serve_hostile import GOOD, TOKEN, alive, cpu_seconds, mutated, post, turn_ends_with_done

ANSWER = "Light scatters."


@pytest.fixture(scope="module")
def model() -> Iterator[LoopbackOpenAIServer]:
    with LoopbackOpenAIServer(default=reply(ANSWER)) as server:
        yield server


@pytest.fixture(scope="module")
def served(model: LoopbackOpenAIServer) -> Iterator[ServeProcess]:
    with ServeProcess("--model", "openai/loopback", "--api-base", model.base_url, "--director", "rules",
                      env={"MAIC_SERVE_TOKEN": TOKEN, "OPENAI_API_KEY": "sk-server-key-for-hostile-json"}
                      ) as server:
        yield server


def _strict(text: bytes) -> Any:
    """JSON as a browser's ``JSON.parse`` reads it: no NaN, no Infinity, UTF-8 only."""
    def refuse(name: str) -> Any:
        raise ValueError(f"{name} is not JSON")
    return json.loads(text.decode("utf-8"), parse_constant=refuse)


def _answered_cleanly(status: int, body: bytes, path: str = "/v1/turn") -> None:
    """A 4xx of one JSON line, or a 200 stream whose every frame is strict JSON, ending with ``done``."""
    if status != 200:
        assert 400 <= status < 500, body[:300]
        _strict(body)
        return
    frames = [f[6:] for f in body.split(b"\n\n") if f.startswith(b"data: ")]
    events = [_strict(frame) for frame in frames]
    assert events and events[-1]["type"] == "done", body[-300:]
    if path == "/v1/turn":
        assert turn_ends_with_done(body)


def _chat(served: ServeProcess, body: Any) -> tuple[int, bytes]:
    data = body if isinstance(body, bytes) else json.dumps(body, allow_nan=True).encode()
    return post(served, data, path="/api/chat")


@pytest.mark.parametrize("path", ["/v1/turn", "/api/chat"])
@pytest.mark.parametrize(("name", "body", "status"), [
    ("depth 10,000 of lists", b"[" * 10_000 + b"]" * 10_000, 400),
    ("depth 10,000 of objects", b'{"a":' * 10_000 + b"1" + b"}" * 10_000, 400),
    ("a million items", b"[" + b"0," * 1_000_000 + b"0]", 413),
    ("100k agents", json.dumps({"version": 1, "request": {"config": {"agent_ids": [f"a{i}" for i in range(100_000)]}},
                               "config": {"agentIds": [f"a{i}" for i in range(100_000)]}}).encode(), 413),
    ("a persona of 10 MB", json.dumps({"persona": "p" * 3_000_000}).encode(), 413),
    ("an integer of 5,000 digits", b'{"version": ' + b"9" * 5000 + b"}", 400),
])
def test_bodies_past_the_bounds_are_refused(served: ServeProcess, path: str, name: str, body: bytes,
                                            status: int) -> None:
    answer, text = post(served, body, path=path)
    assert answer == status, (name, text[:300])
    _strict(text)


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity", "1e999999", "-1e999999"])
def test_non_finite_numbers_never_come_back_as_invalid_json(served: ServeProcess, literal: str) -> None:
    """Python's JSON reads ``NaN`` and ``1e999999`` (as inf); a browser's cannot read either back.  Sent where
    a turn echoes them (a whiteboard action's params in the director state), the answer is a 4xx or a stream
    whose every frame a browser can parse — never a ``done`` its client drops, waiting forever."""
    ledger = [{"actionName": "wb_draw_text", "agentId": "default-1", "params": {"content": "hi", "x": 0, "y": 0}}]
    body = qa_request()
    body["directorState"] = {"turnCount": 1, "agentResponses": [], "whiteboardLedger": ledger}
    text = json.dumps(body).replace('"x": 0', f'"x": {literal}')
    _answered_cleanly(*_chat(served, text.encode()), path="/api/chat")
    wire = mutated(lambda r: r.update(director_state={"turn_count": 0, "whiteboard_ledger": [
        {"action_name": "wb_draw_text", "agent_id": "teacher", "agent_name": "T", "params": {"x": 0}}]}))
    _answered_cleanly(*post(served, wire.replace(b'"x": 0', f'"x": {literal}'.encode())))
    created = mutated(lambda r: r["messages"][0].update(created_at=0))
    _answered_cleanly(*post(served, created.replace(b'"created_at": 0', f'"created_at": {literal}'.encode())))


def test_lone_surrogates_never_cut_a_stream(served: ServeProcess) -> None:
    """``\\ud800`` alone is valid JSON and no text: echoed into a ``done`` it must not break the stream."""
    body = mutated(lambda r: r.update(director_state={"turn_count": 0, "agent_responses": [
        {"agent_id": "curious_student", "agent_name": "Kai \ud800", "content_preview": "cut \ud83d",
         "action_count": 0, "whiteboard_actions": []}]}))
    _answered_cleanly(*post(served, body))
    body = mutated(lambda r: r["messages"][0]["parts"][0].update(text="half \udc00 a pair"))
    _answered_cleanly(*post(served, body))
    chat = qa_request()
    chat["userProfile"] = {"nickname": "B\udc00b", "bio": "\ud800"}
    chat["messages"][0]["parts"][0]["text"] = "why \ud800?"
    _answered_cleanly(*_chat(served, chat), path="/api/chat")


def test_a_preview_cut_mid_emoji_by_a_browser_is_played(served: ServeProcess) -> None:
    """OpenMAIC's client cuts an agent's words for ``contentPreview``; cut inside an emoji, a lone surrogate
    is what JSON.stringify sends.  The class goes on."""
    chat = qa_request()
    chat["directorState"] = {"turnCount": 1, "agentResponses": [
        {"agentId": "default-1", "agentName": "Ms. Rivera", "contentPreview": "Good question \ud83d",
         "actionCount": 0, "whiteboardActions": []}], "whiteboardLedger": []}
    status, body = _chat(served, chat)
    assert status == 200
    _answered_cleanly(status, body, "/api/chat")


def test_nul_and_terminal_escapes_reach_neither_the_log_nor_break_a_turn(served: ServeProcess) -> None:
    nasty = "\x00\x1b]0;owned\x07\x1b[2J\x1b]52;c;cHduZWQ=\x07\x9b31m\x1b]8;;http://evil.test\x1b\\"
    body = mutated(lambda r: (r["messages"][0]["parts"][0].update(text=f"why{nasty}?"),
                              r["user_profile"].update(nickname=f"Bob{nasty}"),
                              r["config"].update(language=nasty)))
    _answered_cleanly(*post(served, body))
    agents = copy.deepcopy(GENERATED_AGENTS)
    agents[0]["name"] = f"Lin{nasty}"
    agents[0]["persona"] = nasty * 100
    chat = qa_request(agent_ids=tuple(a["id"] for a in agents))
    chat["config"]["agentConfigs"] = agents
    _answered_cleanly(*_chat(served, chat), path="/api/chat")
    log = served.log()
    assert "\x1b" not in log and "\x00" not in log and "\x07" not in log and "\x9b" not in log


def test_duplicate_keys_are_read_one_way(served: ServeProcess) -> None:
    text = GOOD.decode().replace('"version": 1', '"version": 2, "version": 1', 1)
    status, body = post(served, text.encode())
    assert status == 200 and turn_ends_with_done(body)
    text = GOOD.decode().replace('"version": 1', '"version": 1, "version": 2', 1)
    assert post(served, text.encode())[0] == 400


def _leaves(value: Any, trail: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield (*trail, key)
            yield from _leaves(item, (*trail, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield (*trail, index)
            yield from _leaves(item, (*trail, index))


WRONG = [None, -1, 10**30, 1.5, "x" * 300, True, [], {}, [None], {"": None}]


def test_every_field_of_the_wrong_type_is_a_4xx_or_a_whole_turn(served: ServeProcess) -> None:
    """Each field of a good request, in turn, replaced by each wrong kind of value: never a 500, never a
    stream cut short."""
    good = json.loads(GOOD)
    seen = 0
    for trail in _leaves(good):
        for wrong in WRONG:
            data = copy.deepcopy(good)
            target = data
            for key in trail[:-1]:
                target = target[key]
            target[trail[-1]] = wrong
            status, body = post(served, json.dumps(data).encode())
            assert status in (200, 400, 413, 422), (trail, wrong, body[:200])
            _answered_cleanly(status, body)
            seen += 1
    assert seen > 200
    assert alive(served)


@pytest.mark.parametrize("version", [2, 0, -1, "1", True, None, 1.5, 10**100, [1], {"v": 1}])
def test_a_format_from_elsewhere_is_400(served: ServeProcess, version: Any) -> None:
    data = json.loads(GOOD)
    data["version"] = version
    status, body = post(served, json.dumps(data).encode())
    assert status == 400 and b"version" in body, body[:200]


@pytest.mark.parametrize("turn_count", [-5, -(10**18), 10**18, 10**300])
def test_a_forged_director_state_is_one_whole_turn(served: ServeProcess, turn_count: int) -> None:
    body = mutated(lambda r: r.update(director_state={"turn_count": turn_count, "agent_responses": [
        {"agent_id": "someone-else", "agent_name": "Another room", "content_preview": "x", "action_count": -3,
         "whiteboard_actions": []}]}))
    _answered_cleanly(*post(served, body))


def test_nothing_of_one_request_reaches_the_next(served: ServeProcess, model: LoopbackOpenAIServer) -> None:
    """Stateless: a forged or crafted request cannot read another learner's class through the server."""
    secret = "the-other-learners-secret-4242"
    first = mutated(lambda r: (r["messages"][0]["parts"][0].update(text=f"My password is {secret}"),
                               r["user_profile"].update(nickname=secret[:20])))
    assert post(served, first)[0] == 200
    before = len(model.requests)
    forged = mutated(lambda r: r.update(director_state={"turn_count": 0, "agent_responses": [],
                                                        "whiteboard_ledger": []}))
    status, body = post(served, forged)
    assert status == 200 and secret.encode() not in body
    assert model.requests[before:] and secret not in json.dumps(model.requests[before:])


def test_a_turn_that_fails_inside_still_ends_with_error_then_done(served: ServeProcess) -> None:
    """A persona within the body's bounds but past what a prompt may hold fails the turn on the server: the
    stream says so and ends with ``done``, as in process, and the metrics count an error, not a cancel."""
    body = mutated(lambda r: r["config"].update(agent_configs={"teacher": {
        "id": "teacher", "name": "T", "role": "teacher", "persona": "p" * (MAX_STRING - 10)}}))
    status, text = post(served, body)
    assert status in (200, 413, 422), text[:200]
    if status == 200:
        _answered_cleanly(status, text)
        assert b'"type":"error"' in text
    assert alive(served)


def test_a_request_never_chooses_a_director_hook(tmp_path: Path, model: LoopbackOpenAIServer) -> None:
    """``config.director`` naming ``module:function`` is a name, never code: the module (importable by the
    server) is not imported, its function never called."""
    marker = tmp_path / "imported"
    (tmp_path / "hostile_hook_mod.py").write_text(
        f"from pathlib import Path\nPath({str(marker)!r}).write_text('imported')\n"
        "def pick(*args, **kwargs):\n    Path(" + repr(str(marker)) + ").write_text('called')\n    return None\n",
        encoding="utf-8")
    path = os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH", "")]))
    with ServeProcess("--model", "openai/loopback", "--api-base", model.base_url,
                      env={"PYTHONPATH": path, "MAIC_SERVE_TOKEN": ""}) as server:
        for name in ("hostile_hook_mod:pick", "hostile_hook_mod", "hostile_hook_mod.pick"):
            data = json.loads(GOOD)
            data["request"]["config"]["director"] = name
            status, text = post(server, json.dumps(data).encode(), token=None)
            _answered_cleanly(status, text)
    assert not marker.exists()


def test_a_request_never_names_a_prompt_folder(served: ServeProcess, model: LoopbackOpenAIServer,
                                               tmp_path: Path) -> None:
    folder = tmp_path / "prompts" / "agent"
    folder.mkdir(parents=True)
    (folder / "system.j2").write_text("PROMPT-FROM-THE-REQUEST-777", encoding="utf-8")
    before = len(model.requests)
    body = mutated(lambda r: (r.update(prompts=str(tmp_path / "prompts"), prompt_dir=str(tmp_path / "prompts")),
                              r["config"].update(prompts=str(tmp_path / "prompts"), style="../../../etc")))
    status, text = post(served, body)
    assert status in (200, 422), text[:200]
    assert "PROMPT-FROM-THE-REQUEST-777" not in json.dumps(model.requests[before:])


def test_openmaics_model_fields_in_every_spelling_dial_nothing(served: ServeProcess) -> None:
    key = "sk-browser-key-in-every-spelling-00"
    with LoopbackOpenAIServer(default="[]") as decoy:
        chat = qa_request()
        fields = {"apiKey": key, "baseUrl": decoy.base_url, "baseURL": decoy.base_url, "model": "openai:decoy",
                  "providerType": "openai", "api_base": decoy.base_url, "api_key": key,
                  "providerOptions": {"baseURL": decoy.base_url, "apiKey": key},
                  "thinkingConfig": {"enabled": True}, "webSearch": {"enabled": True, "endpoint": decoy.base_url}}
        chat.update(fields)
        chat["config"].update(fields)
        chat["userProfile"] = {"nickname": "Ana", **fields}
        status, body = _chat(served, chat)
        _answered_cleanly(status, body, "/api/chat")
        assert status == 200
        assert decoy.requests == [] and decoy.headers == []
    assert key.encode() not in body and key not in served.log()


HOSTILE_HTML = [
    "<div>" * 20_000,
    "<table><tr><td>" * 6_000,
    "&amp;" * 20_000 + "&#x1b;[31m&#0;&#xd800;",
    "<script>fetch('http://evil.test')</script><img src=x onerror=alert(1)><style>*{}</style>" * 800,
    "<!--" + "-" * 90_000,
    "<![CDATA[" * 10_000,
    "<svg><foreignObject><iframe src=javascript:alert(1)>" * 1_500,
    "<p>" + "\u202e\u200b\u2066" * 20_000 + "</p>",
]


def test_forty_slides_of_hostile_html_are_a_bounded_turn(served: ServeProcess) -> None:
    scenes = []
    for i in range(40):
        scene = copy.deepcopy(SLIDE_SCENE)
        scene["id"], scene["order"] = f"scene-{i}", i
        scene["content"]["canvas"]["elements"][1]["content"] = HOSTILE_HTML[i % len(HOSTILE_HTML)][:80_000]
        scenes.append(scene)
    chat = qa_request()
    chat["storeState"]["scenes"] = scenes
    chat["storeState"]["currentSceneId"] = "scene-3"
    before = cpu_seconds(served)
    status, body = _chat(served, chat)
    spent = cpu_seconds(served) - before
    assert status in (200, 413), body[:200]
    if status == 200:
        _answered_cleanly(status, body, "/api/chat")
        assert [e["type"] for e in client_events(body)][-1] == "done"
    assert spent < 5, f"{spent:.1f} s of server CPU for one request"
    assert "\x1b" not in served.log()
    assert alive(served)


MODEL_ATTACKS = [
    json.dumps([{"type": "text", "content": "half \ud800 a pair"}]),
    '[{"type":"action","name":"wb_draw_text","params":{"content":"x","x":NaN,"y":1e999}},'
    '{"type":"text","content":"fine"}]',
    json.dumps([{"type": "text", "content": "\x1b]0;pwn\x07\x1b[2J red \x00 nul \x9b31m"}]),
    json.dumps([{"type": "text", "content": "la " * 200_000}]),
    '[{"type":"text","content":"cut',
    "not json at all \x1b[31m",
]


def test_a_hostile_model_never_breaks_a_stream(model: LoopbackOpenAIServer) -> None:
    """The model's text is untrusted too: lone surrogates, NaN in an action, escapes, a reply of 600,000
    characters, a reply cut short, no JSON at all.  Each route's stream is strict JSON and ends with done, and
    nothing of it reaches the log."""
    replies = [ServedReply(text=text, chunk_size=4096) for text in MODEL_ATTACKS]
    with LoopbackOpenAIServer(replies=[*replies, *replies]) as hostile, \
            ServeProcess("--model", "openai/hostile", "--api-base", hostile.base_url, "--director", "rules",
                         env={"MAIC_SERVE_TOKEN": "", "OPENAI_API_KEY": "sk-server-key-for-hostile-json"}) as server:
        for path in ("/v1/turn", "/api/chat"):
            for _ in MODEL_ATTACKS:
                body = GOOD if path == "/v1/turn" else json.dumps(qa_request()).encode()
                status, text = post(server, body, path=path, token=None, timeout=60)
                assert status == 200, text[:200]
                _answered_cleanly(status, text, path)
        log = server.log()
    assert "\x1b" not in log and "\x00" not in log and "pwn" not in log


def test_text_that_looks_like_frames_stays_inside_its_frame(served: ServeProcess) -> None:
    """A name or a line carrying ``\\n\\ndata: {"type":"done"}`` (or a bare CR, which ends a line for an
    event-stream parser) is escaped inside its JSON: the stream has exactly one ``done``, its last frame."""
    fake = '\n\ndata: {"type":"done"}\n\n\r\rdata: {"type":"error","message":"x"}\r\n\r\n'
    agents = copy.deepcopy(GENERATED_AGENTS)
    agents[1]["name"] = f"Kai{fake}"[:190]
    chat = qa_request(question=f"why{fake}?", agent_ids=tuple(a["id"] for a in agents))
    chat["config"]["agentConfigs"] = agents
    status, body = _chat(served, chat)
    assert status == 200 and b"\r" not in body
    frames = [f for f in body.split(b"\n\n") if f]
    assert all(f.startswith((b"data: {", b":")) and b"\n" not in f for f in frames)
    assert [json.loads(f[6:])["type"] for f in frames if f.startswith(b"data: ")].count("done") == 1
    wire = mutated(lambda r: (r["messages"][0]["parts"][0].update(text=fake),
                              r["user_profile"].update(nickname=fake[:40])))
    status, body = post(served, wire)
    assert status == 200 and b"\r" not in body
    frames = [f for f in body.split(b"\n\n") if f]
    assert all(f.startswith((b"data: {", b":")) and b"\n" not in f for f in frames)
    assert [json.loads(f[6:])["type"] for f in frames if f.startswith(b"data: ")].count("done") == 1


def _peak_kb(server: ServeProcess) -> int:
    assert server.process is not None
    status = Path(f"/proc/{server.process.pid}/status").read_text()
    return int(next(line for line in status.splitlines() if line.startswith("VmHWM")).split()[1])


def test_twenty_heavy_bodies_at_once_are_bounded_in_memory() -> None:
    """Twenty requests of 4 MB each at once, on a slow model: each parsed body weighs about 26 MB while its turn
    runs, so the instance serves what its budget of bodies holds and answers the rest 503 (ask again) — its
    memory stays bounded instead of growing with the number of heavy requests."""
    import threading

    data = json.loads(GOOD)
    data["request"]["director_state"] = {"turn_count": 0, "agent_responses": [
        {"agent_id": "teacher", "agent_name": "T", "content_preview": "c" * 100, "action_count": 0,
         "whiteboard_actions": []} for _ in range(19_000)]}
    body = json.dumps(data).encode()
    with LoopbackOpenAIServer(default=ServedReply(text=reply(ANSWER), latency=3.0)) as slow, \
            ServeProcess("--model", "openai/slow", "--api-base", slow.base_url, "--director", "rules",
                         env={"MAIC_SERVE_TOKEN": "", "OPENAI_API_KEY": "sk-server-key-for-hostile-json"}) as server:
        before = _peak_kb(server)
        statuses: list[int] = []

        def one() -> None:
            status, text = post(server, body, token=None, timeout=120)
            if status == 200:
                _answered_cleanly(status, text)
            statuses.append(status)

        threads = [threading.Thread(target=one) for _ in range(20)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(150)
        grown_mb = (_peak_kb(server) - before) / 1024
        assert alive(server, token=None)
    assert sorted(set(statuses)) == [200, 503], statuses
    assert grown_mb < 320, f"{grown_mb:.0f} MB for twenty heavy requests"
