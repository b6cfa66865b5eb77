"""maic's own prompt templates render outside the sandbox, a user's inside it, to the same text
(engine/prompt_set.py): the built-in set is code we ship, pinned by tests/golden/."""

from __future__ import annotations

import enum
from pathlib import Path

import pytest

from maic_cli.engine import prompt_set
from maic_cli.engine.prompt_set import MAX_RENDERED_CHARS, PromptError, PromptSet, TemplateSource
from maic_cli.store.prompts import load_prompt_set
from tests import test_prompt_templates as golden


def sandboxed_copy(prompts: PromptSet) -> PromptSet:
    """The same templates, as a user's set is rendered (a set made from sources is never trusted)."""
    return PromptSet({name: prompts.source(name) for name in prompts.names}, prompts.name)


def test_only_the_unchanged_builtin_set_leaves_the_sandbox(tmp_path: Path) -> None:
    builtin = PromptSet.builtin()
    assert not builtin.sandboxed
    assert sandboxed_copy(builtin).sandboxed
    assert builtin.with_overrides({}, "empty folder").sandboxed
    (tmp_path / "snippets").mkdir()
    (tmp_path / "snippets" / "speech.md").write_text("Speak plainly.\n")
    assert load_prompt_set(tmp_path).sandboxed


@pytest.mark.parametrize("case", ["qa-first-turn", "qa-later-turn", "discussion"])
@pytest.mark.parametrize("role", list(golden.SPEAKERS))
def test_golden_prompts_render_the_same_inside_the_sandbox(monkeypatch: pytest.MonkeyPatch, role: str,
                                                           case: str) -> None:
    outside = golden.director_prompt(case, False), golden.agent_messages(role, "qa", False)
    copy = sandboxed_copy(PromptSet.builtin())
    monkeypatch.setattr(prompt_set, "_builtin", lambda: copy)
    assert PromptSet.builtin().sandboxed
    assert (golden.director_prompt(case, False), golden.agent_messages(role, "qa", False)) == outside


def test_a_data_key_named_like_a_dict_method_reads_the_same_in_and_out_of_the_sandbox() -> None:
    template = ("{{ d.name }}|{{ d.get('x') }}|{{ d.items is defined }}|{{ d['items'] }}|"
                "{{ d.missing is defined }}|{{ d.name.upper() }}")
    data = {"d": {"name": "ana", "get": "shadowed", "items": "a key", "x": 1}}
    sources = {"t.j2": TemplateSource(template, "t.j2")}
    trusted = PromptSet(sources, trusted=True)
    assert not trusted.sandboxed
    assert trusted.render("t.j2", data) == PromptSet(sources).render("t.j2", data) == \
        "ana|1|True|a key|False|ANA"


def test_a_builtin_render_is_still_held_to_the_size_limit() -> None:
    trusted = PromptSet({"t.j2": TemplateSource("{{ text }}", "maic_cli/prompts/t.j2")}, trusted=True)
    assert trusted.render("t.j2", {"text": "x" * 100}) == "x" * 100
    with pytest.raises(PromptError, match=r"maic_cli/prompts/t\.j2: renders more than"):
        trusted.render("t.j2", {"text": "x" * (MAX_RENDERED_CHARS + 1)})


class Colour(enum.StrEnum):
    RED = "red"


def test_plain_data_check_accepts_subclasses_and_names_the_first_bad_value() -> None:
    trusted = PromptSet({"t.j2": TemplateSource("{{ c }} {{ rows[0].n }}", "t.j2")}, trusted=True)
    assert trusted.render("t.j2", {"c": Colour.RED, "rows": ({"n": True},)}) == "red True"
    with pytest.raises(TypeError, match=r"data\.rows\[1\]\.n: templates get plain data only, not object"):
        trusted.render("t.j2", {"c": "red", "rows": [{"n": 1}, {"n": object()}]})
    with pytest.raises(TypeError, match="data keys must be strings"):
        trusted.render("t.j2", {"c": "red", "rows": [{1: 1}]})
