"""ModelSpec: a model string parsed once."""

from __future__ import annotations

from pathlib import Path

import pytest

from maic_cli.llm.spec import ModelSpec


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
