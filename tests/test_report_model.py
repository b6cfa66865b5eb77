"""The typed batch report (report/batch_report.py): report.json keeps its bytes; a bad report.json is one line;
``run --merge`` and ``report A B --out`` are one merge with one exit code."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from maic_cli.cli.app import app
from maic_cli.errors import InputError
from maic_cli.evaluation.run_results import load_runs
from maic_cli.report.batch_report import BatchReport
from maic_cli.report.reports import load_report, write_reports

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



@pytest.mark.parametrize("value", [{"nested": "not a value"}, float("inf"), float("nan")], ids=["dict", "inf", "nan"])
def test_rebuilding_a_batch_whose_report_has_a_bad_meta_field_changes_nothing(tmp_path: Path, value: object) -> None:
    batch = tmp_path / "batch"
    shutil.copytree(SAMPLE / "runs", batch / "runs")
    report = json.loads((SAMPLE / "report.json").read_text(encoding="utf-8"))
    report["meta"]["concurrency"] = value  # Infinity, NaN: what json.dumps writes for them, not strict JSON
    (batch / "report.json").write_text(json.dumps(report), encoding="utf-8")
    before = (batch / "report.json").read_bytes()
    result = CliRunner().invoke(app, ["report", str(batch)])
    assert result.exit_code == 2
    assert f"{batch / 'report.json'}: field meta.concurrency:" in result.output
    assert "Traceback" not in result.output and (batch / "report.json").read_bytes() == before
    assert not (batch / "report.md").exists()


def test_rebuilding_a_batch_keeps_the_meta_of_its_last_report(tmp_path: Path) -> None:
    batch = tmp_path / "batch"
    shutil.copytree(SAMPLE / "runs", batch / "runs")
    shutil.copy(SAMPLE / "report.json", batch / "report.json")
    assert CliRunner().invoke(app, ["report", str(batch)]).exit_code == 0  # rebuilt (its failing runs: report.md)
    meta = load_report(batch / "report.json").meta
    assert meta["runs planned"] == 36 and meta["judge"] == "scripted:examples/sample_batch/models/judge.yaml"
    assert str(meta["rebuilt by"]).startswith("maic ")


def split_sample(tmp_path: Path, keep: Callable[[dict[str, object]], bool]) -> list[Path]:
    """The sample batch's runs (those ``keep`` accepts) in two batch folders."""
    files = [path for path in sorted((SAMPLE / "runs").glob("*.json"))
             if keep(json.loads(path.read_text(encoding="utf-8")))]
    folders = [tmp_path / "a" / "runs", tmp_path / "b" / "runs"]
    for index, path in enumerate(files):
        folder = folders[index % 2]
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, folder / path.name)
    return [folder.parent for folder in folders]


@pytest.mark.parametrize(("keep", "code"), [
    (lambda run: True, 1),  # half of the sample's runs failed their expectations
    (lambda run: run["failures"] == [], 0),
])
def test_run_merge_and_report_out_give_one_exit_code_and_one_report(
        tmp_path: Path, keep: Callable[[dict[str, object]], bool], code: int) -> None:
    a, b = split_sample(tmp_path, keep)
    merged = CliRunner().invoke(app, ["run", "--merge", str(a), "--merge", str(b), "--out", str(tmp_path / "m")])
    combined = CliRunner().invoke(app, ["report", str(a), str(b), "--out", str(tmp_path / "c")])
    assert (merged.exit_code, combined.exit_code) == (code, code), merged.output + combined.output
    assert (tmp_path / "m" / "report.json").read_bytes() == (tmp_path / "c" / "report.json").read_bytes()
    overall = load_report(tmp_path / "m" / "report.json").overall
    assert (overall.runs, overall.passed) == (36 if code else 18, 18)


SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8)
JSON_VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3)
                           | st.dictionaries(st.text(max_size=6), inner, max_size=3), max_leaves=6)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(st.integers(min_value=0, max_value=10**6), min_size=1, max_size=6), value=JSON_VALUES)
def test_a_hand_edited_report_is_read_or_refused_in_one_line(tmp_path: Path, steps: list[int],
                                                              value: object) -> None:
    """Any one value anywhere in report.json replaced: the model reads it, or one line names the file."""
    report = json.loads((SAMPLE / "report.json").read_text(encoding="utf-8"))
    node: object = report
    for step in steps[:-1]:
        children = list(node.values()) if isinstance(node, dict) else node if isinstance(node, list) else []
        if not children or not isinstance(children[step % len(children)], dict | list):
            break
        node = children[step % len(children)]
    if isinstance(node, dict) and node:
        node[list(node)[steps[-1] % len(node)]] = value
    elif isinstance(node, list) and node:
        node[steps[-1] % len(node)] = value
    path = tmp_path / "report.json"
    path.write_text(json.dumps(report), encoding="utf-8")
    try:
        loaded = load_report(path)
    except InputError as exc:
        assert str(exc).startswith(f"{path}: ") and "\n" not in str(exc) and len(str(exc)) < 600
    else:  # what was read is written back as it was read
        assert BatchReport.model_validate_json(loaded.to_json()) == loaded


def test_a_merge_keeps_what_every_merged_report_says_alike(tmp_path: Path) -> None:
    a, b = split_sample(tmp_path, lambda run: True)
    for folder, shard in ((a, "1/2"), (b, "2/2")):
        report = json.loads((SAMPLE / "report.json").read_text(encoding="utf-8"))
        report["meta"]["shard"] = shard
        (folder / "report.json").write_text(json.dumps(report), encoding="utf-8")
    assert CliRunner().invoke(app, ["report", str(a), str(b), "--out", str(tmp_path / "c")]).exit_code == 1
    meta = load_report(tmp_path / "c" / "report.json").meta
    assert meta["merged"] == f"{a}, {b}" and meta["judge"] == "scripted:examples/sample_batch/models/judge.yaml"
    assert meta["scenarios"] == "examples/sample_batch/scenarios" and "shard" not in meta


@pytest.mark.parametrize("value", [None, float("inf")], ids=["null", "inf"])
@pytest.mark.parametrize("command", [["run", "--merge", "{a}", "--merge", "{b}"], ["report", "{a}", "{b}"]])
def test_a_merged_folder_whose_report_has_a_bad_field_is_one_line_and_nothing_is_written(
        tmp_path: Path, command: list[str], value: object) -> None:
    a, b = split_sample(tmp_path, lambda run: True)
    (b / "report.json").write_text(json.dumps({"meta": {"judge": value}}), encoding="utf-8")
    out = tmp_path / "merged"
    result = CliRunner().invoke(app, [part.format(a=a, b=b) for part in command] + ["--out", str(out)])
    assert result.exit_code == 2 and f"{b / 'report.json'}: field meta.judge:" in result.output, result.output
    assert "Traceback" not in result.output and not out.exists()
