"""Run the sample batch and take the README's picture of its report.

    python examples/make_sample_batch.py [extra maic run options]
    python examples/make_sample_batch.py --judge scripted:examples/sample_batch/models/judge.yaml

Runs ``maic run`` (this checkout's code) over ``examples/sample_batch/scenarios`` with
two scripted "models" (``models/focused.yaml`` and ``models/rambling.yaml``) and two
prompt sets (``prompts/brief`` and ``prompts/socratic``), three times each, into
``examples/sample_batch/out/`` (replaced: it must be a maic batch folder or absent);
then opens its report.html in headless Chromium and saves the page down to the routing chart
(the judge's, with ``--judge``) as ``docs/report.png``.  ``models/judge.yaml`` is a scripted judge
that marks the rambling model's extra turns down.  No network: the models are scripted, the page loads nothing.
The transcripts stay out of git (examples/sample_batch/.gitignore): they are large.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = Path("examples/sample_batch")
OUT = SAMPLE / "out"
PICTURE = Path("docs/report.png")
PICTURE_ENDS_AFTER = 'figure[data-chart="{}_model"]'  # the summary and the charts down to this one


def run_batch(extra: list[str]) -> None:
    if OUT.exists():
        if not (OUT / "maic-batch.json").is_file():
            sys.exit(f"{OUT} is not a maic batch folder; move it away first")
        shutil.rmtree(OUT)
    command = [sys.executable, "-m", "maic_cli", "run", str(SAMPLE / "scenarios"),
               "--model", f"scripted:{SAMPLE / 'models' / 'focused.yaml'}",
               "--model", f"scripted:{SAMPLE / 'models' / 'rambling.yaml'}",
               "--prompts", str(SAMPLE / "prompts" / "brief"), "--prompts", str(SAMPLE / "prompts" / "socratic"),
               "--repeat", "3", "--concurrency", "1", "--out", str(OUT), "--plain", *extra]
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    status = subprocess.run(command, env=environment, check=False).returncode
    if status not in (0, 1):  # 1: some runs failed their expectations, as the rambling model is meant to
        sys.exit(f"maic run failed (exit {status})")


def take_picture(last_chart: str) -> None:
    sys.path.insert(0, str(ROOT))
    from maic_cli.testing.browser import open_page

    visit = open_page(OUT / "report.html", "document.querySelectorAll('figure.chart').length",
                      cut_after=PICTURE_ENDS_AFTER.format(last_chart))
    if visit.errors:
        sys.exit("report.html did not render cleanly: " + "; ".join(visit.errors))
    PICTURE.parent.mkdir(exist_ok=True)
    PICTURE.write_bytes(visit.screenshot)
    sys.stdout.write(f"{OUT / 'report.html'}: {visit.value} charts; picture: {PICTURE} ({len(visit.screenshot)} "
                     "bytes)\n")


if __name__ == "__main__":
    os.chdir(ROOT)  # relative paths in the report, whatever the caller's folder
    run_batch(sys.argv[1:])
    take_picture("judge" if "--judge" in sys.argv else "routing")
