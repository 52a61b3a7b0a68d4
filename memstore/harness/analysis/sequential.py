"""Anytime-valid statistics for sequential gates: confidence sequences that stay valid however
often they are looked at, so a run may look after every batch and stop as soon as its gates decide.

A confidence sequence (CS) ``C_1, C_2, ...`` covers the truth at every time at once:
``P(exists t: truth not in C_t) <= alpha``, so it is valid at any stopping time, however the
stopping depends on the data seen (continuous monitoring). Both sequences here come from
nonnegative martingales and Ville's inequality, ``P(sup_t M_t >= 1/alpha) <= alpha``:

- `paired_difference_cs`: the mean of paired differences ``x = a - b`` in [-1, 1], by betting
  (Waudby-Smith & Ramdas 2023, "Estimating means of bounded random variables by betting",
  JRSS-B 86(1), 2024). For each candidate mean ``m`` on a grid, a bettor's capital
  ``K_t(m) = prod_i (1 + lambda_i(m) (y_i - m))`` on ``y = (x + 1) / 2`` is a martingale when
  ``m`` is the truth; ``m`` leaves the CS once ``K_t(m) >= 1/alpha`` and never comes back (the
  running intersection, itself a CS). The bets are their aGRAPA (approximate growth-rate
  adaptive) bets: ``lambda = (mu - m) / (var + (mu - m)^2)`` from the predictable plug-in
  mean and variance of the pairs before, truncated to ``[-c/(1-m), c/m]`` with c = 1/2. The
  bet scales with the inverse of the variance, so the CS is tight when most pairs tie.
- `rate_cs`: a Bernoulli rate from counts alone: Robbins' beta-binomial mixture (Robbins 1970,
  "Statistical methods related to the law of the iterated logarithm", Ann. Math. Stat.; the
  conjugate mixture boundaries of Howard, Ramdas, McAuliffe & Sekhon 2021, "Time-uniform,
  nonparametric, nonasymptotic confidence sequences", Ann. Stat. 49(2)). The mixture over a
  Beta(1/2, 1/2) prior of likelihood ratios against ``p`` is a martingale under ``p``; the CS
  is ``{p : mixture ratio < 1/alpha}``, an interval found by root finding on the log scale.

What validity assumes: given the pairs before, each pair's expected difference is the same ``d``
(or each unit's success rate the same ``p``): units drawn, or run, in a random order, as the
sequential mode's seeded shuffle does; a drift over the run breaks it. The paired bounds are
widened outward to the next point of the grid (0.001 in ``d``), never inward.

Each bound is one-sided valid at ``alpha`` as well (the event it misses is part of the two-sided
one), and so is every decision the helpers below take from it at a stopping time. The helpers
(`no_harm_decision`, `harm_seen_decision`, `rate_decision`) hold the gates' rules and work on
fixed-sample intervals as well.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from enum import StrEnum

import numpy as np
from scipy import optimize, special

__all__ = [
    "GRID",
    "TRUNCATION",
    "SequentialDecision",
    "harm_seen_decision",
    "no_harm_decision",
    "paired_difference_cs",
    "paired_difference_cs_path",
    "rate_cs",
    "rate_decision",
]

TRUNCATION = 0.5  # c: a bet never stakes more than half the capital (1 + lambda (y - m) >= 1 - c)
GRID = 2001  # candidate means over [-1, 1]: a step of 0.001 in the difference
_CHUNK = 256  # pairs per block of the capital computation (memory: _CHUNK x GRID floats)
_PRIOR = (0.5, 0.5)  # Beta prior of the rate mixture (Jeffreys)


class SequentialDecision(StrEnum):
    """What a gate decides from an interval: passed, failed, or not yet."""

    PASSED = "passed"
    FAILED = "failed"
    UNDECIDED = "undecided"


def no_harm_decision(low: float, high: float, margin: float = 0.05) -> SequentialDecision:
    """Non-inferiority of a treatment against its control from an interval on ``d = p_a - p_b``:
    failed when significantly worse (the interval lies below 0; this wins, as in the harness),
    passed when harm of ``margin`` or more is ruled out (low > -margin), undecided otherwise."""
    if high < 0:
        return SequentialDecision.FAILED
    if low > -margin:
        return SequentialDecision.PASSED
    return SequentialDecision.UNDECIDED


def harm_seen_decision(low: float, high: float, margin: float = 0.05) -> SequentialDecision:
    """A harm probe (expected worse than the control): passed when significantly worse (the
    interval on ``d`` lies below 0), failed when harm of ``margin`` or more is ruled out (low >
    -margin), undecided otherwise."""
    if high < 0:
        return SequentialDecision.PASSED
    if low > -margin:
        return SequentialDecision.FAILED
    return SequentialDecision.UNDECIDED


def rate_decision(low: float, high: float, bar: float, at_least: bool) -> SequentialDecision:
    """A rate against a bar (``rate >= bar`` when ``at_least``, else ``rate <= bar``): passed
    when the interval clears the bar, failed when it lies wholly on the wrong side, else
    undecided (the comparisons of the harness's verifier gates)."""
    ok, bad = (low >= bar, high < bar) if at_least else (high <= bar, low > bar)
    if ok:
        return SequentialDecision.PASSED
    if bad:
        return SequentialDecision.FAILED
    return SequentialDecision.UNDECIDED


def _differences(a: Sequence[int | bool], b: Sequence[int | bool]) -> np.ndarray:
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if x.ndim != 1 or x.shape != y.shape:
        raise ValueError("paired outcomes need two flat sequences of the same length")
    if not (np.isin(x, (0.0, 1.0)).all() and np.isin(y, (0.0, 1.0)).all()):
        raise ValueError("paired outcomes must be 0 or 1")
    found: np.ndarray = x - y
    return found


def _plug_in(y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The predictable mean and variance before each observation (Waudby-Smith & Ramdas):
    ``mu_t = (1/2 + sum y_i) / (t + 1)``, ``var_t = (1/4 + sum (y_i - mu_i)^2) / (t + 1)``,
    shifted by one so the bet on ``y_t`` sees only ``y_1 .. y_{t-1}``."""
    count = np.arange(2, len(y) + 2, dtype=float)
    mu = (0.5 + np.cumsum(y)) / count
    var = (0.25 + np.cumsum((y - mu) ** 2)) / count
    return np.concatenate(([0.5], mu[:-1])), np.concatenate(([0.25], var[:-1]))


def _hull(rejected: np.ndarray, means: np.ndarray) -> tuple[float, float] | None:
    """The hull of the candidate means not rejected, widened to the rejected neighbour on each
    side (the CS's true end lies between the two), as a difference in [-1, 1]; None if none."""
    kept = np.flatnonzero(~rejected)
    if kept.size == 0:
        return None
    first, last = int(kept[0]), int(kept[-1])
    low = means[first - 1] if first > 0 else 0.0
    high = means[last + 1] if last + 1 < len(means) else 1.0
    return float(2 * low - 1), float(2 * high - 1)


def _bounds(ever: np.ndarray, now: np.ndarray, means: np.ndarray) -> tuple[float, float]:
    """The CS from the means rejected at some time (the running intersection); should that be
    empty (a miss, or pairs that are not one stationary sequence), from those rejected now, a
    CS of its own; should that be empty too, the whole range: nothing is decided."""
    return _hull(ever, means) or _hull(now, means) or (-1.0, 1.0)


def paired_difference_cs_path(
    a: Sequence[int | bool],
    b: Sequence[int | bool],
    alpha: float = 0.05,
    *,
    every: int = 1,
    grid: int = GRID,
) -> Iterator[tuple[int, float, float]]:
    """`paired_difference_cs` after every ``every`` pairs (and after the last): ``(n, low,
    high)`` for n = every, 2 every, ..., computed lazily, so a caller that stops at its first
    decision pays only for the pairs it read (in blocks of 256). The intervals are nested (unless
    the running intersection empties: see `_bounds`)."""
    if not 0 < alpha < 1 or every < 1 or grid < 3:
        raise ValueError("need 0 < alpha < 1, every >= 1 and grid >= 3")
    x = _differences(a, b)
    y = (x + 1) / 2
    means = np.linspace(0.0, 1.0, grid)[1:-1]  # the ends (every pair at -1 or +1) are never tested
    top, bottom = TRUNCATION / means, -TRUNCATION / (1 - means)
    mu, var = _plug_in(y)
    threshold = math.log(1 / alpha)
    log_capital, rejected = np.zeros(len(means)), np.zeros(len(means), dtype=bool)
    for start in range(0, len(y), _CHUNK):
        stop = min(len(y), start + _CHUNK)
        gap = mu[start:stop, None] - means
        bet = np.clip(gap / (var[start:stop, None] + gap * gap), bottom, top)
        path = log_capital + np.cumsum(np.log1p(bet * (y[start:stop, None] - means)), axis=0)
        now = path >= threshold
        ever = np.logical_or.accumulate(now, axis=0) | rejected
        log_capital, rejected = path[-1], ever[-1]
        for n in range(start + 1, stop + 1):
            if n % every == 0 or n == len(y):
                yield (n, *_bounds(ever[n - start - 1], now[n - start - 1], means))


def paired_difference_cs(a: Sequence[int | bool], b: Sequence[int | bool], alpha: float = 0.05) -> tuple[float, float]:
    """A two-sided (1 - alpha) confidence sequence for ``d = E[a - b]`` over binary pairs taken
    in the given (run) order, at the current n: valid at any stopping time. A betting CS with
    aGRAPA bets (module docstring); (-1.0, 1.0) before any pair."""
    if len(a) != len(b):
        raise ValueError("paired outcomes need two sequences of the same length")
    if len(a) == 0:
        return -1.0, 1.0
    last = (-1.0, 1.0)
    for _, low, high in paired_difference_cs_path(a, b, alpha, every=len(a)):
        last = (low, high)
    return last


def _log_mixture(k: int, n: int) -> float:
    """log of the Beta-mixture likelihood of ``k`` in ``n``: ``log B(a+k, b+n-k) - log B(a, b)``."""
    a0, b0 = _PRIOR
    return float(special.betaln(a0 + k, b0 + n - k) - special.betaln(a0, b0))


def _root(k: int, n: int, threshold: float, inside: float, outside: float) -> float:
    """Where the log mixture ratio against ``p``, ``log mixture - k log p - (n-k) log(1-p)``,
    crosses ``threshold`` between ``inside`` (below it) and ``outside`` (both in (0, 1)); moved
    outward past brentq's tolerance so the bound is never too narrow; ``outside`` itself when
    the ratio stays below the threshold there."""
    mixture = _log_mixture(k, n)

    def excess(p: float) -> float:
        fits = (k * math.log(p) if k else 0.0) + ((n - k) * math.log1p(-p) if k < n else 0.0)
        return mixture - fits - threshold

    if excess(outside) < 0:
        return outside
    xtol, rtol = 1e-14, 1e-12
    root = float(optimize.brentq(excess, inside, outside, xtol=xtol, rtol=rtol))
    slack = 2 * (xtol + rtol * abs(root))
    return root - slack if outside < inside else root + slack


def rate_cs(k: int, n: int, alpha: float = 0.05) -> tuple[float, float]:
    """An anytime-valid (1 - alpha) confidence sequence for a Bernoulli rate after ``k``
    successes in ``n`` trials, from the counts alone (order-free): Robbins' beta-binomial
    mixture with a Beta(1/2, 1/2) prior, ``{p : mixture ratio against p < 1/alpha}``.
    (0.0, 1.0) when n == 0. Stable for n up to 1e6 and beyond (log scale throughout)."""
    if not 0 < alpha < 1 or n < 0 or not 0 <= k <= n:
        raise ValueError("need 0 < alpha < 1 and 0 <= k <= n")
    if n == 0:
        return 0.0, 1.0
    threshold, estimate = math.log(1 / alpha), k / n
    # the ratio is at most 1 at the estimate (the likelihood peaks there), so it is inside
    low = 0.0 if k == 0 else _root(k, n, threshold, estimate, 1e-300)
    high = 1.0 if k == n else _root(k, n, threshold, estimate, math.nextafter(1.0, 0.0))
    low, high = (0.0 if low <= 1e-300 else low), (1.0 if high >= math.nextafter(1.0, 0.0) else high)
    return max(0.0, min(low, estimate)), min(1.0, max(high, estimate))
