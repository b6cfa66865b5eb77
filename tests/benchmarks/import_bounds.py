"""The reported import/export attacks at full size: seconds and peak memory of each ``maic`` command.

    PYTHONPATH=. python tests/benchmarks/import_bounds.py [--only deck|table|pdf|breaks]

* deck: a 4.6 MB deck, one slide of 300,000 tiny shapes (``maic lesson import``);
* table: 1.9 MB of Markdown, one table 1,000 columns wide (``maic lesson import``);
* pdf: a small PDF of 60 pages all drawing one 70 MB content stream (``maic lesson import``);
* breaks: a 4 MB lesson whose one text element holds 2 million line breaks (``maic lesson export --out x.pptx``).

Each command runs in a fresh interpreter (``maic_cli.testing.import_attacks.measure``); a refusal
(exit 2, one line) counts as an answer.  Builds take a while (the deck: about a minute).
"""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Callable
from pathlib import Path

from maic_cli.testing.import_attacks import (
    line_break_lesson,
    measure,
    shared_stream_pdf,
    tiny_shapes_deck,
    wide_table_notes,
)

ATTACKS: dict[str, tuple[Callable[[Path], Path], list[str]]] = {
    "deck": (lambda d: tiny_shapes_deck(d / "shapes.pptx", 300_000), ["lesson", "import", "shapes.pptx"]),
    "table": (lambda d: wide_table_notes(d / "wide.md", 1_000, int(1.9 * 2**20)), ["lesson", "import", "wide.md"]),
    "pdf": (lambda d: shared_stream_pdf(d / "shared.pdf", 60, 70 * 2**20), ["lesson", "import", "shared.pdf"]),
    "breaks": (lambda d: line_break_lesson(d / "breaks.yaml", 2_000_000),
               ["lesson", "export", "breaks.yaml", "--out", "x.pptx"]),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", choices=sorted(ATTACKS), action="append")
    parser.add_argument("--timeout", type=float, default=900)
    args = parser.parse_args()
    for name in args.only or list(ATTACKS):
        build, argv = ATTACKS[name]
        with tempfile.TemporaryDirectory() as folder:
            made = build(Path(folder))
            result = measure([*argv, "--force"] if argv[1] == "import" else argv, Path(folder), args.timeout)
            answer = result.stderr.strip().splitlines()[-1] if result.stderr.strip() else ""
            print(f"{name:7} {made.stat().st_size / 2**20:6.2f} MB in  {result.seconds:7.1f} s  "
                  f"{result.peak_mb:7.0f} MB peak  exit {result.code}  {answer[:110]}", flush=True)


if __name__ == "__main__":
    main()
