"""A batch imports the report's matplotlib in a background thread while its runs wait on their models
(report/report_charts.py ``preload``), and without matplotlib that thread does nothing."""

from __future__ import annotations

import subprocess
import sys

CHECK = """
import sys
{setup}
from maic_cli.report.report_charts import preload
assert "matplotlib" not in sys.modules or sys.modules["matplotlib"] is None
thread = preload()
thread.join(60)
print(thread.is_alive(), "matplotlib.figure" in sys.modules, "matplotlib.backends.backend_svg" in sys.modules)
"""


def run_check(setup: str = "") -> str:
    done = subprocess.run([sys.executable, "-c", CHECK.format(setup=setup)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_preload_imports_what_the_charts_draw_with_in_a_thread() -> None:
    assert run_check() == "False True True"


def test_preload_without_matplotlib_does_nothing_and_raises_nothing() -> None:
    assert run_check('sys.modules["matplotlib"] = None  # as if it were not installed') == "False False False"
