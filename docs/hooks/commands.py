"""MkDocs hook: the command reference page is generated from maic's Typer app at every build."""

from __future__ import annotations

from typing import Any

MARKER = "<!-- maic:commands -->"


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    if MARKER not in markdown:
        return markdown
    from maic_cli.cli.reference import reference_markdown

    return markdown.replace(MARKER, reference_markdown())
