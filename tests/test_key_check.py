"""A hosted model with no API key is refused before anything starts (llm/keys.py, litellm's own check):
one line naming the variable, exit 2, nothing written, no request, no HTTP status."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from maic_cli.cli.app import app
from maic_cli.llm.keys import check_key, missing_keys
from maic_cli.llm.spec import ModelSpec
from maic_cli.testing.openai_server import LoopbackOpenAIServer
from tests.helpers import decision, reply

runner = CliRunner()
PROVIDER_KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GROQ_API_KEY", "MISTRAL_API_KEY",
                 "DEEPSEEK_API_KEY", "AZURE_API_KEY")
SCENARIO = """\
id: sky
title: The sky
class:
  agents: [teacher]
messages:
  - Why is the sky blue?
"""


@pytest.fixture(autouse=True)
def no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in PROVIDER_KEYS:
        monkeypatch.delenv(key, raising=False)


def files_under(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file())


def assert_refused(result: object, variable: str, flag: str = "--model") -> None:
    assert result.exit_code == 2, result.output  # type: ignore[attr-defined]
    lines = result.stderr.strip().splitlines()  # type: ignore[attr-defined]
    assert len(lines) == 1, lines
    assert variable in lines[0] and flag in lines[0] and "HTTP" not in lines[0]


def test_litellm_names_the_variable_a_provider_needs(monkeypatch: pytest.MonkeyPatch) -> None:
    assert missing_keys(ModelSpec.parse("openai/gpt-4o-mini")) == ["OPENAI_API_KEY"]
    assert "ANTHROPIC_API_KEY" in missing_keys(ModelSpec.parse("anthropic/claude-3-5-haiku-latest"))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    assert missing_keys(ModelSpec.parse("openai/gpt-4o-mini")) == []


@pytest.mark.parametrize("model", ["local", "demo", "scripted:x.yaml", "replay:x.jsonl"])
def test_models_without_a_provider_are_not_checked(model: str) -> None:
    assert missing_keys(ModelSpec.parse(model)) == []


def test_a_server_of_ones_own_or_an_explicit_key_is_not_checked() -> None:
    assert missing_keys(ModelSpec.parse("openai/gpt-4o-mini"), api_base="http://127.0.0.1:8080/v1") == []
    assert missing_keys(ModelSpec.parse("openai/gpt-4o-mini"), api_key="sk-given") == []
    check_key(ModelSpec.parse("openai/gpt-4o-mini"), api_base="http://127.0.0.1:8080/v1")  # no error


def test_chat_without_the_key_writes_no_session(maic_home: Path, tmp_path: Path) -> None:
    result = runner.invoke(app, ["chat", "--model", "openai/gpt-4o-mini"], input="hello\n")
    assert_refused(result, "OPENAI_API_KEY")
    assert files_under(maic_home) == []


def test_chat_on_a_resumed_session_whose_model_has_no_key(maic_home: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    script = tmp_path / "script.yaml"
    script.write_text(json.dumps([decision("teacher"), reply("Hi."), decision("USER")]), encoding="utf-8")
    session = tmp_path / "s.json"
    assert runner.invoke(app, ["chat", "--model", f"scripted:{script}", "--session", str(session)],
                         input="hi\n").exit_code == 0
    before = session.read_bytes()
    result = runner.invoke(app, ["chat", "--model", "anthropic/claude-3-5-haiku-latest", "--session", str(session)],
                           input="hello\n")
    assert_refused(result, "ANTHROPIC_API_KEY")
    assert session.read_bytes() == before


def test_run_without_the_key_claims_no_folder(tmp_path: Path) -> None:
    scenario = tmp_path / "sky.yaml"
    scenario.write_text(SCENARIO, encoding="utf-8")
    out = tmp_path / "out"
    result = runner.invoke(app, ["run", str(scenario), "--model", "openai/gpt-4o-mini", "--out", str(out), "--plain"])
    assert_refused(result, "OPENAI_API_KEY")
    assert not out.exists()


def test_a_judge_without_its_key_is_refused_before_the_runs(tmp_path: Path) -> None:
    scenario = tmp_path / "sky.yaml"
    scenario.write_text(SCENARIO, encoding="utf-8")
    script = tmp_path / "script.yaml"
    script.write_text(json.dumps([decision("teacher"), reply("Rayleigh."), decision("USER")]), encoding="utf-8")
    out = tmp_path / "out"
    result = runner.invoke(app, ["run", str(scenario), "--model", f"scripted:{script}", "--judge",
                                 "openai/gpt-4o-mini", "--out", str(out), "--plain"])
    assert_refused(result, "OPENAI_API_KEY", flag="--judge")
    assert not out.exists()


def test_lesson_new_without_the_key_writes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "lesson.yaml"
    result = runner.invoke(app, ["lesson", "new", "photosynthesis", "--model", "openai/gpt-4o-mini",
                                 "--out", str(out)])
    assert_refused(result, "OPENAI_API_KEY")
    assert not out.exists()


def test_with_the_key_set_the_class_starts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           loopback_server: LoopbackOpenAIServer) -> None:
    """The check passes a key it finds; the call then goes where it goes (here: a loopback server)."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    loopback_server.enqueue(decision("teacher"), reply("Hello."), decision("USER"))
    result = runner.invoke(app, ["chat", "--model", "openai/gpt-4o-mini", "--api-base", loopback_server.base_url,
                                 "--director", "llm", "--session", str(tmp_path / "s.json")], input="hi\n")
    assert result.exit_code == 0, result.output


def test_a_key_refused_by_the_client_invents_no_http_status() -> None:
    """litellm reports the client's own refusal (no request sent) with status 500: not shown as HTTP 500."""
    from maic_cli.llm.openai_compat import to_llm_error

    class AuthenticationError(Exception):
        status_code = 500

    refused = AuthenticationError("litellm.AuthenticationError: The api_key client option must be set either by "
                                  "passing api_key to the client or by setting the OPENAI_API_KEY environment variable")
    error = to_llm_error(refused, "openai/gpt-4o-mini", started=False)
    assert error.kind == "auth" and "HTTP" not in str(error) and "OPENAI_API_KEY" in str(error)

    class ServerSaid(Exception):
        status_code = 401

    assert "(HTTP 401)" in str(to_llm_error(ServerSaid("AuthenticationError: invalid key"), "openai/x", started=False))
