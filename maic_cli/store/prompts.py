"""Prompt sets from files: the built-in templates with a folder's overrides on top.

A user overrides any built-in template by the same relative path, from
``$MAIC_HOME/prompts/`` (when it exists) or a folder given with ``--prompts DIR``:
``DIR/agent/system.j2`` replaces the agent's system prompt, ``DIR/snippets/speech.md``
the speech rules, and a new file can add a snippet that an override includes.
Every template is compiled when the set is loaded, so a broken one is reported
(``path:line: problem``) before a class starts.  The files are read, never run:
templates render in Jinja2's sandbox (``engine/prompt_set.py``).
"""

from __future__ import annotations

from pathlib import Path

from ..engine.prompt_set import PromptSet, TemplateSource
from ..errors import InputError
from ..files import read_bounded
from ..prompts.builtin import TEMPLATE_SUFFIXES
from .paths import maic_home

MAX_TEMPLATE_BYTES = 100_000
MAX_TEMPLATES = 200


def user_prompts_dir() -> Path:
    return maic_home() / "prompts"


def read_overrides(folder: Path) -> dict[str, TemplateSource]:
    """Every ``*.j2`` / ``*.md`` file under ``folder``, by its relative POSIX path."""
    if not folder.is_dir():
        raise InputError(f"{folder}: no such prompts folder")
    found: dict[str, TemplateSource] = {}
    root = folder.resolve()
    for path in sorted(folder.rglob("*")):
        if not path.is_file() or path.suffix not in TEMPLATE_SUFFIXES:
            continue
        if path.is_symlink() or not path.resolve().is_relative_to(root):
            # A link would let a folder someone sent you read any file into a prompt (and a provider).
            raise InputError(f"{path}: a template that is a link (or leads outside {folder}) is not read")
        if len(found) >= MAX_TEMPLATES:
            raise InputError(f"{folder}: more than {MAX_TEMPLATES} templates; is this the right folder?")
        try:
            text = read_bounded(path, MAX_TEMPLATE_BYTES, "template").decode("utf-8")
        except UnicodeDecodeError:
            raise InputError(f"{path}: not UTF-8 text") from None
        found[path.relative_to(folder).as_posix()] = TemplateSource(text, str(path))
    return found


def load_prompt_set(folder: Path | None = None) -> PromptSet:
    """The built-in set with ``folder``'s overrides (``None``: ``$MAIC_HOME/prompts`` if it exists).

    Raises :class:`~maic_cli.engine.prompt_set.PromptError` (``path:line: problem``) if a
    template does not compile, :class:`InputError` if the folder cannot be read.
    """
    builtin = PromptSet.builtin()
    if folder is None:
        folder = user_prompts_dir()
        if not folder.is_dir():
            return builtin
    overrides = read_overrides(folder)
    prompt_set = builtin.with_overrides(overrides, name=str(folder)) if overrides else builtin
    prompt_set.check()
    return prompt_set
