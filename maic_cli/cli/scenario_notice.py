"""What ``maic run`` says when a scenario file chooses the model (no ``--model``).

A scenario someone sent may name ``model: openai/gpt-4o`` and would be run with the user's own key
without a word.  As a resumed session does, maic says which model the file chose, where its calls go
(``--api-base``, ``MAIC_API_BASE``) and which key of the user's goes with them.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from ..untrusted import clean

if TYPE_CHECKING:
    from ..llm.spec import ModelSpec


def key_variable(model: str) -> str:
    """The environment variable litellm takes the key for ``model`` from (``openai/…`` → ``OPENAI_API_KEY``;
    a model named without a provider is OpenAI's)."""
    provider = model.split("/", 1)[0] if "/" in model else "openai"
    return re.sub(r"[^A-Z0-9]+", "_", provider.upper()).strip("_") + "_API_KEY"


def say_scenario_model(path: Path, spec: ModelSpec, api_base: str | None) -> None:
    """A scenario chose the model (no ``--model``): say which, and which key of the user's it is sent with,
    as a resumed session does; a canned or offline model sends nothing and needs no word."""
    if not spec.sends_key:
        return
    model = spec.raw
    variable = key_variable(model)
    key = f"your {variable} is sent with its calls" if os.environ.get(variable) else f"{variable} is not set"
    where = f" at {clean(api_base)}" if api_base else ""
    typer.echo(f"{clean(str(path))}: this scenario chooses --model {clean(model)}{where}; {key}. Pass --model to "
               "choose the model yourself", err=True)
