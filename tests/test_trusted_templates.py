"""maic's own prompt templates render outside the sandbox, a user's inside it, to the same text
(engine/prompt_set.py): the built-in set is code we ship, pinned by tests/golden/."""

from __future__ import annotations

import enum
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from maic_cli.engine import plain_data, prompt_set
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


def counting_generates(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every template render that actually runs Jinja2 (its name), from now on."""
    import jinja2

    runs: list[str] = []
    real = jinja2.Template.generate

    def generate(self: jinja2.Template, *args: object, **kwargs: object) -> object:
        runs.append(str(self.name))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(jinja2.Template, "generate", generate)
    return runs


def test_a_builtin_render_of_the_same_data_is_remembered(monkeypatch: pytest.MonkeyPatch) -> None:
    runs = counting_generates(monkeypatch)
    trusted = PromptSet({"t.j2": TemplateSource("{{ x }}|{{ rows }}", "t.j2")}, trusted=True)
    first = trusted.render("t.j2", {"x": 1, "rows": [{"n": "a"}]})
    assert trusted.render("t.j2", {"x": 1, "rows": [{"n": "a"}]}) == first == "1|[{'n': 'a'}]"
    assert runs == ["t.j2"]
    # Data that reads alike in JSON but not to a template is told apart: each renders its own text.
    assert [trusted.render("t.j2", {"x": x, "rows": rows}) for x, rows in
            [(1.0, [{"n": "a"}]), (True, [{"n": "a"}]), (1, ({"n": "a"},)), (1, [{"n": "b"}])]] == \
        ["1.0|[{'n': 'a'}]", "True|[{'n': 'a'}]", "1|({'n': 'a'},)", "1|[{'n': 'b'}]"]
    assert len(runs) == 5
    ordered = PromptSet({"k.j2": TemplateSource("{% for k in d %}{{ k }}{% endfor %}", "k.j2")}, trusted=True)
    assert [ordered.render("k.j2", {"d": d}) for d in ({"a": 1, "b": 2}, {"b": 2, "a": 1})] == ["ab", "ba"]


def test_a_users_set_and_data_of_subclasses_render_every_time(monkeypatch: pytest.MonkeyPatch) -> None:
    runs = counting_generates(monkeypatch)
    sources = {"t.j2": TemplateSource("{{ c }}", "t.j2")}
    user = PromptSet(sources)
    assert [user.render("t.j2", {"c": "red"}) for _ in range(2)] == ["red", "red"]
    trusted = PromptSet(sources, trusted=True)
    assert [trusted.render("t.j2", {"c": Colour.RED}) for _ in range(2)] == ["red", "red"]  # not exactly a str
    assert len(runs) == 4


def test_remembered_renders_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    trusted = PromptSet({"t.j2": TemplateSource("{{ n }}", "t.j2")}, trusted=True)
    for n in range(prompt_set.RENDER_CACHE_ENTRIES + 20):
        assert trusted.render("t.j2", {"n": n}) == str(n)
    assert len(trusted._rendered) == prompt_set.RENDER_CACHE_ENTRIES
    runs = counting_generates(monkeypatch)
    assert trusted.render("t.j2", {"n": 0}) == "0"  # the oldest went first: rendered again
    last = prompt_set.RENDER_CACHE_ENTRIES + 19
    assert trusted.render("t.j2", {"n": last}) == str(last)
    assert runs == ["t.j2"]
    big = "x" * (plain_data.RENDER_CACHE_KEY_BYTES + 1)
    assert trusted.render("t.j2", {"n": big}) == trusted.render("t.j2", {"n": big}) == big
    assert len(runs) == 3  # data past the key size is rendered, not remembered


def test_builtin_templates_render_the_same_text_for_the_same_data() -> None:
    """What remembering a render rests on: no built-in template reads anything but its data."""
    import re

    builtin = PromptSet.builtin()
    for name in builtin.names:
        text = builtin.source(name).text
        assert not re.search(r"\|\s*random\b|\brandom\(|\bnow\(", text), name


PLAIN = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=6),
                     lambda inner: st.lists(inner, max_size=3) | st.tuples(inner, inner)
                     | st.dictionaries(st.text(max_size=4), inner, max_size=3), max_leaves=10)


@settings(max_examples=200, deadline=None)
@given(st.lists(PLAIN, min_size=1, max_size=6))
def test_a_remembered_render_is_the_render_of_its_own_data(values: list[object]) -> None:
    """Whatever plain data comes (values equal in Python but not to a template, keys in another order),
    the built-in set renders what rendering it afresh gives."""
    source = {"t.j2": TemplateSource("{{ d }}|{% for k in d %}{{ k }},{% endfor %}", "t.j2")}
    trusted, afresh = PromptSet(source, trusted=True), PromptSet(source)
    for value in [*values, *reversed(values)]:
        data = {"d": value if isinstance(value, list | tuple | dict) else [value]}
        assert trusted.render("t.j2", data) == afresh.render("t.j2", data)


def test_data_of_other_types_is_refused_every_time_even_where_plain_data_was_remembered() -> None:
    trusted = PromptSet({"t.j2": TemplateSource("{{ d }}", "t.j2")}, trusted=True)
    assert trusted.render("t.j2", {"d": "x"}) == "x"
    bads: tuple[object, ...] = (b"x", bytearray(b"x"), {"x"}, frozenset(), 1j, ..., [b"x"], {"k": {"x"}})
    for bad in bads:
        for _ in range(2):
            with pytest.raises(TypeError, match="plain data only"):
                trusted.render("t.j2", {"d": bad})


def test_a_remembered_render_is_not_walked_again(monkeypatch: pytest.MonkeyPatch) -> None:
    walks: list[object] = []
    real = plain_data.plain_at_a_glance

    def counted(value: object) -> bool:
        walks.append(value)
        return real(value)

    monkeypatch.setattr(prompt_set, "plain_at_a_glance", counted)
    trusted = PromptSet({"t.j2": TemplateSource("{{ rows }}", "t.j2")}, trusted=True)
    data = {"rows": [{"n": i, "said": "x" * i} for i in range(20)]}
    first = trusted.render("t.j2", data)
    walked = len(walks)
    assert walked > 0
    assert trusted.render("t.j2", {"rows": list(data["rows"])}) == first
    assert len(walks) == walked  # the first render's data only
