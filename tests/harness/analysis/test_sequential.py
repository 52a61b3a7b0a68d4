"""Anytime-valid confidence sequences: concrete values, coverage under continuous monitoring, and
the gates' decision rules."""

from __future__ import annotations

import functools
import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memstore.harness.analysis.sequential import (
    SequentialDecision,
    harm_seen_decision,
    no_harm_decision,
    paired_difference_cs,
    paired_difference_cs_path,
    rate_cs,
    rate_decision,
)
from memstore.harness.stats import wilson_ci

PASSED, FAILED, UNDECIDED = SequentialDecision.PASSED, SequentialDecision.FAILED, SequentialDecision.UNDECIDED


def _pairs(rng: np.random.Generator, n: int, cells: tuple[float, float, float, float]) -> tuple[list[int], list[int]]:
    """n pairs drawn with P(1,1), P(1,0), P(0,1), P(0,0) = cells."""
    cell = rng.choice(4, size=n, p=np.asarray(cells))
    return (cell <= 1).astype(int).tolist(), ((cell == 0) | (cell == 2)).astype(int).tolist()


def _shuffled(rng: np.random.Generator, a: list[int], b: list[int]) -> tuple[list[int], list[int]]:
    order = rng.permutation(len(a))
    return [a[i] for i in order], [b[i] for i in order]


# paired_difference_cs


def test_no_pairs_is_the_whole_range() -> None:
    assert paired_difference_cs([], []) == (-1.0, 1.0)


def test_one_pair_decides_nothing() -> None:
    low, high = paired_difference_cs([1], [0])
    assert low < -0.9
    assert high == 1.0


def test_all_ties_give_a_tight_interval_around_zero() -> None:
    low, high = paired_difference_cs([1] * 200, [1] * 200)
    assert low == pytest.approx(-0.031, abs=1e-9)
    assert high == pytest.approx(0.031, abs=1e-9)


def test_contains_the_truth_and_detects_a_clear_effect() -> None:
    rng = np.random.default_rng(7)
    a, b = _pairs(rng, 1000, (0.45, 0.20, 0.05, 0.30))  # d = 0.20 - 0.05 = 0.15
    low, high = paired_difference_cs(a, b)
    assert low <= 0.15 <= high
    assert 0.05 < low < 0.15 < high < 0.25
    assert no_harm_decision(low, high) is PASSED


def test_many_ties_make_it_narrower_than_none() -> None:
    rng = np.random.default_rng(3)
    ties = _shuffled(rng, [1] * 10 + [0] * 10 + [1] * 90 + [0] * 90, [0] * 10 + [1] * 10 + [1] * 90 + [0] * 90)
    none = _shuffled(rng, [1] * 100 + [0] * 100, [0] * 100 + [1] * 100)
    tied_low, tied_high = paired_difference_cs(*ties)
    bare_low, bare_high = paired_difference_cs(*none)
    assert tied_low <= 0 <= tied_high  # both samples have mean 0
    assert bare_low <= 0 <= bare_high
    assert tied_high - tied_low < 0.6 * (bare_high - bare_low)
    assert tied_high - tied_low < 0.2


def test_path_is_nested_and_ends_at_the_cs() -> None:
    rng = np.random.default_rng(11)
    a, b = _pairs(rng, 300, (0.5, 0.15, 0.1, 0.25))
    path = list(paired_difference_cs_path(a, b, every=7))
    assert [n for n, _, _ in path] == [*range(7, 301, 7), 300]
    for (_, low0, high0), (_, low1, high1) in itertools.pairwise(path):
        assert low0 <= low1 <= high1 <= high0
    assert path[-1][1:] == paired_difference_cs(a, b)


def test_order_of_arrival_matters() -> None:
    a, b = [1] * 20 + [0] * 20 + [1] * 20, [0] * 20 + [1] * 20 + [1] * 20  # wins, losses, ties: mean 0
    low, high = paired_difference_cs(a, b)
    assert low <= 0 <= high
    assert (low, high) != paired_difference_cs(a[::-1], b[::-1])


def test_an_emptied_intersection_falls_back_to_the_current_cs() -> None:
    """All wins, then as many losses: no single mean fits the whole path (not one stationary
    sequence); the interval falls back to the candidates the capital rejects now."""
    a, b = [1] * 30 + [0] * 30, [0] * 30 + [1] * 30
    low, high = paired_difference_cs(a, b)
    assert -0.5 < low < 0 < high < 0.5
    assert no_harm_decision(low, high) is UNDECIDED


def test_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="same length"):
        paired_difference_cs([1, 0], [1])
    with pytest.raises(ValueError, match="0 or 1"):
        paired_difference_cs([2, 0], [1, 0])
    with pytest.raises(ValueError, match="alpha"):
        list(paired_difference_cs_path([1], [0], alpha=0.0))


@pytest.mark.parametrize(
    ("cells", "truth"),
    [((0.45, 0.15, 0.05, 0.35), 0.10), ((0.49, 0.03, 0.03, 0.45), 0.0)],
    ids=["d=0.10, a fifth discordant", "d=0, mostly ties"],
)
def test_anytime_coverage_under_continuous_monitoring(cells: tuple[float, ...], truth: float) -> None:
    """300 seeded sequences of 500 pairs, looked at after every pair: the truth falls outside
    the CS at any time in at most alpha (5%) of them, plus Monte Carlo slack (a coarser grid
    than the default only widens the intervals)."""
    rng = np.random.default_rng(2023)
    missed = 0
    for _ in range(300):
        a, b = _pairs(rng, 500, cells)  # type: ignore[arg-type]
        missed += any(not low <= truth <= high for _, low, high in paired_difference_cs_path(a, b, grid=201))
    assert missed / 300 <= 0.07


# rate_cs


def test_rate_cs_concrete_values() -> None:
    assert rate_cs(0, 0) == (0.0, 1.0)
    # one trial: the Beta(1/2, 1/2) mixture of p^k (1-p)^(n-k) is 1/2, so the bound is 1/2 / 20
    assert rate_cs(1, 1) == pytest.approx((0.025, 1.0), abs=1e-9)
    assert rate_cs(0, 1) == pytest.approx((0.0, 0.975), abs=1e-9)
    assert rate_cs(50, 100) == pytest.approx((0.33826, 0.66174), abs=1e-5)
    assert rate_cs(95, 100) == pytest.approx((0.84421, 0.99285), abs=1e-5)


def test_rate_cs_ends() -> None:
    for n in (1, 10, 1000):
        assert rate_cs(0, n)[0] == 0.0
        assert rate_cs(n, n)[1] == 1.0


def test_rate_cs_narrows_with_n_and_moves_with_k() -> None:
    widths = [high - low for low, high in (rate_cs(3 * n // 10, n) for n in (10, 100, 1_000, 10_000, 1_000_000))]
    assert widths == sorted(widths, reverse=True)
    bounds = [rate_cs(k, 50) for k in range(51)]
    assert all(x[0] < y[0] or x[0] == y[0] == 0.0 for x, y in itertools.pairwise(bounds))
    assert all(x[1] < y[1] or x[1] == y[1] == 1.0 for x, y in itertools.pairwise(bounds))
    assert rate_cs(30, 100, alpha=0.01)[0] < rate_cs(30, 100, alpha=0.05)[0] < rate_cs(30, 100, alpha=0.2)[0]


def test_rate_cs_is_stable_at_a_million() -> None:
    low, high = rate_cs(500_000, 1_000_000)
    assert 0.4975 < low < 0.5 < high < 0.5025
    assert high - 0.5 == pytest.approx(0.5 - low, rel=1e-6)
    low, high = rate_cs(1, 1_000_000)
    assert 0 < low < 1e-6 < high < 2e-5
    assert rate_cs(999_999, 1_000_000)[1] < 1.0
    assert all(math.isfinite(x) for x in rate_cs(3, 10**9))


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 2000).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_rate_cs_brackets_the_estimate_and_contains_wilson(kn: tuple[int, int]) -> None:
    k, n = kn
    low, high = rate_cs(k, n)
    assert 0.0 <= low <= k / n <= high <= 1.0
    wilson_low, wilson_high = wilson_ci(k, n)  # fixed-n 95%: an anytime CS must be wider
    assert low <= wilson_low
    assert high >= wilson_high


def test_rate_cs_anytime_coverage() -> None:
    """300 seeded sequences of 500 units at p = 0.9, looked at every 5: the truth is outside the
    CS at some look in at most 5% of them (plus slack)."""
    rng = np.random.default_rng(5)
    cached = functools.lru_cache(maxsize=None)(rate_cs)
    missed = 0
    for _ in range(300):
        counts = np.cumsum(rng.random(500) < 0.9)
        missed += any(not cached(int(counts[n - 1]), n)[0] <= 0.9 <= cached(int(counts[n - 1]), n)[1]
                      for n in range(5, 501, 5))  # fmt: skip
    assert missed / 300 <= 0.07


def test_rate_cs_rejects_bad_counts() -> None:
    with pytest.raises(ValueError, match="k <= n"):
        rate_cs(5, 4)
    with pytest.raises(ValueError, match="alpha"):
        rate_cs(1, 4, alpha=1.5)


# decisions


def test_decision_values() -> None:
    assert [d.value for d in SequentialDecision] == ["passed", "failed", "undecided"]
    assert SequentialDecision("passed") is PASSED


@pytest.mark.parametrize(
    ("low", "high", "no_harm", "harm_seen"),
    [
        (-0.03, 0.02, PASSED, FAILED),  # harm of 0.05 ruled out
        (-0.20, -0.01, FAILED, PASSED),  # significantly worse
        (-0.04, -0.01, FAILED, PASSED),  # both: significantly worse wins
        (-0.10, 0.05, UNDECIDED, UNDECIDED),
        (-0.05, 0.10, UNDECIDED, UNDECIDED),  # the margin itself is not ruled out
        (-0.20, 0.0, UNDECIDED, UNDECIDED),  # 0 itself is not ruled out
    ],
)
def test_paired_decisions(low: float, high: float, no_harm: SequentialDecision, harm_seen: SequentialDecision) -> None:
    assert no_harm_decision(low, high) is no_harm
    assert harm_seen_decision(low, high) is harm_seen


def test_paired_decisions_take_a_margin() -> None:
    assert no_harm_decision(-0.08, 0.1, margin=0.1) is PASSED
    assert harm_seen_decision(-0.08, 0.1, margin=0.1) is FAILED


def test_rate_decisions() -> None:
    assert rate_decision(0.96, 0.99, 0.95, at_least=True) is PASSED
    assert rate_decision(0.95, 0.99, 0.95, at_least=True) is PASSED  # the bar itself meets it
    assert rate_decision(0.85, 0.94, 0.95, at_least=True) is FAILED
    assert rate_decision(0.93, 0.97, 0.95, at_least=True) is UNDECIDED
    assert rate_decision(0.0, 0.015, 0.02, at_least=False) is PASSED
    assert rate_decision(0.03, 0.08, 0.02, at_least=False) is FAILED
    assert rate_decision(0.01, 0.03, 0.02, at_least=False) is UNDECIDED


def test_rate_cs_feeds_the_rate_gate() -> None:
    assert rate_decision(*rate_cs(990, 1000), 0.95, at_least=True) is PASSED
    assert rate_decision(*rate_cs(880, 1000), 0.95, at_least=True) is FAILED
    assert rate_decision(*rate_cs(48, 50), 0.95, at_least=True) is UNDECIDED
