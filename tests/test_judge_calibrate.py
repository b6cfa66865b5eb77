"""``maic judge calibrate``: agreement between a judge and a person's labels (evaluation/agreement.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from maic_cli.cli.app import app
from maic_cli.errors import InputError
from maic_cli.evaluation.agreement import accuracy, agreement, cohen_kappa, macro_f1
from maic_cli.evaluation.calibration import read_labels
from maic_cli.evaluation.judge import CRITERIA

ROOT = Path(__file__).parent.parent
LABELS = ROOT / "examples" / "calibration" / "labels.jsonl"


def test_the_metrics_by_hand() -> None:
    pairs = [("yes", "yes"), ("yes", "yes"), ("yes", "no"), ("no", "no"), ("no", "yes"), ("yes", "yes")]
    assert accuracy(pairs) == pytest.approx(4 / 6)
    # yes: tp 3, fp 1, fn 1 → F1 6/8; no: tp 1, fp 1, fn 1 → F1 2/4
    assert macro_f1(pairs) == pytest.approx((6 / 8 + 2 / 4) / 2)
    # p_o = 4/6; person yes 4/6, judge yes 4/6 → p_e = (4*4 + 2*2) / 36 = 20/36
    assert cohen_kappa(pairs) == pytest.approx((4 / 6 - 20 / 36) / (1 - 20 / 36))
    assert cohen_kappa([("yes", "yes")] * 3) == 1.0 and cohen_kappa([("yes", "no")] * 3) == 0.0
    assert accuracy([]) is None and cohen_kappa([]) is None


@settings(deadline=None, max_examples=40)  # each example bootstraps three metrics
@given(st.lists(st.tuples(st.sampled_from(["yes", "no"]), st.sampled_from(["yes", "no"])), max_size=30))
def test_the_metrics_stay_in_range(pairs: list[tuple[str, str]]) -> None:
    entry = agreement(pairs)
    for name in ("accuracy", "macro_f1"):
        value = entry[name]["value"]  # type: ignore[index]
        assert value is None or 0 <= value <= 1
    kappa = entry["kappa"]["value"]  # type: ignore[index]
    assert kappa is None or -1 <= kappa <= 1
    for name in ("accuracy", "macro_f1", "kappa"):
        low, high = entry[name]["low"], entry[name]["high"]  # type: ignore[index]
        assert (low is None) == (high is None) and (low is None or low <= high)


def verdict(flags: dict[str, bool]) -> str:
    return json.dumps({"turns": [{"turn": 1, "reason": "r", **flags}], "answered": True, "answered_reason": "r"})


def test_calibrate_reports_agreement_per_criterion(tmp_path: Path) -> None:
    items = read_labels(LABELS)
    assert len(items) == 8
    # a judge that says yes to everything, except one unusable reply (turn 8)
    replies = [verdict({c: True for c in CRITERIA}) for _ in items[:-1]] + ["no verdict", "still none"]
    judge = tmp_path / "judge.json"
    judge.write_text(json.dumps(replies), encoding="utf-8")
    out = tmp_path / "calibration.json"
    result = CliRunner().invoke(app, ["judge", "calibrate", str(LABELS), "--judge", f"scripted:{judge}",
                                      "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "Cohen's κ" in result.output
    report = json.loads(out.read_text(encoding="utf-8"))
    correct = report["dimensions"]["correct"]
    # turns 1-7 judged "yes": the person said no to t2 and t5; t8 is missing
    assert (correct["items"], correct["missing"], correct["agree"]) == (7, 1, 5)
    assert correct["accuracy"]["value"] == pytest.approx(5 / 7, abs=1e-4)
    assert correct["kappa"]["value"] == 0.0  # always "yes": no better than chance
    assert correct["accuracy"]["low"] is not None
    assert report["judge_calls"] == 9  # one per turn, and one more for the unusable reply


@pytest.mark.parametrize(("line", "problem"), [
    ('{"id": "a", "text": "x", "labels": {"kind": "yes"}}', r"labels\.jsonl:1: labels: .*unknown criterion 'kind'"),
    ('{"id": "a", "text": "x", "labels": {"correct": "maybe"}}', r"labels\.jsonl:1: labels\.correct"),
    ('{"id": "a", "labels": {"correct": "yes"}}', r"labels\.jsonl:1: text: Field required"),
    ("[1]", r"labels\.jsonl:1: a labelled turn is a JSON object"),
])
def test_a_bad_labels_file_is_refused_with_its_line(tmp_path: Path, line: str, problem: str) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_text(line + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=problem):
        read_labels(path)
    result = CliRunner().invoke(app, ["judge", "calibrate", str(path), "--judge", "demo"])
    assert result.exit_code == 2 and "Traceback" not in result.output
