"""95% intervals for a batch report's rates and means, and whether two groups differ beyond the noise.

* A **rate** (pass rate, cue-user rate, share of rounds with a repeated speaker …)
  gets a Wilson score interval (a closed formula; its z is the stdlib's normal
  quantile).  Rounds of one run are counted as independent trials, which they
  are not quite, so a round rate's interval is somewhat too narrow.
* A **mean** (agent turns per round, turn latency, tokens and cost per run …) is
  computed per run and then averaged over runs; its interval is a percentile
  bootstrap over runs (numpy, ``RESAMPLES`` resamples, fixed ``SEED``: the same
  runs give the same report).
* A **difference** between two groups (two models, prompt sets or director
  policies): for a rate, Newcombe's hybrid score interval (built from the two
  Wilson intervals); for a mean, a bootstrap of the difference of means (each
  group resampled on its own).  The difference is *larger than the noise* when
  its 95% interval leaves out zero.

A group needs ``MIN_RUNS`` runs for intervals (``maic run --repeat K`` with K ≥ 2).
numpy is imported inside the functions: ``maic run --help`` stays light.

Speed without changing a digit: every bootstrap starts a fresh generator from ``SEED``, so the
resample indices depend only on (seed, resamples, number of values): they are drawn once and
reused for every metric and group of that size (:func:`_draws`, within a memory budget), and a
difference's draws go on from its first group's draws and the generator's state after them.  An
interval already computed for the same values is looked up instead of recomputed (a report's
``overall`` group is often also its only scenario, model, prompt set and director), and so are a
group's resampled means when it is the first group of a difference.  The means are summed by the
same ``add.reduce`` over the same contiguous rows, gathered a block of rows at a time
(:func:`_means_of`), so the intervals are bit-identical to drawing afresh each time (the tests
compare them bit for bit).  A report puts each run in five groups; :func:`once_per_run` computes each
run's counts and per-run values once for all of them.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from statistics import NormalDist, fmean
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..evaluation.run_results import RunResult

CONFIDENCE = 0.95
SEED = 14  # any fixed number: reports must be reproducible
RESAMPLES = 4000
MIN_RUNS = 2

Interval = tuple[float, float]

METHODS = {
    "confidence": CONFIDENCE,
    "rates": "Wilson score interval",
    "means": f"percentile bootstrap over runs ({RESAMPLES} resamples, seed {SEED})",
    "rate_differences": "Newcombe hybrid score interval of the difference (from the two Wilson intervals)",
    "mean_differences": f"percentile bootstrap of the difference of means ({RESAMPLES} resamples, seed {SEED})",
    "larger_than_noise": "the difference's 95% interval leaves out zero",
    "min_runs": MIN_RUNS,
}


def _z(confidence: float) -> float:
    return NormalDist().inv_cdf(0.5 + confidence / 2)


def wilson(successes: int, trials: int, confidence: float = CONFIDENCE) -> Interval | None:
    """Wilson score interval for ``successes`` out of ``trials`` (``None`` for no trials)."""
    if trials <= 0:
        return None
    z, p = _z(confidence), successes / trials
    denominator = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def newcombe_difference(s1: int, n1: int, s2: int, n2: int, confidence: float = CONFIDENCE) -> Interval | None:
    """Interval for ``s1/n1 - s2/n2`` (Newcombe 1998, method 10)."""
    first, second = wilson(s1, n1, confidence), wilson(s2, n2, confidence)
    if first is None or second is None:
        return None
    p1, p2 = s1 / n1, s2 / n2
    (l1, u1), (l2, u2) = first, second
    difference = p1 - p2
    return (difference - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2),
            difference + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2))


MAX_CACHED_DRAWS = 16_000_000  # indices (128 MB) kept between bootstraps; larger draws are made each time
_cached_draws: dict[tuple[int, tuple[int, ...], int], tuple[tuple[Any, ...], Mapping[str, Any]]] = {}
_cached_bounds: dict[tuple[str, int, int, float, bytes], Interval] = {}
_MAX_CACHED_BOUNDS = 256


def _draws(seed: int, sizes: tuple[int, ...], resamples: int) -> tuple[Any, ...]:
    """The resample indices a fresh generator seeded ``seed`` draws, one ``(resamples, size)`` array per
    size in turn, cached (the most recent, up to :data:`MAX_CACHED_DRAWS` indices) with the generator's
    state after them: the draws for sizes ``(a, b)`` start with those for ``(a,)`` and go on from there."""
    key = (seed, sizes, resamples)
    found = _cached_draws.get(key)
    if found is not None:
        _cached_draws[key] = _cached_draws.pop(key)  # the most recent
        return found[0]
    import numpy as np

    draws: tuple[Any, ...] = ()
    for cut in range(len(sizes) - 1, 0, -1):  # the longest prefix drawn before: go on from its state
        if (prefix := _cached_draws.get((seed, sizes[:cut], resamples))) is not None:
            rng = np.random.Generator(np.random.PCG64())  # default_rng's bit generator, in the prefix's state
            draws, rng.bit_generator.state = prefix
            break
    else:
        rng = np.random.default_rng(seed)
    draws += tuple(rng.integers(0, size, size=(resamples, size)) for size in sizes[len(draws):])
    if resamples * sum(sizes) <= MAX_CACHED_DRAWS:
        while _cached_draws and resamples * sum(sizes) + sum(
                count * sum(cached) for _, cached, count in _cached_draws) > MAX_CACHED_DRAWS:
            del _cached_draws[next(iter(_cached_draws))]
        _cached_draws[key] = (draws, rng.bit_generator.state)
    return draws


def _remembered(kind: str, seed: int, resamples: int, confidence: float, groups: tuple[Any, ...],
                compute: Callable[[], Interval]) -> Interval:
    """``compute()``, or the interval it gave before for the same values (compared by their bytes)."""
    import hashlib

    digest = hashlib.blake2b(digest_size=32)
    for data in groups:
        digest.update(len(data).to_bytes(8, "little"))
        digest.update(data.tobytes())
    key = (kind, seed, resamples, confidence, digest.digest())
    found = _cached_bounds.get(key)
    if found is None:
        if len(_cached_bounds) >= _MAX_CACHED_BOUNDS:
            _cached_bounds.clear()
        found = _cached_bounds[key] = compute()
    return found


ROWS_AT_ONCE = 1024  # resamples gathered at once: 8 MB for 1,000 runs, in cache, not a fresh 32 MB array


def _means_of(data: Any, indices: Any) -> Any:
    """``data[indices].mean(axis=1)``, bit for bit: each row is the same contiguous gather summed by the same
    ``add.reduce`` and divided by its length; the rows are gathered a block at a time into one buffer
    (``mode="clip"``: the indices are in range, and numpy need not check them)."""
    import numpy as np

    resamples, size = indices.shape
    means = np.empty(resamples)
    block = np.empty((min(ROWS_AT_ONCE, resamples), size))
    if resamples and size and data.min() == data.max():  # one value: every resample gathers the same row
        first = min(ROWS_AT_ONCE, resamples)
        np.take(data, indices[:first], out=block, mode="clip")  # the first block, as below; all rows alike
        np.add.reduce(block, axis=1, out=means[:first])
        means[first:] = means[0]
        means /= size
        return means
    for start in range(0, resamples, ROWS_AT_ONCE):
        rows = indices[start:start + ROWS_AT_ONCE]
        gathered = block[:len(rows)]
        np.take(data, rows, out=gathered, mode="clip")
        np.add.reduce(gathered, axis=1, out=means[start:start + len(rows)])
    means /= size
    return means


def percentiles(samples: Any, confidence: float) -> Interval:
    import numpy as np

    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(samples, [tail, 100 - tail])
    return float(low), float(high)


def bootstrap_mean(values: Sequence[float], seed: int = SEED, resamples: int = RESAMPLES,
                   confidence: float = CONFIDENCE) -> Interval | None:
    """Percentile bootstrap interval of the mean of ``values`` (``None`` under two values)."""
    if len(values) < MIN_RUNS:
        return None
    import numpy as np

    data = np.asarray(values, dtype=float)
    return _remembered("mean", seed, resamples, confidence, (data,), lambda: percentiles(
        _first_means(data, seed, resamples), confidence))


_cached_means: dict[tuple[int, int, bytes], Any] = {}
_MAX_CACHED_MEANS = 512  # arrays of RESAMPLES means (32 KB each)


def _first_means(data: Any, seed: int, resamples: int) -> Any:
    """The means of ``data`` resampled by a fresh generator's first draws: the same for its own interval
    and as the first group of a difference (a group compared with another was given its interval
    before), so they are computed once."""
    key = (seed, resamples, data.tobytes())
    found = _cached_means.get(key)
    if found is None:
        if len(_cached_means) >= _MAX_CACHED_MEANS:
            _cached_means.clear()
        found = _cached_means[key] = _means_of(data, _draws(seed, (len(data),), resamples)[0])
    return found


def bootstrap_difference(first: Sequence[float], second: Sequence[float], seed: int = SEED,
                         resamples: int = RESAMPLES, confidence: float = CONFIDENCE) -> Interval | None:
    """Percentile bootstrap interval of ``mean(first) - mean(second)``, each resampled on its own."""
    if len(first) < MIN_RUNS or len(second) < MIN_RUNS:
        return None
    import numpy as np

    x, y = np.asarray(first, dtype=float), np.asarray(second, dtype=float)

    def compute() -> Interval:
        drawn_y = _draws(seed, (len(x), len(y)), resamples)[1]  # one generator: x's draws, then y's
        return percentiles(_first_means(x, seed, resamples) - _means_of(y, drawn_y), confidence)

    return _remembered("difference", seed, resamples, confidence, (x, y), compute)


# Rates: (successes, trials) over a group's runs.
RATES: dict[str, Callable[[list[RunResult]], tuple[int, int]]] = {
    "pass_rate": lambda rs: (sum(r.passed for r in rs), len(rs)),
    "cue_user_rate": lambda rs: _round_share(rs, lambda r: r.reason == "cue_user"),
    "repeated_speaker_rate": lambda rs: _round_share(rs, lambda r: r.repeated_speakers > 0),
    "same_role_in_a_row_rate": lambda rs: _round_share(rs, lambda r: r.same_role_in_a_row > 0),
    "second_greeting_rate": lambda rs: _round_share(rs, lambda r: r.second_greetings > 0),
    "corrected_round_rate": lambda rs: _round_share(rs, lambda r: r.director_corrections > 0),
    "empty_turn_rate": lambda rs: (sum(r.empty_turns for x in rs for r in x.rounds),
                                   sum(r.agent_turns for x in rs for r in x.rounds)),
}

RATE_LABELS = {"pass_rate": "pass rate (runs)", "cue_user_rate": "cue-user rate (rounds)",
               "repeated_speaker_rate": "rounds with a repeated speaker",
               "same_role_in_a_row_rate": "rounds with the same role twice in a row",
               "second_greeting_rate": "rounds with a second greeting",
               "corrected_round_rate": "rounds with a director correction",
               "empty_turn_rate": "empty turns (of agent turns)"}


def _round_share(results: list[RunResult], test: Callable[[Any], bool]) -> tuple[int, int]:
    rounds = [r for result in results for r in result.rounds]
    return sum(1 for r in rounds if test(r)), len(rounds)


def _mean_or_none(values: list[float]) -> float | None:
    return fmean(values) if values else None


# Means: one value per run (None when the run has none), averaged over runs.
MEANS: dict[str, Callable[[RunResult], float | None]] = {
    "agent_turns_per_round": lambda r: _mean_or_none([float(x.agent_turns) for x in r.rounds]),
    "turn_latency_s": lambda r: _mean_or_none([t for x in r.rounds for t in x.turn_latencies]),
    "ttft_s": lambda r: _mean_or_none([c.ttft for c in r.calls if c.ttft is not None]),
    "tokens_per_run": lambda r: float(sum(c.prompt_tokens + c.completion_tokens for c in r.calls)),
    "cost_per_run": lambda r: sum(c.cost for c in r.calls),
    "dropped_actions_per_run": lambda r: float(sum(x.dropped_actions for x in r.rounds)),
    "run_duration_s": lambda r: r.duration,
}

MEAN_LABELS = {"agent_turns_per_round": "agent turns per round", "turn_latency_s": "turn latency s",
               "ttft_s": "time to first token s", "tokens_per_run": "tokens per run", "cost_per_run": "cost per run",
               "dropped_actions_per_run": "dropped actions per run", "run_duration_s": "run duration s"}

COMPARED = ["pass_rate", "cue_user_rate", "repeated_speaker_rate", "empty_turn_rate",
            "agent_turns_per_round", "turn_latency_s", "tokens_per_run", "cost_per_run"]


def _r(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


RateCount = Callable[[list["RunResult"]], tuple[int, int]]
PerRun = Callable[["RunResult"], float | None]


def intervals(results: list[RunResult], *, rates: dict[str, RateCount] | None = None,
              means: dict[str, PerRun] | None = None) -> dict[str, Any]:
    """Every rate and mean of a group with its 95% interval (``low``/``high`` are ``None`` under two runs).
    ``rates``/``means``: the class's metrics (:data:`RATES`, :data:`MEANS`) or the same computed once per
    run (:func:`once_per_run`)."""
    rates, means = RATES if rates is None else rates, MEANS if means is None else means
    enough = len(results) >= MIN_RUNS
    return {"rates": {name: rate_entry(*count(results), enough) for name, count in rates.items()},
            "means": {name: mean_entry([v for v in map(per_run, results) if v is not None])
                      for name, per_run in means.items()}}


def once_per_run() -> tuple[dict[str, RateCount], dict[str, PerRun]]:
    """:data:`RATES` and :data:`MEANS` with each run's counts and values computed once, for a report that
    puts every run in five groups (overall, by scenario, model, prompt set and director).  A rate's
    counts are sums over runs of whole numbers, so a group's counts are the sums of its runs' counts,
    exactly; a mean's per-run value is the same value.  For the runs of one report (kept alive by it:
    a run is known by its ``id``)."""
    counted: dict[str, dict[int, tuple[int, int]]] = {name: {} for name in RATES}
    valued: dict[str, dict[int, float | None]] = {name: {} for name in MEANS}

    def rate(name: str) -> RateCount:
        count, known = RATES[name], counted[name]

        def counts(results: list[RunResult]) -> tuple[int, int]:
            successes = trials = 0
            for result in results:
                if (found := known.get(id(result))) is None:
                    found = known[id(result)] = count([result])
                successes += found[0]
                trials += found[1]
            return successes, trials

        return counts

    def mean(name: str) -> PerRun:
        value, known = MEANS[name], valued[name]

        def per_run(result: RunResult) -> float | None:
            key = id(result)
            if key not in known:
                known[key] = value(result)
            return known[key]

        return per_run

    return {name: rate(name) for name in RATES}, {name: mean(name) for name in MEANS}
# The interval of a rate difference between two groups, and the method's name.
RateDifference = Callable[[RateCount, list["RunResult"], list["RunResult"]], tuple[Interval | None, str]]


def newcombe_rate_difference(count: RateCount, first: list[RunResult],
                             second: list[RunResult]) -> tuple[Interval | None, str]:
    """Newcombe's interval over the pooled trials (the default; trials taken as independent)."""
    (s1, n1), (s2, n2) = count(first), count(second)
    enough = len(first) >= MIN_RUNS and len(second) >= MIN_RUNS
    return (newcombe_difference(s1, n1, s2, n2) if enough else None), "newcombe"


def compare(name: str, first: list[RunResult], second: list[RunResult], *,
            rates: dict[str, RateCount] | None = None, means: dict[str, PerRun] | None = None,
            rate_difference: RateDifference = newcombe_rate_difference) -> dict[str, Any]:
    """One metric of two groups: the difference (first − second), its interval and the verdict.
    ``rates``/``means``: where the metric is defined (default: the class's metrics above);
    ``rate_difference``: how a rate difference's interval is found."""
    rates, means = RATES if rates is None else rates, MEANS if means is None else means
    if name in rates:
        (s1, n1), (s2, n2) = rates[name](first), rates[name](second)
        a, b = (s1 / n1 if n1 else None), (s2 / n2 if n2 else None)
        bounds, method = rate_difference(rates[name], first, second)
    else:
        x = [v for v in map(means[name], first) if v is not None]
        y = [v for v in map(means[name], second) if v is not None]
        a, b = _mean_or_none(x), _mean_or_none(y)
        bounds, method = bootstrap_difference(x, y), "bootstrap"
    if bounds is None or a is None or b is None:
        verdict = "too few runs"
    elif bounds[0] > 0 or bounds[1] < 0:
        verdict = "larger than the noise"
    else:
        verdict = "within the noise"
    return {"metric": name, "a": _r(a), "b": _r(b), "difference": _r(a - b) if a is not None and b is not None
            else None, "low": _r(bounds[0]) if bounds else None, "high": _r(bounds[1]) if bounds else None,
            "method": method, "verdict": verdict}


def comparisons(groups: dict[str, list[RunResult]], metrics: list[str] | None = None, *,
                rates: dict[str, RateCount] | None = None, means: dict[str, PerRun] | None = None,
                rate_difference: RateDifference = newcombe_rate_difference) -> list[dict[str, Any]]:
    """Every pair of groups (in name order) on the main metrics; empty for fewer than two groups."""
    return [{"a": first, "b": second,
             "metrics": [compare(name, groups[first], groups[second], rates=rates, means=means,
                                 rate_difference=rate_difference)
                         for name in (COMPARED if metrics is None else metrics)]}
            for first, second in itertools.combinations(sorted(groups), 2)]


def rate_entry(successes: int, trials: int, enough: bool) -> dict[str, Any]:
    """A rate as reports hold it: value, counts and its Wilson interval (``None`` bounds when not ``enough``)."""
    bounds = wilson(successes, trials) if enough else None
    return {"value": _r(successes / trials) if trials else None, "successes": successes, "trials": trials,
            "low": _r(bounds[0]) if bounds else None, "high": _r(bounds[1]) if bounds else None}


def mean_entry(values: list[float]) -> dict[str, Any]:
    """A mean over runs as reports hold it: value, runs and its bootstrap interval."""
    bounds = bootstrap_mean(values)
    return {"value": _r(fmean(values)) if values else None, "runs": len(values),
            "low": _r(bounds[0]) if bounds else None, "high": _r(bounds[1]) if bounds else None}
