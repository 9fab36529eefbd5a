"""lisboa_rules/sim/stats.py against known answers and by simulation."""

from __future__ import annotations

import math
import random
import statistics

import pytest

from lisboa_rules.sim import stats


@pytest.mark.parametrize(
    ("wins", "n", "lo", "hi"),
    [
        (97, 156, 0.544, 0.694),  # the known answer: [54.4%, 69.4%]
        (0, 10, 0.0, 0.2775),  # Wilson never leaves [0, 1]; the upper bound of 0 of 10
        (10, 10, 0.7225, 1.0),
        (50, 100, 0.4038, 0.5962),
        (1, 3, 0.0615, 0.7923),
    ],
)
def test_wilson_known_answers(wins: int, n: int, lo: float, hi: float) -> None:
    got = stats.wilson(wins, n)
    assert got[0] == pytest.approx(lo, abs=6e-4) and got[1] == pytest.approx(hi, abs=6e-4)


def test_wilson_of_no_games_is_everything() -> None:
    assert stats.wilson(0, 0) == (0.0, 1.0)


def _binomial(rng: random.Random, n: int, p: float) -> int:
    return sum(rng.random() < p for _ in range(n))


@pytest.mark.parametrize(("p", "n"), [(0.5, 100), (0.3, 156), (0.62, 156), (0.15, 200)])
def test_wilson_covers_the_true_rate_about_95_percent(p: float, n: int) -> None:
    """Over 2,000 repeated samples of a known win rate, the 95% interval holds it 93-97% of
    the time (exact binomial sampling)."""
    rng = random.Random(f"coverage:{p}:{n}")
    reps = 2000
    covered = 0
    for _ in range(reps):
        lo, hi = stats.wilson(_binomial(rng, n, p), n)
        covered += lo <= p <= hi
    assert 0.93 <= covered / reps <= 0.97, covered / reps


@pytest.mark.parametrize(
    "values", [[1, 2, 3, 4, 5], [7], [2.5, 2.5, 9.0, -1.0], list(range(100)), [3, 1, 2, 10, 4, 4]]
)
def test_summary_matches_the_standard_library(values: list[float]) -> None:
    s = stats.summary(values)
    assert s["mean"] == pytest.approx(statistics.fmean(values), abs=1e-4)
    assert s["sd"] == pytest.approx(statistics.stdev(values) if len(values) > 1 else 0.0, abs=1e-4)
    if len(values) > 1:  # type 7 quantiles: statistics' "inclusive" method
        qs = statistics.quantiles(values, n=20, method="inclusive")
        assert s["q05"] == pytest.approx(qs[0], abs=1e-4)
        assert s["q50"] == pytest.approx(statistics.median(values), abs=1e-4)
        assert s["q95"] == pytest.approx(qs[-1], abs=1e-4)
    assert list(s) == ["mean", "sd", "q05", "q50", "q95"]


def test_paired_difference_and_interval() -> None:
    a = [1.0, 2.0, 3.0, 4.0]
    b = [2.0, 2.0, 5.0, 5.0]
    d = stats.paired(a, b)
    diffs = [1.0, 0.0, 2.0, 1.0]
    half = stats.Z95 * statistics.stdev(diffs) / math.sqrt(4)
    assert d["diff"] == pytest.approx(1.0)
    assert d["ci95"] == pytest.approx([1.0 - half, 1.0 + half], abs=1e-4)
    assert d["significant"] is True
    same = stats.paired(a, a)
    assert same["diff"] == 0 and same["ci95"] == [0.0, 0.0] and same["significant"] is False
    with pytest.raises(ValueError):
        stats.paired([1.0], [1.0, 2.0])


@pytest.mark.parametrize("shift", [0.0, 0.1])
def test_paired_interval_covers_the_true_difference(shift: float) -> None:
    """The paired interval of win indicators holds the true difference about 95% of the
    time (here 400 repetitions of 200 paired games)."""
    rng = random.Random(f"paired:{shift}")
    reps, covered = 400, 0
    for _ in range(reps):
        a, b = [], []
        for _ in range(200):
            u = rng.random()
            a.append(float(u < 0.4))
            b.append(float(u < 0.4 + shift))
        lo, hi = stats.paired(a, b)["ci95"]  # type: ignore[misc]
        covered += lo - 1e-9 <= shift <= hi + 1e-9
    assert covered / reps >= (0.9 if shift else 0.99)
