"""``maic run``'s default client follows the server: an OpenAI-compatible ``--api-base`` gets the direct
client, unless ``--client litellm`` asks otherwise; everything else goes through litellm."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from maic_cli.cli.app import app
from maic_cli.llm.spec import ModelSpec, follows_the_server
from maic_cli.testing.openai_server import LoopbackOpenAIServer
from tests.helpers import decision, reply

SCENARIO = """id: sky
class: {agents: [teacher, curious_student]}
messages: ["Why is the sky blue?"]
expect: {first_speaker: teacher}
"""
BASE = "http://127.0.0.1:8000/v1"


@pytest.mark.parametrize(("model", "api_base", "kind"), [
    ("openai/qwen", BASE, "direct"),  # vLLM, a llama.cpp server, Ollama's /v1
    ("hosted_vllm/qwen", BASE, "direct"),
    ("litellm_proxy/gpt-4o", BASE, "direct"),  # a litellm proxy
    ("openai/gpt-4o-mini", None, "litellm"),  # OpenAI itself: no --api-base
    ("ollama/llama3", "http://127.0.0.1:11434", "litellm"),  # Ollama's own API, not OpenAI's
    ("anthropic/claude-3-5-haiku", BASE, "litellm"),
    ("gpt-4o-mini", BASE, "litellm"),  # no provider named: litellm decides
    ("openai/qwen", "", "litellm"),
    ("demo", BASE, "demo"),
    ("local", BASE, "local"),
])
def test_auto_serves_an_openai_compatible_api_base_directly(model: str, api_base: str | None, kind: str) -> None:
    assert ModelSpec.parse(model, client="auto", api_base=api_base).kind == kind
    assert follows_the_server(model, api_base) == (kind == "direct")


def test_an_explicit_client_wins_and_the_old_default_is_unchanged() -> None:
    assert ModelSpec.parse("openai/qwen", client="litellm", api_base=BASE).kind == "litellm"
    assert ModelSpec.parse("anthropic/claude", client="direct", api_base=BASE).kind == "direct"
    assert ModelSpec.parse("openai/qwen", api_base=BASE).kind == "litellm"  # parse's own default: litellm
    assert ModelSpec.parse("openai/qwen", client="auto", router=True, api_base=BASE).kind == "router"


def batch(tmp_path: Path, server: LoopbackOpenAIServer, model: str, *flags: str) -> dict[str, object]:
    scenario = tmp_path / "sky.yaml"
    scenario.write_text(SCENARIO, encoding="utf-8")
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["run", str(scenario), "--model", model, "--api-base", server.base_url,
                                      "--out", str(out), "--plain", *flags])
    assert result.exit_code == 0, result.output
    report: dict[str, object] = json.loads((out / "report.json").read_text(encoding="utf-8"))
    return report


ROUND = (decision("teacher"), reply("Light scatters."), decision("USER"))


def user_agents(server: LoopbackOpenAIServer) -> set[str]:
    return {headers.get("User-Agent", "") for headers in server.headers}


def test_maic_run_with_default_flags_uses_the_direct_client_for_an_openai_compatible_server(
        tmp_path: Path) -> None:
    with LoopbackOpenAIServer(ROUND) as server:
        batch(tmp_path, server, "openai/loopback")
        assert len(server.requests) == 3
        agents = user_agents(server)
    assert agents and all("aiohttp" in agent for agent in agents)  # maic's own client posts with aiohttp
    assert all(r["model"] == "loopback" for r in server.requests)  # the provider prefix is not sent


def test_client_litellm_still_goes_through_litellm(tmp_path: Path) -> None:
    with LoopbackOpenAIServer(ROUND) as server:
        batch(tmp_path, server, "openai/loopback", "--client", "litellm")
        agents = user_agents(server)
    assert agents and not any("aiohttp" in agent for agent in agents)  # the OpenAI SDK's client, under litellm


def test_hosted_vllm_model_names_reach_the_server_without_the_prefix(tmp_path: Path) -> None:
    with LoopbackOpenAIServer(ROUND) as server:
        batch(tmp_path, server, "hosted_vllm/loopback")
        assert [r["model"] for r in server.requests] == ["loopback"] * 3
        assert all("aiohttp" in agent for agent in user_agents(server))


def test_an_unknown_client_is_refused(tmp_path: Path) -> None:
    scenario = tmp_path / "sky.yaml"
    scenario.write_text(SCENARIO, encoding="utf-8")
    result = CliRunner().invoke(app, ["run", str(scenario), "--model", "demo", "--client", "openai"])
    assert result.exit_code == 2
    assert "--client" in result.output and "auto" in result.output
