"""Statistics of simulated games, in pure standard-library math.

- `wilson`: the Wilson score interval of a proportion (a win rate), 95% by default;
- `summary`: mean, standard deviation and the 5%, 50% and 95% quantiles of a sample;
- `paired`: the mean of per-seed differences between two rule sets played on the same seeds,
  with a 95% interval from the normal approximation of the differences (win indicators
  included: the paired interval of a difference of two win rates).

Every figure is a float rounded to `DIGITS` places, so that JSON output is stable.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist

DIGITS = 4
Z95 = NormalDist().inv_cdf(0.975)  # 1.959963...


def _r(x: float) -> float:
    return round(x, DIGITS) + 0.0  # + 0.0: no -0.0 in the output


def wilson(wins: float, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of `wins` successes in `n` trials (fractions of 1); (0, 1)
    when there are no trials."""
    if n <= 0:
        return (0.0, 1.0)
    p = wins / n
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z / (1 + z2 / n) * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    return (max(0.0, centre - half), min(1.0, centre + half))


def mean(values: Sequence[float]) -> float:
    return math.fsum(values) / len(values) if values else 0.0


def sd(values: Sequence[float]) -> float:
    """The sample standard deviation (n - 1); 0 for fewer than two values."""
    n = len(values)
    if n < 2:
        return 0.0
    m = mean(values)
    return math.sqrt(math.fsum((v - m) ** 2 for v in values) / (n - 1))


def quantile(values: Sequence[float], q: float) -> float:
    """The q-quantile by linear interpolation between order statistics (numpy's default,
    Hyndman and Fan's type 7); 0 for no values."""
    if not values:
        return 0.0
    xs = sorted(values)
    pos = (len(xs) - 1) * q
    lo = math.floor(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def summary(values: Sequence[float]) -> dict[str, float]:
    """mean, sd, q05, q50, q95 (keys in that order)."""
    return {
        "mean": _r(mean(values)),
        "sd": _r(sd(values)),
        "q05": _r(quantile(values, 0.05)),
        "q50": _r(quantile(values, 0.50)),
        "q95": _r(quantile(values, 0.95)),
    }


def paired(a: Sequence[float], b: Sequence[float], z: float = Z95) -> dict[str, object]:
    """The per-seed differences b - a: their mean and its 95% interval (normal approximation:
    mean +- z * sd / sqrt(n)), and whether the interval leaves out 0."""
    if len(a) != len(b):
        raise ValueError(f"paired samples of different sizes: {len(a)} and {len(b)}")
    diffs = [y - x for x, y in zip(a, b, strict=True)]
    m = mean(diffs)
    half = z * sd(diffs) / math.sqrt(len(diffs)) if diffs else 0.0
    lo, hi = m - half, m + half
    return {
        "base": _r(mean(a)),
        "other": _r(mean(b)),
        "diff": _r(m),
        "ci95": [_r(lo), _r(hi)],
        "significant": bool(diffs) and (lo > 0 or hi < 0),
    }


def rounded(x: float) -> float:
    """A figure as the reports print it."""
    return _r(x)
