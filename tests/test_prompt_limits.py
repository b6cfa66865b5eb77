"""Prompt overrides are files people share: they may not read other files, hang or exhaust memory."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest

from maic_cli.engine.prompt_set import MAX_RENDERED_CHARS, PromptError, PromptSet, TemplateSource
from maic_cli.errors import InputError
from maic_cli.store.prompts import load_prompt_set

NAME = "snippets/speech.md"  # a built-in template that every agent prompt includes


def override(tmp_path: Path, text: str, name: str = NAME) -> Path:
    folder = tmp_path / "prompts"
    (folder / name).parent.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(text, encoding="utf-8")
    return folder


def render(folder: Path, name: str = NAME) -> str:
    return load_prompt_set(folder).render(name, {})


def test_a_template_that_links_to_another_file_is_refused(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("SECRET-TOKEN", encoding="utf-8")
    folder = tmp_path / "prompts" / "snippets"
    folder.mkdir(parents=True)
    (folder / "speech.md").symlink_to(secret)
    with pytest.raises(InputError, match="link"):
        load_prompt_set(tmp_path / "prompts")


@pytest.mark.parametrize("text", [
    "{% for a in range(1000) %}{% for b in range(1000) %}{% for c in range(1000) %}{% endfor %}"
    "{% endfor %}{% endfor %}",  # 10^9 steps of nothing: stopped by the step budget
    "{% set s = 'x' * 100000 %}{% for a in s %}{% for b in s %}{% endfor %}{% endfor %}",
])
def test_an_endless_template_stops_with_one_line(tmp_path: Path, text: str) -> None:
    with pytest.raises(PromptError, match="steps"):
        render(override(tmp_path, text))


@pytest.mark.parametrize(("text", "problem"), [
    ("{{ 10 ** 4300 }}", "exponent"),
    ("{{ 'x' * 1000000000 }}", "repetition"),
    ("{{ 'x' | center(1000000000) }}", "number above"),
    ("{{ lipsum(100000000) }}", "lipsum"),
])
def test_what_would_allocate_at_c_speed_is_refused(tmp_path: Path, text: str, problem: str) -> None:
    with pytest.raises(PromptError, match=problem):
        render(override(tmp_path, text))


def test_an_ordinary_override_still_renders(tmp_path: Path) -> None:
    text = "{% for i in range(3) %}{{ i * 2 }} {% endfor %}{{ 'ab' * 2 }} {{ 2 ** 10 }} {{ 'x' | center(5) }}"
    assert render(override(tmp_path, text)) == "0 2 4 abab 1024   x"


def render_text(text: str) -> str:
    prompts = PromptSet.builtin().with_overrides({"t.j2": TemplateSource(text, "prompts/t.j2")}, "test")
    return prompts.render("t.j2", {})


def refused_small(text: str) -> str:
    """The sandbox's refusal of ``text``, checked to come before the big value was made (memory stays small)."""
    tracemalloc.start()
    try:
        with pytest.raises(PromptError) as caught:
            render_text(text)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 20 * 2**20, f"{peak:,} bytes allocated before the refusal"
    message = str(caught.value)
    assert message.startswith("prompts/t.j2:1:") and "\n" not in message
    return message


@pytest.mark.parametrize(("text", "problem"), [
    ("{{ (((10**64)**64)**64)**64 }}", "exponent too large"),
    ("{{ (2**4000) * (2**4000) }}", "product"),
    ("{{ '%0999999999d' % 1 }}", "% width"),
    ("{{ '%*d' % (999999999, 1) }}", "% width"),
    ("{{ '%0999999999d' | format(1) }}", "% width"),
    ("{{ '{:>999999999}'.format(1) }}", "format width"),
    ("{{ '{:{}}'.format(1, 999999999) }}", "nested field"),
    ("{{ '{x:>999999999}'.format_map({'x': 1}) }}", "format width"),
    ("{% set s = 'x' * 100000 %}{{ s | replace('', s) }}", "replace result"),
    ("{% set s = 'x' * 100000 %}{{ s.replace('', s) }}", "replace result"),
    ("{% set s = 'a\\n' * 60000 %}{{ s | indent(width=90000) }}", "indent result"),
    ("{% set s = 'a\\n' * 60000 %}{{ s | indent(width='x' * 90000) }}", "indent result"),
    ("{% set a = 'x' * 150000 %}{% set a = a ~ a %}{{ a }}", "concatenation"),
    ("{% set a = 'x' * 150000 %}{{ a + a }}", "concatenation"),
    ("{% set a = ['x' * 1000] * 200 %}{{ ''.join(a) }}", "repetition"),
    ("{% set a = ['x' * 100] * 1900 %}{{ a | join('y' * 1000) }}", "join result"),
    ("{{ 'x' * 100 | wordwrap(1, wrapstring='y' * 99999) }}", "wordwrap result"),
    ("{{ ('\t' * 100000).expandtabs(100) }}", "expandtabs result"),
])
def test_an_expensive_operation_is_refused_before_it_runs(text: str, problem: str) -> None:
    assert problem in refused_small(text)


def test_ordinary_arithmetic_formatting_and_filters_still_render() -> None:
    text = ("{{ 10 ** 64 > 0 }} {{ 2 ** 10 }} {{ 'ab' ~ 'c' }} {{ '%5d|' % 3 }}{{ '{:>4}|'.format(1) }}"
            "{{ 'a b' | replace(' ', '_') }} {{ [1, 2] + [3] }} {{ 'x' | center(5) }}|{{ 'p\nq' | indent(2) }} "
            "{{ ['a', 'b'] | join(', ') }} {{ '%s=%d' | format('n', 4) }} {{ 'ab'.replace('', '-') }}")
    assert render_text(text) == "True 1024 abc     3|   1|a_b [1, 2, 3]   x  |p\n  q a, b n=4 -a-b-"


def test_the_bounds_are_below_the_rendered_prompt_limit() -> None:
    from maic_cli.engine.template_bounds import MAX_INT_BITS, MAX_VALUE, MAX_WIDTH

    assert MAX_VALUE <= MAX_RENDERED_CHARS and MAX_WIDTH < MAX_VALUE and MAX_INT_BITS <= 8192


def test_a_render_of_many_allowed_but_slow_steps_stops_at_its_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    from maic_cli.engine import prompt_set

    monkeypatch.setattr(prompt_set, "MAX_RENDER_SECONDS", 0.05)
    text = ("{% set s = 'x' * 199999 %}{% for i in range(1000) %}{% for j in range(1000) %}"
            "{{ (s | replace('x', 'y')) | length }}{% endfor %}{% endfor %}")
    assert "takes more than 0.05 s to render" in refused_small(text)
