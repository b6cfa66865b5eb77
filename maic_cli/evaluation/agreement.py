"""How far a judge agrees with a person: accuracy, macro-F1 and Cohen's κ, with bootstrap intervals.

Each item is a pair (the person's label, the judge's label) for one dimension of
one labelled turn.  Over a dimension's pairs:

* **accuracy** is the share of pairs that agree;
* **macro-F1** is the mean over the labels that occur (in either column) of each
  label's F1 (a label never predicted nor present scores nothing; one absent from
  both columns is not counted);
* **Cohen's κ** is ``(p_o − p_e) / (1 − p_e)`` with ``p_e`` the agreement expected
  from the two columns' label shares; when ``p_e`` is 1 (both always say the same
  one label) κ is 1 if they agree everywhere, else undefined (``None``).

The 95% interval of each is a percentile bootstrap over the items (pairs resampled,
:data:`RESAMPLES` times, seed :data:`SEED`: the same labels give the same report);
none under :data:`MIN_ITEMS` items.  Pure: the standard library only.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Sequence

Pair = tuple[str, str]  # (the person's label, the judge's)
RESAMPLES = 2000
SEED = 14
MIN_ITEMS = 5
CONFIDENCE = 0.95


def accuracy(pairs: Sequence[Pair]) -> float | None:
    return sum(a == b for a, b in pairs) / len(pairs) if pairs else None


def macro_f1(pairs: Sequence[Pair]) -> float | None:
    if not pairs:
        return None
    labels = sorted({label for pair in pairs for label in pair})
    scores = []
    for label in labels:
        tp = sum(a == label and b == label for a, b in pairs)
        fp = sum(a != label and b == label for a, b in pairs)
        fn = sum(a == label and b != label for a, b in pairs)
        scores.append(2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 0.0)
    return sum(scores) / len(scores)


def cohen_kappa(pairs: Sequence[Pair]) -> float | None:
    if not pairs:
        return None
    n = len(pairs)
    observed = sum(a == b for a, b in pairs) / n
    people, judge = Counter(a for a, _ in pairs), Counter(b for _, b in pairs)
    expected = sum(people[label] * judge[label] for label in people) / (n * n)
    if expected >= 1.0:
        return 1.0 if observed >= 1.0 else None
    return (observed - expected) / (1 - expected)


METRICS: dict[str, Callable[[Sequence[Pair]], float | None]] = {
    "accuracy": accuracy, "macro_f1": macro_f1, "kappa": cohen_kappa}


def bootstrap(pairs: Sequence[Pair], metric: Callable[[Sequence[Pair]], float | None],
              resamples: int = RESAMPLES, seed: int = SEED) -> tuple[float, float] | None:
    """Percentile bootstrap interval of ``metric`` over the pairs (resamples where it is undefined are
    left out; ``None`` under ``MIN_ITEMS`` pairs or when too few resamples are defined)."""
    if len(pairs) < MIN_ITEMS:
        return None
    rng = random.Random(seed)
    values = sorted(v for v in (metric([pairs[rng.randrange(len(pairs))] for _ in pairs])
                                for _ in range(resamples)) if v is not None)
    if len(values) < resamples // 2:
        return None
    tail = (1 - CONFIDENCE) / 2
    return values[int(tail * (len(values) - 1))], values[int((1 - tail) * (len(values) - 1))]


def agreement(pairs: Sequence[Pair]) -> dict[str, object]:
    """Every metric of one dimension with its interval, and the counts behind it."""
    out: dict[str, object] = {"items": len(pairs), "agree": sum(a == b for a, b in pairs),
                              "person": dict(sorted(Counter(a for a, _ in pairs).items())),
                              "judge": dict(sorted(Counter(b for _, b in pairs).items()))}
    for name, metric in METRICS.items():
        value = metric(pairs)
        bounds = bootstrap(pairs, metric) if value is not None else None
        out[name] = {"value": None if value is None else round(value, 4),
                     "low": round(bounds[0], 4) if bounds else None, "high": round(bounds[1], 4) if bounds else None}
    return out
