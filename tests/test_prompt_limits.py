"""Prompt overrides are files people share: they may not read other files, hang or exhaust memory."""

from __future__ import annotations

from pathlib import Path

import pytest

from maic_cli.engine.prompt_set import PromptError
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
