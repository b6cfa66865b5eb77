"""95% intervals and comparisons in batch reports (report/report_stats.py)."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from maic_cli.evaluation.run_results import RunResult
from maic_cli.report import report_stats
from maic_cli.report.report_stats import (
    RESAMPLES,
    SEED,
    bootstrap_difference,
    bootstrap_mean,
    compare,
    newcombe_difference,
    wilson,
)
from tests.helpers import decision, reply
from tests.test_run import GOOD_ROUND, QA_SCENARIO, run, script, write


def bounds(interval: tuple[float, float] | None) -> tuple[float, float]:
    assert interval is not None
    return round(interval[0], 3), round(interval[1], 3)


def test_wilson_bounds_match_hand_checked_values() -> None:
    assert bounds(wilson(8, 10)) == (0.490, 0.943)
    assert bounds(wilson(0, 4)) == (0.0, 0.490)
    assert bounds(wilson(4, 4)) == (0.510, 1.0)
    assert bounds(wilson(1, 2)) == (0.095, 0.905)
    assert wilson(0, 0) is None


def test_newcombe_difference_matches_the_published_example() -> None:
    # Newcombe (1998), Statistics in Medicine 17:873, table II example (56/70 vs 48/80), method 10.
    assert bounds(newcombe_difference(56, 70, 48, 80)) == (0.052, 0.334)
    assert newcombe_difference(1, 2, 0, 0) is None


def test_bootstrap_is_reproducible_with_its_seed_and_brackets_the_mean() -> None:
    values = [1.1, 2.3, 2.9, 4.7, 7.3, 3.05, 5.2, 0.4]
    first, again = bootstrap_mean(values), bootstrap_mean(values)
    assert first == again
    assert first is not None and min(values) <= first[0] < sum(values) / len(values) < first[1] <= max(values)
    assert bootstrap_mean(values, seed=1, resamples=200) != bootstrap_mean(values, seed=2, resamples=200)
    assert bootstrap_mean([3.0, 3.0, 3.0]) == (3.0, 3.0)
    assert bootstrap_mean([3.0]) is None
    assert bootstrap_difference([5.0, 6.0, 5.5], [1.0, 1.5, 1.2]) == bootstrap_difference([5.0, 6.0, 5.5],
                                                                                          [1.0, 1.5, 1.2])
    low, high = bounds(bootstrap_difference([5.0, 6.0, 5.5], [1.0, 1.5, 1.2]))
    assert 3.5 <= low < high <= 5.0


def _result(model: str, repeat: int, passed: bool) -> RunResult:
    return RunResult(run_id=f"{model}-{repeat}", scenario="s", scenario_path="s.yaml", model=model, repeat=repeat,
                     status="complete", failures=[] if passed else ["round 1: missed"])


@pytest.mark.parametrize(("a_passes", "b_passes", "verdict"), [
    (10, 0, "larger than the noise"), (6, 5, "within the noise")])
def test_two_pass_rates_are_compared_by_newcombes_interval(a_passes: int, b_passes: int, verdict: str) -> None:
    a = [_result("a", k, k <= a_passes) for k in range(1, 11)]
    b = [_result("b", k, k <= b_passes) for k in range(1, 11)]
    result = compare("pass_rate", a, b)
    assert result["method"] == "newcombe" and result["verdict"] == verdict
    assert result["difference"] == pytest.approx((a_passes - b_passes) / 10)
    assert compare("pass_rate", a[:1], b)["verdict"] == "too few runs"


def test_two_model_batch_reports_intervals_and_a_comparison(tmp_path: Path) -> None:
    scenario = write(tmp_path / "sky.yaml", QA_SCENARIO)
    talkative = script(tmp_path, *GOOD_ROUND, name="talkative.json")  # two agents, then hands back: cue_user
    brief = script(tmp_path, decision("teacher"), reply("Scattering."), decision("END"), name="brief.json")
    out = tmp_path / "out"
    result = run(tmp_path, str(scenario), "--model", talkative, "--model", brief, "--repeat", "3",
                 "--out", str(out))
    assert result.exit_code == 0, result.output
    report = json.loads((out / "report.json").read_text())
    assert report["statistics"]["rates"] == "Wilson score interval"
    overall = report["overall"]["intervals"]
    cue = overall["rates"]["cue_user_rate"]
    assert (cue["successes"], cue["trials"], cue["value"]) == (3, 6, 0.5)
    assert (cue["low"], cue["high"]) == pytest.approx(wilson(3, 6), abs=1e-4)
    turns = overall["means"]["agent_turns_per_round"]
    assert turns["value"] == 1.5 and turns["runs"] == 6 and 1.0 <= turns["low"] < 1.5 < turns["high"] <= 2.0
    by_model = report["by_model"]
    assert len(by_model) == 2
    for name, group in by_model.items():
        pass_rate = group["intervals"]["rates"]["pass_rate"]
        assert (pass_rate["value"], pass_rate["low"], pass_rate["high"]) == (1.0, 0.4385, 1.0), name
    [pair] = report["comparisons"]["by_model"]
    assert {pair["a"], pair["b"]} == set(by_model)
    verdicts = {m["metric"]: m for m in pair["metrics"]}
    sign = 1 if "talkative" in pair["a"] else -1
    assert verdicts["cue_user_rate"]["difference"] == sign * 1.0
    assert verdicts["cue_user_rate"]["verdict"] == "larger than the noise"
    assert verdicts["agent_turns_per_round"]["method"] == "bootstrap"
    assert verdicts["agent_turns_per_round"]["verdict"] == "larger than the noise"
    assert verdicts["pass_rate"]["verdict"] == "within the noise"
    assert report["comparisons"]["by_prompts"] == [] and report["comparisons"]["by_director"] == []
    markdown = (out / "report.md").read_text()
    assert "## Uncertainty (95% intervals)" in markdown and "Wilson score interval" in markdown
    assert "percentile bootstrap over runs" in markdown and "## Comparisons" in markdown
    assert "| cue-user rate (rounds) | 1 | 0 | 1 [" in markdown or "| cue-user rate (rounds) | 0 | 1 | -1 [" in markdown
    assert "larger than the noise" in markdown


def test_a_single_run_has_values_but_no_intervals(tmp_path: Path) -> None:
    scenario = write(tmp_path / "sky.yaml", QA_SCENARIO)
    out = tmp_path / "out"
    assert run(tmp_path, str(scenario), "--model", script(tmp_path, *GOOD_ROUND), "--out", str(out)).exit_code == 0
    report = json.loads((out / "report.json").read_text())
    rate = report["overall"]["intervals"]["rates"]["cue_user_rate"]
    assert rate["value"] == 1.0 and rate["low"] is None and rate["high"] is None
    assert report["overall"]["intervals"]["means"]["tokens_per_run"]["low"] is None
    assert "## Uncertainty" not in (out / "report.md").read_text()


_REAL_GENERATOR = np.random.default_rng


def _drawn_afresh(values: list[float], seed: int, resamples: int) -> Any:
    """The resampled means as the bootstrap first computed them: a new generator and new draws each time."""
    data = np.asarray(values, dtype=float)
    return data[_REAL_GENERATOR(seed).integers(0, len(data), size=(resamples, len(data)))].mean(axis=1)


def test_bootstrap_reuses_its_draws_yet_gives_bit_identical_intervals(monkeypatch: pytest.MonkeyPatch) -> None:
    report_stats._cached_draws.clear()
    report_stats._cached_bounds.clear()
    generators = []
    real = _REAL_GENERATOR
    monkeypatch.setattr(np.random, "default_rng", lambda seed: generators.append(seed) or real(seed))
    rng = real(7)
    groups = [list(rng.normal(3.0, 1.0, 50)), list(rng.exponential(0.2, 50)), [0.1] * 50, list(rng.random(50))]
    for values in [*groups, *groups]:  # same size: one draw serves all; the second pass only looks up
        assert bootstrap_mean(values) == report_stats.percentiles(_drawn_afresh(values, SEED, RESAMPLES), 0.95)
    assert generators == [SEED]
    x, y = groups[0], groups[1][:20]
    afresh = real(SEED)
    expected = report_stats.percentiles(
        np.asarray(x)[afresh.integers(0, 50, size=(RESAMPLES, 50))].mean(axis=1)
        - np.asarray(y)[afresh.integers(0, 20, size=(RESAMPLES, 20))].mean(axis=1), 0.95)
    assert bootstrap_difference(x, y) == expected == bootstrap_difference(x, y)
    assert bootstrap_difference(y, x) != expected  # another pair of sizes: its own draws
    assert generators == [SEED, SEED, SEED]



@settings(deadline=None, max_examples=60)
@given(st.lists(st.lists(st.floats(-1e6, 1e6), min_size=2, max_size=12), min_size=1, max_size=4),
       st.integers(0, 3))
def test_bootstrap_cache_never_changes_an_interval(groups: list[list[float]], seed: int) -> None:
    for values in [*groups, *reversed(groups)]:
        assert bootstrap_mean(values, seed=seed, resamples=64) == report_stats.percentiles(
            _drawn_afresh(values, seed, 64), 0.95)


@pytest.mark.parametrize("size", [2, 3, 7, 8, 9, 50, 127, 128, 129, 333, 1000, 1500])
def test_resampled_means_gathered_a_block_at_a_time_are_bit_identical(size: int) -> None:
    data = np.random.default_rng(size).standard_normal(size) * np.random.default_rng(size + 1).exponential(5, size)
    indices = _REAL_GENERATOR(SEED).integers(0, size, size=(RESAMPLES + 77, size))  # a last, partial block
    assert np.array_equal(report_stats._means_of(data, indices), data[indices].mean(axis=1))


def test_a_difference_goes_on_from_the_first_group_s_draws_and_means_bit_for_bit() -> None:
    for cache in (report_stats._cached_draws, report_stats._cached_bounds, report_stats._cached_means):
        cache.clear()
    rng = _REAL_GENERATOR(3)
    groups = {n: list(rng.exponential(1.0, n)) for n in (40, 25, 60)}
    for values in groups.values():  # each group's own interval first, as a report does
        bootstrap_mean(values)
    for (n1, x), (n2, y) in itertools.permutations(groups.items(), 2):
        afresh = _REAL_GENERATOR(SEED)
        first = np.asarray(x)[afresh.integers(0, n1, size=(RESAMPLES, n1))].mean(axis=1)
        second = np.asarray(y)[afresh.integers(0, n2, size=(RESAMPLES, n2))].mean(axis=1)
        assert bootstrap_difference(x, y) == report_stats.percentiles(first - second, 0.95), (n1, n2)


def test_the_draws_kept_stay_within_their_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    report_stats._cached_draws.clear()
    monkeypatch.setattr(report_stats, "MAX_CACHED_DRAWS", 100 * 30)
    for sizes in [(10,), (10, 5), (8,), (12,), (20,)]:
        drawn = report_stats._draws(SEED, sizes, 100)
        afresh = _REAL_GENERATOR(SEED)
        assert all(np.array_equal(d, afresh.integers(0, n, size=(100, n))) for d, n in zip(drawn, sizes, strict=True))
        assert sum(count * sum(kept) for _, kept, count in report_stats._cached_draws) <= 100 * 30
    assert list(report_stats._cached_draws) == [(SEED, (20,), 100)]


@pytest.mark.parametrize(("value", "size"), [(0.1, 10), (0.1, 1000), (1.0, 3), (0.0, 50), (7.3e-05, 333)])
def test_the_resampled_means_of_one_value_repeated_are_bit_identical(value: float, size: int) -> None:
    data = np.full(size, value)
    indices = _REAL_GENERATOR(SEED).integers(0, size, size=(RESAMPLES, size))
    assert np.array_equal(report_stats._means_of(data, indices), data[indices].mean(axis=1))
