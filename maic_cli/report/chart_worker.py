"""The report's charts drawn in a second process, so a big batch's report does not wait for matplotlib.

matplotlib costs a batch about 0.7 s of CPU to import and 0.5–0.7 s to draw the charts of a
1,000-run report.  In the batch's own process both compete with the event loop and then with
the rest of the report (report.json, report.md, the CSVs).  A batch of :data:`MIN_RUNS` runs or
more therefore starts this worker when it starts (:func:`prepare`): a child Python that imports
matplotlib at once, on the other core, while the runs wait on their models, then waits on its
standard input.  When the report is built, :meth:`ChartWorker.submit` hands it the chart jobs (plain data:
report/report_html.py ``chart_plan``) and writes the other files while the child draws.

The child's SVG is byte for byte what the batch's process would draw (same functions, same
settings).  Anything wrong with the worker — it could not start, died, was killed, answered
nonsense or not in time — and the batch's process draws the charts itself, as it does for a small
batch: the worker can make a report faster, never different or missing.  The child ignores Ctrl-C
(the batch decides what an interrupt means) and ends when its input closes, so it never outlives
the batch.  What it is sent is the parent's own data (pickled); what it answers is read as JSON.
Without matplotlib (the optional ``report`` extra) no worker is started: there is nothing to draw.
"""

from __future__ import annotations

import atexit
import contextlib
import itertools
import json
import os
import pickle
import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .report_charts import ChartJob, available, preload

MIN_RUNS = 50  # below this, charts are cheap and a second process is not worth its start
TIMEOUT = 600.0  # seconds the batch waits for the worker's charts before drawing them itself

_waiting: ChartWorker | None = None


class ChartWorker:
    """A child process that imports matplotlib now and draws one list of chart jobs later."""

    def __init__(self) -> None:
        self._proc = subprocess.Popen([sys.executable, "-I", "-c", _child_code()], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self._answer: list[str | None] | None = None
        self._thread: threading.Thread | None = None
        atexit.register(self.close)

    def submit(self, jobs: Sequence[ChartJob]) -> None:
        """Send ``jobs`` and let the child draw them; a thread waits for the answer (the GIL is free meanwhile)."""
        data = pickle.dumps(list(jobs), protocol=pickle.HIGHEST_PROTOCOL)
        thread = threading.Thread(target=self._exchange, args=(data, len(jobs)), name="maic-chart-worker",
                                  daemon=True)
        try:
            thread.start()
        except RuntimeError:  # no thread to be had: no answer, the batch's process draws the charts
            self.close()
            return
        self._thread = thread

    def _exchange(self, data: bytes, count: int) -> None:
        try:
            out, _ = self._proc.communicate(data, timeout=TIMEOUT)
            answer = json.loads(out) if self._proc.returncode == 0 else None
        except (OSError, ValueError, subprocess.SubprocessError):
            self.close()
            return
        if (isinstance(answer, list) and len(answer) == count
                and all(svg is None or isinstance(svg, str) for svg in answer)):
            self._answer = answer

    def result(self) -> list[str | None] | None:
        """The charts' ``<svg>`` (``None`` where there was nothing to draw), or ``None`` when the worker failed
        or was given nothing: the page draws them itself."""
        if self._thread is not None:
            self._thread.join(TIMEOUT + 5)
        self.close()
        return self._answer

    def close(self) -> None:
        if self._proc.poll() is None:
            self._proc.kill()
            try:
                self._proc.wait(5)
            except subprocess.TimeoutExpired:  # pragma: no cover - a process that outlives SIGKILL
                pass
        for pipe in (self._proc.stdin, self._proc.stdout):
            if pipe is not None and not pipe.closed and threading.current_thread() is not self._thread:
                pipe.close()
        atexit.unregister(self.close)


def _child_code() -> str:
    """The child's program.  It runs isolated (``python -I``: no ``PYTHON*`` variable, no user site, and
    neither the current folder nor a script's folder on its path), with this process's own import path minus
    the current folder: a ``maic_cli/`` or ``json.py`` in the folder a batch runs in is never imported by
    the child (this process did not import it either, unless it was started from that folder, in which case
    maic itself is there and the child needs it)."""
    here = os.getcwd()
    paths = [entry for entry in sys.path if entry and os.path.abspath(entry) != here]
    package_root = str(Path(__file__).resolve().parents[2])  # where this maic_cli was imported from
    if package_root not in paths:
        paths.insert(0, package_root)
    return (f"import sys; sys.path[:] = {paths!r}; "
            "from maic_cli.report.chart_worker import main; sys.exit(main())")


def prepare(runs: int) -> None:
    """A batch of ``runs`` is about to play: its report's charts get ready while the runs wait on their models —
    this worker for a big batch, matplotlib imported in a thread for a small one, nothing without matplotlib."""
    if runs >= MIN_RUNS:
        start(runs)
    elif runs > 1 and available():
        preload()


def start(runs: int) -> None:
    """A batch of ``runs`` is starting: start the worker when the batch is big enough to gain from it (and
    matplotlib is installed: without it there is nothing to draw)."""
    global _waiting
    if runs < MIN_RUNS or _waiting is not None or not available():
        return
    try:
        _waiting = ChartWorker()
    except OSError:  # no process to be had: the report draws its own charts
        _waiting = None


def start_for(folders: Sequence[Path]) -> None:
    """A report is about to be rebuilt from ``folders``: start the worker if they hold enough runs (the runs
    load meanwhile)."""
    found = 0
    for folder in folders:
        with contextlib.suppress(OSError):
            found += sum(1 for _ in itertools.islice((folder / "runs").glob("*.json"), MIN_RUNS))
    start(found)


def take() -> ChartWorker | None:
    """The worker started for this batch (once): the report that takes it gives it its charts."""
    global _waiting
    worker, _waiting = _waiting, None
    return worker


def main() -> int:
    """The child: import matplotlib, read the jobs, print their ``<svg>`` as a JSON list."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the batch's to handle; our input closing ends us
    from .report_charts import draw_job, preload_now

    preload_now()
    data = sys.stdin.buffer.read()
    if not data:
        return 0
    jobs: list[Any] = pickle.loads(data)  # written by the batch that started this process, never a file
    try:
        answer = [draw_job(job) for job in jobs]
    except ImportError:  # no matplotlib: the batch's process says so on the page
        return 3
    sys.stdout.write(json.dumps(answer))
    return 0


if __name__ == "__main__":
    sys.exit(main())
