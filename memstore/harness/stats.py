"""Statistics for paired A/B evaluation of agents and stores.

Distributions and standard tests come from scipy and statsmodels; by hand only what
neither has: the McNemar mid-p, cluster-robust paired differences, the paired bootstrap
for precision/recall/F1, and sample size for paired proportions (Connor, 1987).
Power and sample size for two independent proportions follow R's ``power.prop.test``.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import optimize
from scipy import stats as sps
from statsmodels.stats.proportion import confint_proportions_2indep, proportion_confint

__all__ = [
    "BootstrapResult",
    "McNemarResult",
    "PairedResult",
    "TestResult",
    "adjust_pvalues",
    "chisq_proportions",
    "fisher_exact",
    "mcnemar",
    "min_detectable_effect",
    "newcombe_diff_ci",
    "newcombe_paired_ci",
    "paired_bootstrap",
    "paired_difference",
    "power_two_proportions",
    "sample_size_paired_proportions",
    "sample_size_two_proportions",
    "two_proportion_ztest",
    "wilson_ci",
]


@dataclass(frozen=True)
class TestResult:
    """A test's statistic and two-sided (unless asked otherwise) p-value."""

    statistic: float
    p_value: float


@dataclass(frozen=True)
class McNemarResult:
    """McNemar's test on discordant pairs: ``b`` (A only) and ``c`` (B only)."""

    statistic: float
    p_value: float
    mid_p: float


@dataclass(frozen=True)
class PairedResult:
    """Mean of paired differences ``a - b`` with its interval and test."""

    mean_diff: float
    low: float
    high: float
    se: float
    p_value: float
    rho: float
    n: int
    clusters: int


@dataclass(frozen=True)
class BootstrapResult:
    """A paired bootstrap estimate of a difference ``a - b``."""

    estimate: float
    low: float
    high: float
    p_value: float
    n_resamples: int


@functools.lru_cache(maxsize=65536)  # a report asks for the same few thousand (k, n) again and again
def wilson_ci(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a proportion ``k / n``."""
    if n <= 0:
        raise ValueError("wilson_ci needs n > 0")
    low, high = proportion_confint(k, n, alpha=1 - confidence, method="wilson")
    estimate = k / n  # floating-point rounding can put a bound a hair past the estimate (1e-17 at k = 0)
    return max(0.0, min(float(low), estimate)), min(1.0, max(float(high), estimate))


def newcombe_diff_ci(k1: int, n1: int, k2: int, n2: int, confidence: float = 0.95) -> tuple[float, float]:
    """Newcombe's hybrid score interval (method 10) for ``p1 - p2`` of independent samples."""
    low, high = confint_proportions_2indep(k1, n1, k2, n2, method="newcomb", compare="diff", alpha=1 - confidence)
    return float(low), float(high)


def newcombe_paired_ci(
    both: int, only_a: int, only_b: int, neither: int, confidence: float = 0.95
) -> tuple[float, float]:
    """Newcombe's (1998, method 10) score interval for the difference of two paired proportions,
    from the four cells of the pairs' table: never of zero width on a small sample, where a
    Wald-type interval is (one task that both arms pass says nothing of harm)."""
    n = both + only_a + only_b + neither
    if n == 0:
        return -1.0, 1.0
    p1, p2 = (both + only_a) / n, (both + only_b) / n
    l1, u1 = wilson_ci(both + only_a, n, confidence)
    l2, u2 = wilson_ci(both + only_b, n, confidence)
    rows = (both + only_a) * (only_b + neither) * (both + only_b) * (only_a + neither)
    phi = (both * neither - only_a * only_b) / math.sqrt(rows) if rows > 0 else 0.0
    phi = max(phi, 0.0)  # Newcombe's continuity rule: a negative correlation does not narrow it
    d = p1 - p2
    delta = math.sqrt(max((p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2, 0.0))
    epsilon = math.sqrt(max((u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2, 0.0))
    low, high = d - delta, d + epsilon
    if only_a == only_b == 0:
        # No discordant pair: phi is 1 and, with both margins at one half, method 10 shrinks to a
        # point. The difference is still bounded only by how often the arms may disagree: at most
        # the Wilson upper bound of 0 disagreements in n, either way.
        _, reach = wilson_ci(0, n, confidence)
        low, high = min(low, -reach), max(high, reach)
    return max(low, -1.0), min(high, 1.0)


def two_proportion_ztest(k1: int, n1: int, k2: int, n2: int) -> TestResult:
    """Pooled two-proportion z-test (no continuity correction); statistic is z for ``p1 - p2``."""
    p1, p2 = k1 / n1, k2 / n2
    pooled = (k1 + k2) / (n1 + n2)
    se = math.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2))
    if se == 0:
        return TestResult(0.0, 1.0)
    z = (p1 - p2) / se
    return TestResult(z, float(2 * sps.norm.sf(abs(z))))


def chisq_proportions(ks: Sequence[int], ns: Sequence[int], *, correction: bool = False) -> TestResult:
    """Chi-square test that k groups share one proportion (R's ``prop.test`` for k groups)."""
    table = np.array([[k, n - k] for k, n in zip(ks, ns, strict=True)])
    statistic, p_value, _, _ = sps.chi2_contingency(table, correction=correction)
    return TestResult(float(statistic), float(p_value))


def fisher_exact(table: Sequence[Sequence[int]], alternative: str = "two-sided") -> TestResult:
    """Fisher's exact test on a 2x2 table; statistic is the (sample) odds ratio."""
    result = sps.fisher_exact(np.asarray(table), alternative=alternative)
    return TestResult(float(result.statistic), float(result.pvalue))


def mcnemar(b: int, c: int, *, exact: bool = True, correction: bool = False) -> McNemarResult:
    """McNemar's test for paired binary outcomes.

    Exact: a two-sided binomial test of ``b`` in ``b + c`` at one half; statistic ``min(b, c)``;
    ``mid_p`` subtracts half the probability of the observed table (by hand: no library has it).
    Otherwise the chi-square form ``(|b - c| - correction)^2 / (b + c)``; ``mid_p`` equals ``p_value``.
    """
    n = b + c
    if n == 0:
        return McNemarResult(0.0, 1.0, 1.0)
    if exact:
        low = min(b, c)
        p_value = min(1.0, float(2 * sps.binom.cdf(low, n, 0.5)))
        mid_p = min(1.0, float(2 * (sps.binom.cdf(low, n, 0.5) - 0.5 * sps.binom.pmf(low, n, 0.5))))
        return McNemarResult(float(low), p_value, mid_p)
    statistic = (abs(b - c) - (1.0 if correction else 0.0)) ** 2 / n
    p_value = float(sps.chi2.sf(statistic, 1))
    return McNemarResult(statistic, p_value, p_value)


def paired_difference(
    a: Sequence[float],
    b: Sequence[float],
    *,
    clusters: Sequence[object] | None = None,
    confidence: float = 0.95,
) -> PairedResult:
    """Mean of ``a - b`` over pairs, with a t interval and test.

    With ``clusters`` (say, the task of each pair when a task has several trials), the
    standard error is cluster-robust (CR1) and the test has clusters - 1 degrees of freedom.
    """
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if len(x) != len(y) or len(x) == 0:
        raise ValueError("paired_difference needs two non-empty sequences of the same length")
    d = x - y
    n = len(d)
    mean = float(d.mean())
    if clusters is None:
        groups, df = n, n - 1
        se = float(d.std(ddof=1) / math.sqrt(n)) if n > 1 else 0.0
    else:
        labels = list(clusters)
        if len(labels) != n:
            raise ValueError("clusters must label every pair")
        sums: dict[object, float] = {}
        for label, value in zip(labels, d - mean, strict=True):
            sums[label] = sums.get(label, 0.0) + float(value)
        groups = len(sums)
        df = groups - 1
        se = math.sqrt(groups / max(groups - 1, 1) * sum(s * s for s in sums.values())) / n if groups > 1 else 0.0
    rho = 0.0
    if n > 1 and x.std() > 0 and y.std() > 0:
        rho = float(np.corrcoef(x, y)[0, 1])
    if se == 0 or df < 1:
        p_value = 1.0 if mean == 0 else 0.0
        return PairedResult(mean, mean, mean, 0.0, p_value, rho, n, groups)
    t_crit = float(sps.t.ppf(1 - (1 - confidence) / 2, df))
    p_value = float(2 * sps.t.sf(abs(mean / se), df))
    return PairedResult(mean, mean - t_crit * se, mean + t_crit * se, se, p_value, rho, n, groups)


def _prf(tp: float, fp: float, fn: float) -> tuple[float, float, float]:
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def _prf_rows(sums: np.ndarray) -> np.ndarray:
    """`_prf` of each row of (tp, fp, fn) sums, as columns (precision, recall, f1): the same
    operations in the same order, so each value equals `_prf`'s to the bit."""
    tp, fp, fn = sums[:, 0], sums[:, 1], sums[:, 2]

    def ratio(top: np.ndarray, bottom: np.ndarray) -> np.ndarray:
        out: np.ndarray = np.divide(top, bottom, out=np.zeros_like(top), where=bottom != 0)
        return out

    precision, recall = ratio(tp, tp + fp), ratio(tp, tp + fn)
    return np.stack([precision, recall, ratio(2 * precision * recall, precision + recall)], axis=1)


def paired_bootstrap(
    a: Sequence[tuple[int, int, int]],
    b: Sequence[tuple[int, int, int]],
    *,
    metric: str = "f1",
    n_resamples: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
) -> BootstrapResult:
    """Seeded paired bootstrap of the difference in precision, recall or F1 (``a - b``).

    ``a`` and ``b`` hold (true positives, false positives, false negatives) per unit (a
    review session, say), paired by position; units are resampled together, so the
    pairing is kept. The p-value is two-sided: twice the share of resamples on the far
    side of zero, and never below ``1 / n_resamples``, the resolution of the resampling.
    """
    index = {"precision": 0, "recall": 1, "f1": 2}[metric]
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if x.shape != y.shape or x.ndim != 2 or x.shape[1] != 3 or len(x) == 0:
        raise ValueError("paired_bootstrap needs equal, non-empty lists of (tp, fp, fn)")
    estimate = _prf(*x.sum(axis=0))[index] - _prf(*y.sum(axis=0))[index]
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(x), size=(n_resamples, len(x)))
    xs, ys = x[picks].sum(axis=1), y[picks].sum(axis=1)
    diffs = _prf_rows(xs)[:, index] - _prf_rows(ys)[:, index]
    alpha = 1 - confidence
    low, high = np.quantile(diffs, [alpha / 2, 1 - alpha / 2])
    # A p-value below the resampling resolution is reported at it, not as zero.
    p_value = min(1.0, max(2 * min(float((diffs <= 0).mean()), float((diffs >= 0).mean())), 1 / n_resamples))
    return BootstrapResult(float(estimate), float(low), float(high), p_value, n_resamples)


def power_two_proportions(p1: float, p2: float, n: float, alpha: float = 0.05) -> float:
    """Power of a two-sided test of two independent proportions with ``n`` per group (R's power.prop.test)."""
    q1, q2 = 1 - p1, 1 - p2
    z = float(sps.norm.ppf(1 - alpha / 2))
    numerator = math.sqrt(n) * abs(p1 - p2) - z * math.sqrt((p1 + p2) * (q1 + q2) / 2)
    return float(sps.norm.cdf(numerator / math.sqrt(p1 * q1 + p2 * q2)))


def sample_size_paired_proportions(
    p1: float, p2: float, alpha: float = 0.05, power: float = 0.8, rho: float = 0.0
) -> float:
    """Pairs needed to detect ``p1 != p2`` with McNemar's test (Connor, 1987), when the two
    binary outcomes of a pair correlate with ``rho``."""
    q1, q2 = 1 - p1, 1 - p2
    p11 = p1 * p2 + rho * math.sqrt(p1 * q1 * p2 * q2)
    discordance = (p1 - p11) + (p2 - p11)
    delta = p1 - p2
    if discordance <= 0 or delta == 0:
        return math.inf
    za, zb = float(sps.norm.ppf(1 - alpha / 2)), float(sps.norm.ppf(power))
    return (za * math.sqrt(discordance) + zb * math.sqrt(max(discordance - delta**2, 0.0))) ** 2 / delta**2


def sample_size_two_proportions(
    p1: float, p2: float, alpha: float = 0.05, power: float = 0.8, *, paired: bool = False, rho: float = 0.0
) -> float:
    """Sample size to detect ``p1 != p2``: per group (R's power.prop.test), or pairs when ``paired``."""
    if paired:
        return sample_size_paired_proportions(p1, p2, alpha, power, rho)
    if p1 == p2 or power_two_proportions(p1, p2, 1e12, alpha) < power:
        return math.inf
    if power_two_proportions(p1, p2, 2, alpha) >= power:
        return 2.0
    return float(optimize.brentq(lambda n: power_two_proportions(p1, p2, n, alpha) - power, 2, 1e12))


def min_detectable_effect(
    p: float, n: float, alpha: float = 0.05, power: float = 0.8, *, paired: bool = False, rho: float = 0.0
) -> float:
    """The smallest increase over a base rate ``p`` detectable with ``n`` (per group, or pairs)."""
    if p >= 1:
        return math.inf

    def short(delta: float) -> float:
        need = sample_size_two_proportions(p, min(p + delta, 0.999999), alpha, power, paired=paired, rho=rho)
        return need - n

    top = 1 - p - 1e-6
    if short(top) > 0:
        return math.inf
    low = 1e-4
    if short(low) <= 0:
        return low
    return float(optimize.brentq(short, low, top))


def adjust_pvalues(pvals: Sequence[float], method: str = "holm") -> list[float]:
    """Adjust p-values for multiple comparisons: ``holm`` (family-wise) or ``bh`` (false discovery rate)."""
    if method not in {"holm", "bh"}:
        raise ValueError(f"method must be 'holm' or 'bh', got {method!r}")
    if len(pvals) == 0:
        return []
    # statsmodels' multipletests ("holm", "fdr_bh") step by step, so each value is the same to
    # the bit; its Holm branch runs a full garbage collection on every call (27 ms in a run's
    # process), which a run that adjusts hundreds of families cannot afford.
    values = np.asarray(list(pvals), dtype=float)
    order = np.argsort(values)
    ordered = np.take(values, order)
    n = len(ordered)
    if method == "holm":
        adjusted = np.maximum.accumulate(ordered * np.arange(n, 0, -1))
    else:
        adjusted = np.minimum.accumulate((ordered / (np.arange(1, n + 1) / float(n)))[::-1])[::-1]
    adjusted[adjusted > 1] = 1
    restored = np.empty_like(adjusted)
    restored[order] = adjusted
    return [float(p) for p in restored]
