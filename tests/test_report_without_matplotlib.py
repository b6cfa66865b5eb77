"""No extra is needed to run a batch: without matplotlib (the ``report`` extra) ``maic run`` and ``maic report``
play and write every file, report.html without its charts (a note where they would be), say once on stderr how
to get them, and exit as they would with it; no chart worker is started.

"Without matplotlib" is real: a virtual environment made in the test whose site-packages holds every package of
this one but matplotlib (``import matplotlib`` fails there as it does for a user who never installed the extra).
A broken install (a ``matplotlib`` that cannot be imported) is a stand-in package first on the path.
"""

from __future__ import annotations

import json
import os
import site
import subprocess
import sys
import venv
from collections.abc import Sequence
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = [str(ROOT / "scenarios" / "single_tutor.yaml"), str(ROOT / "scenarios" / "qa_multi.yaml")]
NOTE = "maic: note: report.html has no charts without matplotlib: pip install 'maic-cli[report]'"
WITHOUT = ("matplotlib", "mpl_toolkits", "pylab")  # what the report extra installs under these names
FILES = ("maic-batch.json", "report.json", "report.md", "report.html", "turns.csv", "rounds.csv")


def _is_matplotlib(name: str) -> bool:
    top = name.split("-")[0].split(".")[0].lower()
    return top in WITHOUT


@pytest.fixture(scope="module")
def python_without_matplotlib(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A venv (no pip, no system site) whose site-packages links every entry of ours except matplotlib's."""
    home = tmp_path_factory.mktemp("no-matplotlib") / "venv"
    venv.EnvBuilder(with_pip=False, symlinks=True).create(home)
    python = home / "bin" / "python"
    target = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                                 capture_output=True, text=True, check=True).stdout.strip())
    for source in map(Path, site.getsitepackages()):
        for entry in source.iterdir():
            # matplotlib's own, and maic itself (an editable install would point at another tree: PYTHONPATH
            # below puts this one first)
            if _is_matplotlib(entry.name) or "maic" in entry.name.lower() or (target / entry.name).exists():
                continue
            (target / entry.name).symlink_to(entry)
    return str(python)


def maic(python: str, args: Sequence[str], cwd: Path, *, path: Sequence[Path] = ()) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([*map(str, path), str(ROOT)]), "MAIC_HOME": str(cwd / "home"),
           "NO_COLOR": "1"}
    return subprocess.run([python, "-m", "maic_cli", *args], capture_output=True, text=True, cwd=cwd, env=env,
                          timeout=300)


def batch(python: str, out: Path, *, path: Sequence[Path] = ()) -> subprocess.CompletedProcess[str]:
    return maic(python, ["run", *SCENARIOS, "--model", "demo", "--repeat", "2", "--out", str(out), "--plain"],
                out.parent, path=path)


def assert_written_without_charts(out: Path, done: subprocess.CompletedProcess[str]) -> None:
    assert [name for name in FILES if not (out / name).is_file()] == [], done.stderr
    assert len(list((out / "runs").glob("*.json"))) == 4 and len(list((out / "transcripts").glob("*.jsonl"))) == 4
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report["overall"]["runs"] == 4 and report["overall"]["rounds"] > 0
    assert "## By scenario" in (out / "report.md").read_text(encoding="utf-8")
    assert len((out / "turns.csv").read_text(encoding="utf-8").splitlines()) > 1
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "<svg" not in page  # no chart
    assert '<p class="none" data-missing="charts">No charts here' in page  # but the note, where they would be
    assert "<code>pip install 'maic-cli[report]'</code>" in page
    assert "<h2>Summary</h2>" in page and "single_tutor" in page  # the tables are all there
    assert done.stderr.count(NOTE) == 1, done.stderr  # said once
    assert "Traceback" not in done.stderr


def test_the_venv_really_has_no_matplotlib_and_everything_else(python_without_matplotlib: str) -> None:
    code = ("import importlib.util, numpy, pydantic, typer, rich, jinja2, litellm, maic_cli; "
            "print(importlib.util.find_spec('matplotlib'), maic_cli.__file__)")
    done = subprocess.run([python_without_matplotlib, "-c", code], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    found, where = done.stdout.split()
    assert found == "None" and where == str(ROOT / "maic_cli" / "__init__.py")
    failed = subprocess.run([python_without_matplotlib, "-c", "import matplotlib"], capture_output=True, text=True,
                            timeout=60)
    assert failed.returncode == 1 and "ModuleNotFoundError: No module named 'matplotlib'" in failed.stderr


def test_a_batch_without_matplotlib_writes_every_file_but_the_charts(python_without_matplotlib: str,
                                                                     tmp_path: Path) -> None:
    without = batch(python_without_matplotlib, tmp_path / "without")
    assert_written_without_charts(tmp_path / "without", without)
    assert without.stderr.index(NOTE) < without.stderr.index("[1/4]")  # said before the runs play, not after
    helped = batch(sys.executable, tmp_path / "with")
    assert helped.returncode == without.returncode  # the exit code is the batch's, charts or not
    assert NOTE not in helped.stderr
    assert "<svg" in (tmp_path / "with" / "report.html").read_text(encoding="utf-8")
    # the extra installed afterwards: `maic report` draws the charts of the batch that ran without it
    rebuilt = maic(sys.executable, ["report", str(tmp_path / "without")], tmp_path)
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert '<figure class="chart" data-chart="speakers">' in (tmp_path / "without" / "report.html").read_text()


def test_maic_report_without_matplotlib_rebuilds_every_file_but_the_charts(python_without_matplotlib: str,
                                                                         tmp_path: Path) -> None:
    made = batch(sys.executable, tmp_path / "out")
    for name in FILES[1:]:
        (tmp_path / "out" / name).unlink()
    rebuilt = maic(python_without_matplotlib, ["report", str(tmp_path / "out")], tmp_path)
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert_written_without_charts(tmp_path / "out", rebuilt)
    merged = maic(python_without_matplotlib, ["report", str(tmp_path / "out"), str(tmp_path / "out"), "--out",
                                              str(tmp_path / "merged")], tmp_path)
    assert merged.returncode == 2 and "name each folder once" in merged.stderr  # bad input: exit 2, as ever
    assert made.returncode in (0, 1)


def test_no_chart_worker_nor_preload_without_matplotlib(python_without_matplotlib: str, tmp_path: Path) -> None:
    """A batch big enough for the chart worker starts no process (and a small one no import thread) when
    matplotlib is not installed; with it, the same call starts the worker."""
    code = """
import subprocess, threading, sys
from pathlib import Path
def refused(*args, **kwargs):
    raise AssertionError("a process was started")
subprocess.Popen = refused
from maic_cli.report import chart_worker
chart_worker.prepare(chart_worker.MIN_RUNS * 4)
chart_worker.prepare(3)
runs = Path(sys.argv[1]) / "runs"
runs.mkdir(parents=True)
for i in range(chart_worker.MIN_RUNS):
    (runs / f"r{i}.json").write_text("{}")
chart_worker.start_for([runs.parent])
print(chart_worker.take(), sorted(t.name for t in threading.enumerate()), "matplotlib" in sys.modules)
"""
    done = subprocess.run([python_without_matplotlib, "-c", code, str(tmp_path / "batch")], capture_output=True,
                          text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["None", "['MainThread']", "False"]
    from maic_cli.report import chart_worker

    assert chart_worker.take() is None
    chart_worker.prepare(chart_worker.MIN_RUNS)  # here matplotlib is installed: a worker
    worker = chart_worker.take()
    assert worker is not None
    worker.close()


def test_a_matplotlib_that_cannot_be_imported_is_said_once_after_the_report(tmp_path: Path) -> None:
    """A broken install (found, but its import fails): the batch still writes every file and says it once."""
    stand_in = tmp_path / "broken"
    (stand_in / "matplotlib").mkdir(parents=True)
    (stand_in / "matplotlib" / "__init__.py").write_text("raise ImportError('matplotlib is broken here')\n")
    done = batch(sys.executable, tmp_path / "out", path=[stand_in])
    assert_written_without_charts(tmp_path / "out", done)
    assert done.stderr.index(NOTE) > done.stderr.index("[4/4]")  # found at the start; failed when it drew
