"""What a batch report writes from outside text is inert: report.md escapes HTML, links and code spans;
report.json is strict JSON (no NaN or Infinity)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from maic_cli.evaluation.run_results import RunResult
from maic_cli.report import reports
from maic_cli.report.batch_report import BatchReport, MetaValue
from maic_cli.report.reports import write_reports


def test_report_md_escapes_everything_from_outside(tmp_path: Path) -> None:
    hostile = "<img src=x onerror=alert(1)><script>alert(2)</script>[x](javascript:alert(3))`code`"
    result = RunResult(run_id="r1", scenario=hostile, scenario_path="x", model="m<b>", repeat=1, status="error",
                       error=f"provider said: {hostile}")
    write_reports(tmp_path, [result], {"scenarios": hostile, "<i>key</i>": "v"})
    markdown = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "<img" not in markdown and "<script" not in markdown and "<b>" not in markdown and "<i>" not in markdown
    assert "[x](javascript:" not in markdown and "`code`" not in markdown
    assert "&lt;script&gt;alert(2)&lt;/script&gt;" in markdown and "\\](javascript:alert(3))" in markdown
    from maic_cli.untrusted import markdown_text

    assert markdown_text("a|b <c> & \\`") == "a|b &lt;c&gt; &amp; \\\\\\`"


def test_report_json_never_holds_nan_or_infinity(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    build = reports.build_report

    def with_odd_numbers(results: list[RunResult], meta: dict[str, MetaValue]) -> BatchReport:
        report = build(results, meta)  # numbers a bug or a crafted run could make (assignment is not validated)
        report.overall.cue_user_rate, report.overall.ttft_p50, report.overall.ttft_p95 = math.nan, math.inf, 1.5
        report.runs[0].metrics.turn_latency_p95 = -math.inf
        return report

    monkeypatch.setattr(reports, "build_report", with_odd_numbers)
    result = RunResult(run_id="r1", scenario="s", scenario_path="x", model="m", repeat=1, status="complete")
    write_reports(tmp_path, [result], {})

    def refuse(constant: str) -> None:
        raise ValueError(f"not strict JSON: {constant}")

    from maic_cli.report.report_clean import finite, rewritten

    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"), parse_constant=refuse)
    overall = report["overall"]
    assert [overall[k] for k in ("cue_user_rate", "ttft_p50", "ttft_p95")] == [None, None, 1.5]
    assert report["runs"][0]["metrics"]["turn_latency_p95"] is None
    odd: object = {"a": (math.nan, 2.0)}
    assert rewritten(odd, str, number=finite) == {"a": [None, 2.0]}
