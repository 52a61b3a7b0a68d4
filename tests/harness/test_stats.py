"""Statistics against published values (sources in each test's docstring)."""

from __future__ import annotations

import math
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.stats.multitest import multipletests

from memstore.harness.stats import (
    _prf,
    _prf_rows,
    adjust_pvalues,
    chisq_proportions,
    fisher_exact,
    mcnemar,
    min_detectable_effect,
    newcombe_diff_ci,
    newcombe_paired_ci,
    paired_bootstrap,
    paired_difference,
    power_two_proportions,
    sample_size_two_proportions,
    two_proportion_ztest,
    wilson_ci,
)


def test_fisher_exact_scipy_docstring_table() -> None:
    """scipy.stats.fisher_exact's docstring: [[8, 2], [1, 5]], two-sided p = 0.0350."""
    result = fisher_exact([[8, 2], [1, 5]])
    assert result.p_value == pytest.approx(0.0350, abs=5e-5)
    assert result.statistic == pytest.approx(20.0)


def test_prop_test_smokers() -> None:
    """R's ?prop.test: smokers c(83, 90, 129, 70) of c(86, 93, 136, 82): X-squared = 12.6, p = 0.005585."""
    result = chisq_proportions([83, 90, 129, 70], [86, 93, 136, 82])
    assert result.statistic == pytest.approx(12.6, abs=5e-4)
    assert result.p_value == pytest.approx(0.005585, abs=5e-7)


def test_two_proportion_z_squared_is_the_chi_square() -> None:
    """For two groups the pooled z-test and prop.test(correct = FALSE) agree: z^2 = X-squared."""
    z = two_proportion_ztest(83, 86, 90, 93)
    chi = chisq_proportions([83, 90], [86, 93])
    assert z.statistic**2 == pytest.approx(chi.statistic)
    assert z.p_value == pytest.approx(chi.p_value)


def test_wilson_newcombe_1998() -> None:
    """Newcombe (1998), Statistics in Medicine 17:857: 81/263 -> Wilson interval 0.2553 to 0.3662."""
    low, high = wilson_ci(81, 263)
    assert (round(low, 4), round(high, 4)) == (0.2553, 0.3662)


def test_newcombe_difference_interval() -> None:
    """Newcombe (1998) method 10: 56/70 - 48/80 = 0.2000, 95% CI 0.0524 to 0.3339."""
    low, high = newcombe_diff_ci(56, 70, 48, 80)
    assert (round(low, 4), round(high, 4)) == (0.0524, 0.3339)


def test_power_prop_test() -> None:
    """R's ?power.prop.test: n = 50, p1 = .50, p2 = .75 gives power 0.740; power .90 needs n = 76.7."""
    assert power_two_proportions(0.50, 0.75, 50) == pytest.approx(0.7401659, abs=1e-6)
    assert sample_size_two_proportions(0.50, 0.75, power=0.90) == pytest.approx(76.7, abs=0.05)


def test_mcnemar_agresti_presidential_approval() -> None:
    """Agresti, Categorical Data Analysis: discordant 150 and 86, chi-square 17.36 (no correction)."""
    result = mcnemar(150, 86, exact=False)
    assert result.statistic == pytest.approx(17.356, abs=1e-3)
    assert result.p_value < 0.0001


def test_mcnemar_exact_and_mid_p_by_hand() -> None:
    """b = 1, c = 8: exact p = 2 (1 + 9) / 512; mid-p = 2 (1 + 9/2) / 512."""
    result = mcnemar(1, 8)
    assert result.p_value == pytest.approx(20 / 512)
    assert result.mid_p == pytest.approx(11 / 512)
    assert result.statistic == 1


def test_holm_and_bh_match_r_p_adjust() -> None:
    """R: p.adjust(c(0.01, 0.04, 0.03, 0.005), "holm") and "BH"."""
    assert adjust_pvalues([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert adjust_pvalues([0.01, 0.04, 0.03, 0.005], "bh") == pytest.approx([0.02, 0.04, 0.04, 0.02])


def test_paired_difference_by_hand() -> None:
    """d = (1, 0, 0, 1): mean 0.5, sd 0.5774, se 0.2887, t = 1.732 on 3 df, p = 0.1817."""
    result = paired_difference([1, 1, 0, 1], [0, 1, 0, 0])
    assert result.mean_diff == 0.5
    assert result.se == pytest.approx(0.288675, abs=1e-6)
    assert result.p_value == pytest.approx(0.1817, abs=1e-4)


def test_clustered_standard_error_by_hand() -> None:
    """Two tasks of two trials each, d = (1, 1, 0, 0): cluster sums of d - mean are (1, -1);
    CR1 se = sqrt(G / (G - 1) * (1 + 1)) / n = sqrt(4) / 4 = 0.5, against 0.2887 unclustered."""
    result = paired_difference([1, 1, 1, 1], [0, 0, 1, 1], clusters=["t1", "t1", "t2", "t2"])
    assert result.mean_diff == 0.5
    assert result.se == pytest.approx(0.5)
    assert result.clusters == 2
    assert paired_difference([1, 1, 1, 1], [0, 0, 1, 1]).se == pytest.approx(math.sqrt(1 / 3) / 2)


def test_paired_bootstrap_is_seeded_and_signed() -> None:
    better = [(4, 0, 1)] * 10 + [(3, 1, 1)] * 10
    worse = [(2, 2, 3)] * 10 + [(3, 1, 1)] * 10
    first = paired_bootstrap(better, worse, metric="f1", seed=7, n_resamples=500)
    assert first == paired_bootstrap(better, worse, metric="f1", seed=7, n_resamples=500)
    assert first.estimate > 0
    assert first.low > 0
    assert first.p_value == 1 / 500  # every resample is above zero: reported at the resolution


@given(st.lists(st.tuples(st.integers(0, 50), st.integers(0, 50), st.integers(0, 50)), min_size=1, max_size=30))
def test_the_bootstraps_rates_equal_the_scalar_formula_to_the_bit(rows: list[tuple[int, int, int]]) -> None:
    found = _prf_rows(np.asarray(rows, dtype=float))
    assert [tuple(float(v) for v in row) for row in found] == [_prf(*map(float, row)) for row in rows]


def test_seeds_figures_need_this_many() -> None:
    """83% vs 90% at p < 0.00001 with 80% power: about 1,316 per arm unpaired; fewer when paired."""
    unpaired = sample_size_two_proportions(0.83, 0.90, alpha=1e-5, power=0.8)
    assert round(unpaired) == 1316
    assert sample_size_two_proportions(0.83, 0.90, alpha=1e-5, power=0.8, paired=True, rho=0.3) < unpaired


def test_minimum_detectable_effect_shrinks_with_n() -> None:
    assert min_detectable_effect(0.83, 2000) < min_detectable_effect(0.83, 500) < min_detectable_effect(0.83, 100)


@given(st.integers(0, 500), st.integers(1, 500))
def test_wilson_interval_holds_the_estimate(k: int, extra: int) -> None:
    n = k + extra
    low, high = wilson_ci(k, n)
    assert 0.0 <= low <= k / n <= high <= 1.0


@settings(max_examples=20)
@given(st.lists(st.floats(0, 1), min_size=1, max_size=40))
def test_adjusted_pvalues_equal_statsmodels_to_the_bit(pvals: list[float]) -> None:
    # statsmodels' Holm runs a full garbage collection on every call: 0.25 s in a test worker
    # that holds the suite's objects, and nothing to do with the values it returns
    with mock.patch("gc.collect", return_value=0):
        for method, theirs in (("holm", "holm"), ("bh", "fdr_bh")):
            assert adjust_pvalues(pvals, method) == [float(p) for p in multipletests(pvals, method=theirs)[1]]


@given(st.lists(st.floats(0, 1), min_size=1, max_size=20))
def test_adjusted_pvalues_never_shrink(pvals: list[float]) -> None:
    for method in ("holm", "bh"):
        adjusted = adjust_pvalues(pvals, method)
        assert all(a >= p - 1e-12 for a, p in zip(adjusted, pvals, strict=True))
        assert all(a <= 1.0 for a in adjusted)


def test_newcombes_paired_interval_is_never_of_zero_width_and_matches_wald_on_a_large_sample() -> None:
    low, high = newcombe_paired_ci(1, 0, 0, 0)  # one task, both right: it says nothing of harm
    assert (round(low, 4), round(high, 4)) == (-0.7935, 0.7935)
    assert newcombe_paired_ci(0, 0, 0, 0) == (-1.0, 1.0)
    # 40 both, 5 only a, 10 only b, 45 neither: d = -0.05, Wald's paired interval is [-0.125, +0.025]
    low, high = newcombe_paired_ci(40, 5, 10, 45)
    assert (round(low, 3), round(high, 3)) == (-0.123, 0.025)


def test_newcombes_interval_without_a_discordant_pair_is_the_reach_of_no_disagreement() -> None:
    # One pair both arms pass, one both fail: method 10 alone gives the point (0, 0) (phi = 1
    # with both margins at one half). Nothing was seen to differ, yet two pairs cannot rule
    # out a difference: the interval is the Wilson bound of 0 disagreements in 2, either way.
    low, high = newcombe_paired_ci(1, 0, 0, 1)
    assert (round(low, 3), round(high, 3)) == (-0.658, 0.658)
    assert [round(x, 3) for x in newcombe_paired_ci(5, 0, 0, 5)] == [-0.278, 0.278]


@given(st.integers(0, 60), st.integers(0, 60), st.integers(0, 60), st.integers(0, 60))
@settings(max_examples=300, deadline=None)
def test_newcombes_paired_interval_holds_the_difference(both: int, only_a: int, only_b: int, neither: int) -> None:
    n = both + only_a + only_b + neither
    low, high = newcombe_paired_ci(both, only_a, only_b, neither)
    assert -1.0 <= low <= high <= 1.0
    if n:
        d = (only_a - only_b) / n
        assert low - 1e-12 <= d <= high + 1e-12
        assert high - low > 0
