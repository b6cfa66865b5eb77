"""While a batch's runs play and while its report is written, the young generation is swept every 20,000 new
objects rather than Python's 700 (evaluation/collector.py ``fewer_collections``); the collector's settings
are restored after, also when writing fails."""

from __future__ import annotations

import asyncio
import gc
from pathlib import Path

import pytest

from maic_cli.cli.batch_plan import expand
from maic_cli.evaluation.batch import RunContext, run_all
from maic_cli.evaluation.collector import YOUNG_OBJECTS
from maic_cli.evaluation.run_results import RunResult
from tests.test_run import GOOD_ROUND, QA_SCENARIO, script, write


def test_a_batch_sweeps_the_young_generation_less_often_and_restores_the_collector(tmp_path: Path) -> None:
    specs = expand([write(tmp_path / "sky.yaml", QA_SCENARIO)], [script(tmp_path, *GOOD_ROUND)], 2, None, [])
    from maic_cli.cli.batch_plan import client_pool

    context = RunContext(out=tmp_path / "out", clients=client_pool(api_base=None, router_file=None, seed=None,
                                                                   structured="json_schema", temperature=None))
    before = gc.get_threshold()
    seen: list[tuple[int, ...]] = []

    def on_done(result: RunResult) -> None:
        seen.append(gc.get_threshold())

    results, _ = asyncio.run(run_all(specs, context, 2, on_done))
    assert [r.status for r in results] == ["complete", "complete"]
    assert [threshold[0] for threshold in seen] == [YOUNG_OBJECTS] * 2
    assert gc.get_threshold() == before


def test_a_report_is_written_with_fewer_collections_and_the_collector_is_restored_even_on_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import maic_cli.report.reports as reports
    from maic_cli.errors import MaicError
    from maic_cli.report import batch_summary

    before = gc.get_threshold()
    seen: list[tuple[int, ...]] = []

    def failing_write(*args: object, **kwargs: object) -> None:
        seen.append(gc.get_threshold())
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(reports, "write_reports", failing_write)
    with pytest.raises(MaicError, match="cannot write the report: No space left on device"):
        batch_summary.save_reports(tmp_path, [], {})
    assert [threshold[0] for threshold in seen] == [20_000]
    assert gc.get_threshold() == before
