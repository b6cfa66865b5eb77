"""ModelSpec: a model string parsed once."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from maic_cli.cli.app import app
from maic_cli.llm.spec import ModelSpec
from tests.helpers import decision, reply


@pytest.mark.parametrize(("model", "kind", "real", "compact"), [
    ("openai/gpt-4o-mini", "litellm", True, False),
    ("ollama/llama3.1", "litellm", True, False),
    ("openai/smollm2", "litellm", True, True),  # the built-in model served by a llama.cpp server
    ("local", "local", False, True),
    ("smollm2", "local", False, True),
    ("demo", "demo", False, False),
    ("scripted:tests/x.yaml", "scripted", False, False),
    ("replay:t.jsonl", "replay", False, False),
])
def test_a_model_string_gives_its_kind_and_whether_it_is_real_and_compact(model: str, kind: str, real: bool,
                                                                          compact: bool) -> None:
    spec = ModelSpec.parse(model)
    assert (spec.kind, spec.is_real, spec.compact_prompts) == (kind, real, compact)
    assert spec.uses_litellm == (kind == "litellm")


def test_how_it_is_served_changes_the_kind_of_a_litellm_string_only() -> None:
    assert ModelSpec.parse("openai/m", client="direct").kind == "direct"
    assert ModelSpec.parse("openai/m", router=True).kind == "router"
    assert ModelSpec.parse("demo", client="direct").kind == "demo"
    assert ModelSpec.parse("scripted:a.yaml", router=True).kind == "scripted"
    assert not ModelSpec.parse("openai/m", client="direct").uses_litellm


def test_files_names_and_slugs() -> None:
    spec = ModelSpec.parse("scripted:scripts/qa class.yaml")
    assert spec.file == Path("scripts/qa class.yaml")
    assert spec.slug == "scripted-qa-class"
    assert "canned replies" in spec.produced_by
    assert ModelSpec.parse("openai/gpt-4o-mini").slug == "openai-gpt-4o-mini"
    assert ModelSpec.parse("openai/gpt-4o-mini").file is None
    assert ModelSpec.parse("local").produced_by.startswith("offline model")
    assert ModelSpec.parse("openai/gpt-4o-mini").produced_by == "litellm model openai/gpt-4o-mini"


# -- parsed once, where the user gave it ------------------------------------------------------------------------


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[str]:
    """Every model string :meth:`ModelSpec.parse` reads from here on."""
    seen: list[str] = []
    real = ModelSpec.parse.__func__  # type: ignore[attr-defined]

    def counting(cls: type[ModelSpec], /, model: str, **kwargs: Any) -> ModelSpec:
        seen.append(model)
        result: ModelSpec = real(cls, model, **kwargs)
        return result

    monkeypatch.setattr(ModelSpec, "parse", classmethod(counting))
    monkeypatch.setenv("MAIC_HOME", str(tmp_path / "home"))
    return seen


def _script(tmp_path: Path, rounds: int) -> str:
    path = tmp_path / "script.json"
    path.write_text(json.dumps([decision("teacher"), reply("Hi."), decision("END")] * rounds), encoding="utf-8")
    return f"scripted:{path}"


def _chat(*args: str, stdin: str) -> Result:
    result = CliRunner().invoke(app, ["chat", *args], input=stdin)
    assert result.exit_code == 0, result.output
    return result


def test_a_chat_parses_its_model_once_however_many_rounds(tmp_path: Path, parses: list[str]) -> None:
    model = _script(tmp_path, 3)
    _chat("--model", model, "--session", str(tmp_path / "s.json"), stdin="one\ntwo\nthree\n")
    assert parses == [model]  # not once for the key check, the notice, the client, the transcript, the runner


def test_a_resumed_chat_parses_the_model_once(tmp_path: Path, parses: list[str]) -> None:
    model = _script(tmp_path, 2)
    _chat("--model", model, "--session", str(tmp_path / "s.json"), stdin="one\n")
    parses.clear()
    _chat("--model", model, "--session", str(tmp_path / "s.json"), stdin="two\n")
    assert parses == [model]


def test_a_model_switch_is_parsed_once_and_serves_the_next_round(tmp_path: Path, parses: list[str]) -> None:
    model = _script(tmp_path, 1)
    result = _chat("--model", "demo", "--session", str(tmp_path / "s.json"), stdin=f"/model {model}\nhello\n")
    assert parses == ["demo", model]
    assert "Hi." in result.stdout  # the scripted model answered after the switch


def test_a_lesson_grades_with_the_spec_it_was_given(tmp_path: Path, parses: list[str]) -> None:
    from maic_cli.store.session import load_session

    _chat("--model", "demo", "--lesson", "photosynthesis", "--session", str(tmp_path / "s.json"),
          stdin="\n" * 12 + "a\n" * 6)
    answers = load_session(tmp_path / "s.json").lesson.progress.answers  # type: ignore[union-attr]
    assert answers  # a quiz was answered and graded …
    assert parses == ["demo"]  # … without the grader parsing the client's name again


def test_a_watched_learner_and_the_class_each_parse_their_model_once(tmp_path: Path, parses: list[str]) -> None:
    learner = tmp_path / "learner.json"
    learner.write_text(json.dumps(["Why is 1/2 + 1/3 not 2/5?", "Got it, thanks! <done>"]), encoding="utf-8")
    teacher = _script(tmp_path, 2)
    _chat("--watch", "fraction_mixup", "--learner-model", f"scripted:{learner}", "-m", teacher, "--agents", "teacher",
          "--plain", "-s", str(tmp_path / "s.json"), stdin="")
    assert sorted(parses) == sorted([f"scripted:{learner}", teacher])
