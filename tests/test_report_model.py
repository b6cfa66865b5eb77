"""The typed batch report (store/report_model.py): report.json keeps its bytes; a bad report.json is one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from maic_cli.engine.batch_report import BatchReport
from maic_cli.errors import InputError
from maic_cli.store.reports import load_report, load_runs, write_reports

SAMPLE = Path(__file__).resolve().parent.parent / "examples" / "sample_batch" / "out"


def test_the_sample_batch_report_is_rebuilt_byte_for_byte(tmp_path: Path) -> None:
    results = load_runs(SAMPLE)
    meta = json.loads((SAMPLE / "report.json").read_text(encoding="utf-8"))["meta"]
    report = write_reports(tmp_path, results, meta)
    assert isinstance(report, BatchReport)
    for name in ("report.json", "report.md", "rounds.csv"):
        assert (tmp_path / name).read_bytes() == (SAMPLE / name).read_bytes(), name


def test_a_report_read_back_dumps_to_the_same_bytes() -> None:
    text = (SAMPLE / "report.json").read_text(encoding="utf-8")
    assert load_report(SAMPLE / "report.json").to_json() == text


@pytest.mark.parametrize(("edit", "field"), [
    (lambda r: r["overall"].__setitem__("runs", "many"), "overall.runs"),
    (lambda r: r["runs"][0].__setitem__("passed", [1]), "runs.0.passed"),
    (lambda r: r["by_model"].__setitem__("x", {"runs": 1, "surprise": 2}), "by_model.x.surprise"),
    (lambda r: r["comparisons"]["by_model"][0]["metrics"][0].pop("metric"), "comparisons.by_model.0.metrics.0.metric"),
    (lambda r: r["judge"]["usage"].__setitem__("cost", "free"), "judge.usage.cost"),
])
def test_a_bad_field_is_one_line_naming_the_file_and_the_field(tmp_path: Path, edit: object, field: str) -> None:
    report = json.loads((SAMPLE / "report.json").read_text(encoding="utf-8"))
    edit(report)  # type: ignore[operator]
    path = tmp_path / "report.json"
    path.write_text(json.dumps(report), encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_report(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: field {field}:") and "\n" not in message


@pytest.mark.parametrize("text", ["", "[]", "{", "null", '{"meta": {"a": [1]}}'])
def test_a_report_that_is_not_a_report_is_one_line(tmp_path: Path, text: str) -> None:
    path = tmp_path / "report.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_report(path)
    assert str(caught.value).startswith(f"{path}: ") and "\n" not in str(caught.value)

