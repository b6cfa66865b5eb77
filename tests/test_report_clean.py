"""The report's strings are made safe in one walk over the built model (report/report_clean.py), its
report.json written by pydantic (BatchReport.to_json), its per-run numbers computed once
(report/report_stats.py ``once_per_run``): each gives what the slower way gave, checked against
that way written out here, on generated and fuzzed reports."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from maic_cli.evaluation.run_results import RunResult
from maic_cli.report import report_stats
from maic_cli.report.batch_report import BatchReport, GroupSummary, RunRow, TokenUse, python_floats
from maic_cli.report.report_clean import cleaned_report, inert_report, rewritten
from maic_cli.report.reports import build_report
from maic_cli.untrusted import clean, markdown_text, redactor

from .test_report_rebuilt_bytes import KEY, generated_batch


def _walked(data: object, convert: Any, keep: str | None = None, *, top: bool = True) -> object:
    """The walk over a dump that the report used to make (strings and keys converted), but for the value of
    the report's own field ``keep`` (a key of the top level only: a ``statistics`` key in ``meta`` or a group
    named so came from outside and is converted)."""
    if isinstance(data, str):
        return convert(data)
    if isinstance(data, dict):
        return {convert(k): v if top and k == keep else _walked(v, convert, keep, top=False)
                for k, v in data.items()}
    if isinstance(data, list):
        return [_walked(v, convert, keep, top=False) for v in data]
    if isinstance(data, float) and keep is None:
        return data if math.isfinite(data) else None
    return data


def dumped_and_validated(report: BatchReport, markdown: bool = False) -> BatchReport:
    """The report made safe the old way: dumped, walked, validated again."""
    redact = redactor()
    convert = markdown_text if markdown else (lambda text: redact(clean(text)))
    data = _walked(report.model_dump(exclude_unset=True), convert, "statistics" if markdown else None)
    return BatchReport.model_validate(data)


def old_json(report: BatchReport) -> str:
    return json.dumps(report.model_dump(exclude_unset=True), indent=1, ensure_ascii=False, allow_nan=False)


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[RunResult], BatchReport]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("OPENAI_API_KEY", KEY)
        results = generated_batch(tmp_path_factory.mktemp("batch"))
        return results, build_report(results, {"maic": "test", "<b>k</b>": "v\x1b[2J", "statistics": "`x`"})


def test_cleaning_in_one_walk_gives_the_report_the_dump_and_validation_gave(
        generated: tuple[list[RunResult], BatchReport], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    _, built = generated
    before = old_json(built)
    cleaned = cleaned_report(built)
    assert cleaned == dumped_and_validated(built) and cleaned.to_json() == old_json(dumped_and_validated(built))
    assert KEY in before and KEY not in cleaned.to_json() and "\x1b" not in cleaned.to_json()
    inert = inert_report(cleaned)
    assert inert == dumped_and_validated(cleaned, markdown=True)
    assert inert.model_fields_set == cleaned.model_fields_set
    assert inert.meta["statistics"] == "\\`x\\`"  # a meta key named like the field is from outside: inert
    assert inert.statistics is cleaned.statistics  # the field itself is maic's own text
    assert old_json(built) == before  # nothing changed in place


def test_a_part_with_nothing_to_clean_is_the_same_object_and_the_run_results_are_not_touched(
        generated: tuple[list[RunResult], BatchReport], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    results, built = generated
    verdicts = [r.judge.model_dump_json() for r in results if r.judge]
    cleaned = cleaned_report(built)
    assert cleaned.statistics is built.statistics and cleaned.overall is built.overall
    hostile = next(i for i, run in enumerate(built.runs) if KEY in (run.error or ""))
    assert cleaned.runs[hostile] is not built.runs[hostile] and KEY in (built.runs[hostile].error or "")
    assert [r.judge.model_dump_json() for r in results if r.judge] == verdicts


texts = st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=12) | st.sampled_from(
    ["<b>x</b>", "[a](http://x)", "`c`", "a|b", "\x1b[31mred", "sk-abcdefghijklmnopqrstuvwx", "statistics", ""])
numbers = st.floats(allow_nan=True, allow_infinity=True) | st.integers(-10**6, 10**6)
finite_floats = st.floats(allow_nan=False, allow_infinity=False)


@st.composite
def reports(draw: st.DrawFn, finite_only: bool = False) -> BatchReport:
    """A report with outside strings and odd numbers where a report holds them (assignment is not validated,
    so a bug could put a NaN anywhere)."""
    floats = finite_floats if finite_only else numbers

    def group() -> GroupSummary:
        summary = GroupSummary(runs=draw(st.integers(0, 9)), end_reasons=draw(st.dictionaries(texts, st.integers(0, 9),
                                                                                               max_size=3)),
                               tokens={draw(texts): TokenUse(prompt=1, cost=0.0)})
        summary.total_cost, summary.ttft_p50 = draw(floats), draw(floats)
        summary.tokens[next(iter(summary.tokens))].cost = draw(floats)
        return summary

    report = BatchReport(meta=draw(st.dictionaries(texts, texts | st.booleans() | st.integers(), max_size=3)),
                         overall=group(), by_scenario={draw(texts): group() for _ in range(draw(st.integers(0, 3)))},
                         runs=[RunRow(run_id=draw(texts), scenario=draw(texts), model="m", prompts="p", director="d",
                                      repeat=1, status="complete", passed=True, failures=draw(st.lists(texts,
                                                                                                      max_size=2)),
                                      speaker_sequence=[draw(st.lists(texts, max_size=2))], metrics=group())
                               for _ in range(draw(st.integers(0, 2)))])
    if draw(st.booleans()):
        report.by_director = {"statistics": group()}  # a group named like that field: from outside, made inert
    return report


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(reports())
def test_fuzzed_reports_clean_and_render_as_the_dump_and_validation_did(report: BatchReport) -> None:
    try:
        old = dumped_and_validated(report)
    except ValidationError as refused:  # a NaN where a number must be: refused as it was
        with pytest.raises(ValidationError) as caught:
            cleaned_report(report)
        assert caught.value.errors() == refused.errors()
        return
    cleaned = cleaned_report(report)
    assert cleaned == old and cleaned.to_json() == old_json(old)
    assert inert_report(cleaned) == dumped_and_validated(cleaned, markdown=True)


@settings(max_examples=300, deadline=None)
@given(st.lists(finite_floats, max_size=6), st.lists(st.integers(-10**20, 10**20), max_size=3),
       st.dictionaries(texts, finite_floats, max_size=4))
def test_report_json_writes_every_float_and_string_as_pythons_json_does(
        floats: list[float], ints: list[int], named: dict[str, float]) -> None:
    report = BatchReport(meta={**{f"f{i}": x for i, x in enumerate(floats)}, **{f"i{i}": n for i, n in enumerate(ints)},
                               **{clean(k): v for k, v in named.items()}})
    report.overall.total_cost = floats[0] if floats else 0.0
    assert report.to_json() == old_json(report)


@pytest.mark.parametrize("value", [6.1e-05, 1e-05, 9.99e-05, 1e-07, -2.5e-06, 1e16, 1.5e22, 5e-324, 0.0001, 0.1])
def test_floats_pydantic_writes_otherwise_are_written_as_python_does(value: float) -> None:
    meta: dict[str, Any] = {"x": value, "y": f"as text: {value!r} 0.00001 1e-7 1e16"}
    text = BatchReport(meta=meta).model_dump_json(indent=1, exclude_unset=True)
    assert json.loads(python_floats(text)) == {"meta": meta}
    assert f'"x": {value!r},' in python_floats(text) and python_floats(text).endswith('1e-7 1e16"\n }\n}')
    if 1e-7 <= abs(value) < 1e-4:  # what pydantic writes for these is not what Python writes
        assert f'"x": {value!r},' not in text


def test_each_run_s_numbers_are_computed_once_and_sum_to_the_group_s(
        generated: tuple[list[RunResult], BatchReport], monkeypatch: pytest.MonkeyPatch) -> None:
    results, _ = generated
    calls: dict[str, int] = {}

    def counting(name: str, metric: Any) -> Any:
        def counted(*args: Any) -> Any:
            calls[name] = calls.get(name, 0) + 1
            return metric(*args)
        return counted

    monkeypatch.setattr(report_stats, "MEANS", {n: counting(n, m) for n, m in report_stats.MEANS.items()})
    rates, means = report_stats.once_per_run()
    halves = [results, results[::2], results[1::2], results]
    once = [report_stats.intervals(group, rates=rates, means=means) for group in halves]
    assert all(count == len(results) for count in calls.values()) and len(calls) == len(report_stats.MEANS)
    assert once == [report_stats.intervals(group) for group in halves]


def test_the_sample_batch_cleans_as_before(tmp_path: Path) -> None:
    from maic_cli.evaluation.run_results import load_runs

    results = load_runs(Path(__file__).resolve().parent.parent / "examples" / "sample_batch" / "out")
    built = build_report(results, {"maic": "test"})
    assert cleaned_report(built).to_json() == old_json(dumped_and_validated(built))
    pairs: object = [("a", 1.0)]
    assert rewritten(pairs, str.upper) == [["A", 1.0]]
