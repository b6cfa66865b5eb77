"""Report charts draw the top speakers, models and end reasons, then one "others" part: a batch of
40,000 speakers is drawn with every turn still counted."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from typer.testing import CliRunner

from maic_cli.cli.app import app
from maic_cli.report import report_data
from maic_cli.report.batch_report import BatchReport, GroupSummary, RunRow
from tests.test_run import GOOD_ROUND, QA_SCENARIO, script, write

runner = CliRunner()


def run_row(run_id: str, model: str, speakers: list[list[str]]) -> RunRow:
    """A run of a report, as the charts read it."""
    return RunRow(run_id=run_id, scenario="sky", model=model, prompts="builtin", director="llm", repeat=1,
                  status="complete", passed=True, speaker_sequence=speakers)


def test_speaker_charts_cap_what_they_draw() -> None:
    runs = [run_row(f"r{n}", f"m{n % 30}", [[f"s{n}", f"s{n + 1}", "teacher"]]) for n in range(40_000)]
    counts = report_data.speaker_counts(BatchReport(runs=runs))
    assert len(counts) == report_data.MAX_SHOWN + 1 and any(key.startswith("others (18") for key in counts)
    parts = {part for counter in counts.values() for part in counter}
    assert len(parts) <= report_data.MAX_SHOWN + 1 and "teacher" in parts
    assert sum(sum(c.values()) for c in counts.values()) == 3 * 40_000  # every turn still counted
    panels = report_data.end_reason_panels(BatchReport(by_model={
        f"m{n}": GroupSummary(runs=1, end_reasons={f"r{n}": 1}) for n in range(5_000)}))
    (_, rows), = panels
    assert len(rows) <= report_data.MAX_SHOWN and all(len(c) <= report_data.MAX_SHOWN + 1 for c in rows.values())
    assert report_data.top_parts(Counter({"a": 5, "b": 1, "c": 1}), ["a"], "others") == {"a": 5, "others": 2}


def test_report_of_a_batch_with_thousands_of_speakers_is_drawn(tmp_path: Path) -> None:
    scenario = write(tmp_path / "sky.yaml", QA_SCENARIO)
    out = tmp_path / "out"
    assert runner.invoke(app, ["run", str(scenario), "--model", script(tmp_path, *GOOD_ROUND), "--out", str(out),
                               "--plain"]).exit_code == 0
    run_file = next((out / "runs").glob("*.json"))
    data = json.loads(run_file.read_text(encoding="utf-8"))
    data["rounds"][0]["speakers"] = [f"agent{n}" for n in range(20_000)]
    run_file.write_text(json.dumps(data), encoding="utf-8")
    result = runner.invoke(app, ["report", str(out)])
    assert result.exit_code == 0, result.output
    html = (out / "report.html").read_text(encoding="utf-8")
    chart = html[html.index('data-chart="speakers"'):]
    chart = chart[:chart.index("</figure>")]
    assert "others (19,988 speakers)" in chart and "agent19999" not in chart
