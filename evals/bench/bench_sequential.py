"""Sequential (anytime-valid) gates against today's fixed-sample design, on simulated outcomes.

Run:  python evals/bench/bench_sequential.py            (about two minutes on 2 cores)
      python evals/bench/bench_sequential.py --quick    (under 30 s: fewer runs per truth, rougher figures)

What "simulated" means here: every outcome below is drawn from a stated probability model with a
KNOWN truth (a control success rate, a true difference, a correlation within a pair, or a true
rate); no agent, store or model is run. The figures say how the two decision procedures behave
on such data, how often each decides wrongly and how many sessions each spends; they are not a
measurement of any agent, and real runs (tasks of unequal difficulty, drift over a run) may differ.

Paired gates (no-harm, harm-seen). A task gives a pair (a, b) of binary outcomes: treatment (or
harm probe) and control. The control succeeds with p_b = 0.60, the treatment with p_a = p_b + d,
and the two outcomes of a task correlate with rho = 0.5 (tasks differ in difficulty), which fixes
the four cells P(1,1) = p_a p_b + rho sqrt(p_a q_a p_b q_b), P(1,0) = p_a - P(1,1), P(0,1) = p_b -
P(1,1), P(0,0) = the rest (printed per truth: about a quarter of the pairs are discordant).
Truths d: -0.15, -0.10, -0.05 (at the margin), 0.00, +0.05, +0.10.
  fixed mode: the harness today. N pairs from its own power calculation,
      `stats.sample_size_paired_proportions(p_b, p_b + 0.05, rho=rho)` (McNemar, Connor 1987: 80%
      power to detect a change of MIN_EFFECT = 0.05 at two-sided 5%; the number the harness's
      "tasks to show" message uses); then one decision with the harness's rule: significantly
      worse when McNemar's exact p < 0.05 with the difference below 0 (`stats.mcnemar`), harm of
      0.05 or more ruled out when the 95% paired t interval (`stats.paired_difference`) has its
      lower bound above -0.05.
  sequential mode: pairs in a random order; after every batch of 10 pairs the betting confidence
      sequence `paired_difference_cs` (alpha 0.05) is read with `no_harm_decision` /
      `harm_seen_decision`; the run stops at the first decision, or undecided at a cap of 4 N.
  Both gates read the same two events of the same interval (upper bound below 0; lower bound above
  -0.05) with pass and fail swapped, so they stop at the same time; a wrong decision differs:
      no-harm wrong: passing when d <= -0.05, failing when d >= 0;
      harm-seen wrong: passing (harm shown) when d >= 0, failing (harm of 0.05 ruled out) when
      d <= -0.05; its table shows the truths a harm probe would have (d <= 0).
Rate gates. Counted units (memories handed to a verifier) each succeed with a true rate:
  detection recall >= 0.95 with truths 0.90, 0.95 (at the bar), 0.98 (design rate 0.98);
  false invalidation <= 0.02 with truths 0.005 (design rate), 0.02 (at the bar), 0.05.
  fixed mode: N = ((1.645 sqrt(bar (1 - bar)) + 0.842 sqrt(p (1 - p))) / (p - bar))^2 at the
      design rate p (a one-sided 95% bound clears the bar with 80% power, normal approximation),
      then the harness's verifier rule: the 90% Clopper-Pearson interval (each bound one-sided 95%, exact).
  sequential mode: `rate_cs` (Robbins' mixture, alpha 0.05, so each bound is one-sided 5% too)
      after every 10 units, `rate_decision`, cap 4 N.
  wrong: passing when the truth is on the wrong side of the bar, failing when it is not.

Sessions: a pair is two sessions (one per arm); a rate gate counts units. A sequential run left
undecided at the cap spent the whole cap, and is counted so. Fixed mode always spends N (2 N
sessions). The same drawn sequence serves both modes (fixed reads its first N).

Target (the issue): at the same error rates, the sequential mode needs at most half the sessions
on the median. Each truth is judged on its own ("met" needs a median ratio <= 0.5 and a wrong
rate no higher than the fixed mode's); near a margin or a bar no procedure decides fast, and the
tables say so where it happens.
"""

from __future__ import annotations

import argparse
import functools
import math
import statistics
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats as sps
from statsmodels.stats.proportion import proportion_confint

from memstore.harness.analysis.sequential import (
    SequentialDecision,
    harm_seen_decision,
    no_harm_decision,
    paired_difference_cs_path,
    rate_cs,
    rate_decision,
)
from memstore.harness.stats import mcnemar, paired_difference, sample_size_paired_proportions

ALPHA = 0.05
MARGIN = 0.05  # MIN_EFFECT of memstore.harness.analysis.compare
TRUTHS = (-0.15, -0.10, -0.05, 0.0, 0.05, 0.10)
SHARE = 25  # runs per job handed to a worker
MULTIPLES = (1.0, 1.5, 2.0, 3.0, 4.0)  # fixed sizes tried for the matched-power comparison, in N
PASSED, FAILED, UNDECIDED = SequentialDecision.PASSED, SequentialDecision.FAILED, SequentialDecision.UNDECIDED


@dataclass(frozen=True)
class RateGate:
    name: str
    bar: float
    at_least: bool
    design: float
    truths: tuple[float, ...]


RATE_GATES = (
    RateGate("detection recall >= 0.95", 0.95, True, 0.98, (0.90, 0.95, 0.98)),
    RateGate("false invalidation <= 0.02", 0.02, False, 0.005, (0.005, 0.02, 0.05)),
)


@dataclass(frozen=True)
class Outcomes:
    """Per simulated run: each mode's decision and units spent (pairs, or counted units)."""

    fixed: list[str]
    fixed_units: list[int]
    sequential: list[str]
    sequential_units: list[int]
    larger: list[tuple[str, ...]]  # per run: the fixed decision at each of `MULTIPLES` x N


def cells(p_b: float, d: float, rho: float) -> np.ndarray:
    """P(a, b) for (1,1), (1,0), (0,1), (0,0) with margins p_b + d, p_b and correlation rho."""
    p_a = p_b + d
    both = p_a * p_b + rho * math.sqrt(p_a * (1 - p_a) * p_b * (1 - p_b))
    found = np.array([both, p_a - both, p_b - both, 1 - p_a - p_b + both])
    if (found < 0).any():
        raise ValueError(f"no joint distribution with p_b={p_b}, d={d}, rho={rho}")
    return found


def paired_sample_size(p_b: float, rho: float) -> int:
    """The harness's pairs for 80% power against a change of MARGIN (McNemar, Connor 1987)."""
    return math.ceil(sample_size_paired_proportions(p_b, p_b + MARGIN, rho=rho))


def noninferiority_size(p_b: float, rho: float) -> int:
    """The textbook non-inferiority size at d = 0 for comparison: (z_.975 + z_.80)^2 var / margin^2."""
    variance = float(cells(p_b, 0.0, rho)[1:3].sum())
    return math.ceil(float((sps.norm.ppf(0.975) + sps.norm.ppf(0.8)) ** 2 * variance / MARGIN**2))


def rate_sample_size(gate: RateGate) -> int:
    """Units for 80% power that a one-sided 95% bound clears the bar at the design rate."""
    p, bar = gate.design, gate.bar
    spread = float(sps.norm.ppf(0.95) * math.sqrt(bar * (1 - bar)) + sps.norm.ppf(0.8) * math.sqrt(p * (1 - p)))
    return math.ceil((spread / (p - bar)) ** 2)


def fixed_paired(a: np.ndarray, b: np.ndarray) -> tuple[str, str]:
    """The harness's decision on one fixed sample: (no-harm, harm-seen)."""
    result = paired_difference(a.tolist(), b.tolist())
    test = mcnemar(int(((a == 1) & (b == 0)).sum()), int(((a == 0) & (b == 1)).sum()))
    regressed = test.p_value < ALPHA and result.mean_diff < 0
    excluded = max(result.low, -1.0) > -MARGIN
    no_harm = FAILED if regressed else PASSED if excluded else UNDECIDED
    harm_seen = PASSED if regressed else FAILED if excluded else UNDECIDED
    return no_harm.value, harm_seen.value


def sequential_paired(a: np.ndarray, b: np.ndarray, batch: int) -> tuple[str, str, int]:
    """Look every ``batch`` pairs, stop at the first decision: (no-harm, harm-seen, pairs)."""
    pairs, low, high = 0, -1.0, 1.0
    for pairs, low, high in paired_difference_cs_path(a.tolist(), b.tolist(), ALPHA, every=batch):  # noqa: B007
        if no_harm_decision(low, high, MARGIN) is not UNDECIDED:
            break
    return no_harm_decision(low, high, MARGIN).value, harm_seen_decision(low, high, MARGIN).value, pairs


def simulate_paired(job: tuple[int, int, float, float, float, int, int, int, int]) -> tuple[Outcomes, Outcomes]:
    """One share of one truth's runs: the no-harm and the harm-seen gate's outcomes."""
    seed, share, d, p_b, rho, size, cap, runs, batch = job
    rng = np.random.default_rng([seed, 1, round(d * 1000) + 1000, share])
    probability = cells(p_b, d, rho)
    found: dict[str, list[Any]] = {key: [] for key in ("fn", "fh", "sn", "sh", "su", "ln", "lh")}
    for _ in range(runs):
        cell = rng.choice(4, size=cap, p=probability)
        a, b = (cell <= 1).astype(int), ((cell == 0) | (cell == 2)).astype(int)
        no_harm, harm_seen = fixed_paired(a[:size], b[:size])
        found["fn"].append(no_harm)
        found["fh"].append(harm_seen)
        larger = [fixed_paired(a[:n], b[:n]) for n in _sizes(size, cap)]
        found["ln"].append(tuple(x for x, _ in larger))
        found["lh"].append(tuple(y for _, y in larger))
        no_harm, harm_seen, pairs = sequential_paired(a, b, batch)
        found["sn"].append(no_harm)
        found["sh"].append(harm_seen)
        found["su"].append(pairs)
    sizes = [size] * runs
    return (
        Outcomes(found["fn"], sizes, found["sn"], found["su"], found["ln"]),
        Outcomes(found["fh"], sizes, found["sh"], found["su"], found["lh"]),
    )


def _sizes(size: int, cap: int) -> list[int]:
    """The fixed sizes of `MULTIPLES` (at most the data a run drew)."""
    return [min(cap, math.ceil(m * size)) for m in MULTIPLES]


@functools.lru_cache(maxsize=200_000)
def _rate_cs(k: int, n: int) -> tuple[float, float]:
    return rate_cs(k, n, ALPHA)


def simulate_rate(job: tuple[int, int, int, float, int, int, int, int]) -> Outcomes:
    """One share of the runs of one rate gate at one true rate."""
    seed, share, gate_index, p, size, cap, runs, batch = job
    gate = RATE_GATES[gate_index]
    rng = np.random.default_rng([seed, 2, gate_index, round(p * 10_000), share])
    fixed, sequential, spent, larger = [], [], [], []
    for _ in range(runs):
        counts = np.cumsum(rng.random(cap) < p)

        def decide(n: int, counts: np.ndarray = counts) -> str:
            low, high = proportion_confint(int(counts[n - 1]), n, alpha=0.10, method="beta")
            return rate_decision(low, high, gate.bar, gate.at_least).value

        fixed.append(decide(size))
        larger.append(tuple(decide(n) for n in _sizes(size, cap)))
        decision, n = UNDECIDED, 0
        for n in range(batch, cap + 1, batch):
            decision = rate_decision(*_rate_cs(int(counts[n - 1]), n), gate.bar, gate.at_least)
            if decision is not UNDECIDED:
                break
        sequential.append(decision.value)
        spent.append(n)
    return Outcomes(fixed, [size] * runs, sequential, spent, larger)


def wrong_no_harm(d: float, decision: str) -> bool:
    return (decision == PASSED and d <= -MARGIN + 1e-12) or (decision == FAILED and d >= 0)


def wrong_harm_seen(d: float, decision: str) -> bool:
    return (decision == PASSED and d >= 0) or (decision == FAILED and d <= -MARGIN + 1e-12)


def wrong_rate(gate: RateGate, p: float, decision: str) -> bool:
    meets = p >= gate.bar if gate.at_least else p <= gate.bar
    return (decision == PASSED and not meets) or (decision == FAILED and meets)


@dataclass(frozen=True)
class Row:
    truth: float
    right: str
    fixed_wrong: float
    fixed_undecided: float
    fixed_units: list[int]
    seq_wrong: float
    seq_undecided: float
    seq_units: list[int]
    matched: float | None  # the fixed size, in units, that decides rightly as often as the sequential mode

    @property
    def ratio(self) -> float:
        return statistics.median(self.seq_units) / statistics.median(self.fixed_units)

    @property
    def matched_ratio(self) -> float | None:
        """Sequential median over the fixed size that decides rightly as often (None: none tried does)."""
        return None if self.matched is None else statistics.median(self.seq_units) / self.matched

    @property
    def verdict(self) -> str:
        if self.ratio > 0.5:
            return "NOT met"
        return "met" if self.seq_wrong <= self.fixed_wrong else "met on sessions, more wrong"


def row(truth: float, right: str, outcomes: Outcomes, wrong: Callable[[str], bool], per_unit: int) -> Row:
    def share(found: list[str], test: Callable[[str], bool]) -> float:
        return sum(map(test, found)) / len(found)

    size = outcomes.fixed_units[0]
    rightly = 1 - share(outcomes.sequential, wrong) - share(outcomes.sequential, lambda x: x == UNDECIDED)
    matched = None
    for index, multiple in enumerate(MULTIPLES):
        decisions = [d[index] for d in outcomes.larger]
        if 1 - share(decisions, wrong) - share(decisions, lambda x: x == UNDECIDED) >= rightly - 1e-9:
            matched = math.ceil(multiple * size) * per_unit
            break
    return Row(
        truth,
        right,
        share(outcomes.fixed, wrong),
        share(outcomes.fixed, lambda x: x == UNDECIDED),
        [u * per_unit for u in outcomes.fixed_units],
        share(outcomes.sequential, wrong),
        share(outcomes.sequential, lambda x: x == UNDECIDED),
        [u * per_unit for u in outcomes.sequential_units],
        matched,
    )


def print_table(title: str, unit: str, rows: list[Row], label: Callable[[float], str]) -> None:
    print(f"\n{title}")
    print(f"  {'truth':>10} {'right':>9} | {'fixed: wrong':>12} {'undec':>6} {'median':>7} {'mean':>7} |"
          f" {'seq: wrong':>10} {'undec':>6} {'median':>7} {'mean':>7} | {'seq/fixed':>9}  target"
          f" | {'matched fixed':>13} {'seq/matched':>11}")  # fmt: skip
    for r in rows:
        print(
            f"  {label(r.truth):>10} {r.right:>9} | {r.fixed_wrong:>12.1%} {r.fixed_undecided:>6.1%}"
            f" {statistics.median(r.fixed_units):>7,.0f} {statistics.mean(r.fixed_units):>7,.0f} |"
            f" {r.seq_wrong:>10.1%} {r.seq_undecided:>6.1%} {statistics.median(r.seq_units):>7,.0f}"
            f" {statistics.mean(r.seq_units):>7,.0f} | {r.ratio:>9.2f}  {r.verdict:<7}"
            f" | {_shown(r.matched, '{:>13,.0f}', 13)} {_shown(r.matched_ratio, '{:>11.2f}', 11)}"
        )
    print(f"  (median and mean: {unit} spent per run; wrong and undecided: share of runs; matched fixed: the"
          f" smallest fixed size of {', '.join(f'{m:g}' for m in MULTIPLES)} x N that decides rightly as often"
          " as the sequential mode, '>4N' when none does)")  # fmt: skip


def _shown(value: float | None, form: str, width: int) -> str:
    return ">4N".rjust(width) if value is None else form.format(value)


def summary(name: str, unit: str, rows: list[Row], label: Callable[[float], str]) -> str:
    fixed_wrong = statistics.mean(r.fixed_wrong for r in rows)
    seq_wrong = statistics.mean(r.seq_wrong for r in rows)
    fixed_undecided = statistics.mean(r.fixed_undecided for r in rows)
    seq_undecided = statistics.mean(r.seq_undecided for r in rows)
    pooled = statistics.median(u for r in rows for u in r.seq_units) / statistics.median(
        u for r in rows for u in r.fixed_units
    )
    met = [r for r in rows if r.verdict == "met"]
    matched = [r.matched_ratio for r in rows]
    shown = ", ".join("<= 0.25 (fixed needs more than 4N)" if m is None else f"{m:.2f}" for m in matched)
    missed = ", ".join(f"{label(r.truth)} ({r.verdict}, ratio {r.ratio:.2f})" for r in rows if r.verdict != "met")
    return (
        f"  {name}: wrong decisions fixed {fixed_wrong:.1%} vs sequential {seq_wrong:.1%}, undecided"
        f" {fixed_undecided:.1%} vs {seq_undecided:.1%} (mean over its {len(rows)} truths); median {unit}"
        f" sequential / fixed {pooled:.2f} (all its runs pooled); target met at {len(met)} of {len(rows)}"
        f" truths"
        + (f"; not at {missed}" if missed else "")
        + f". Against the fixed size that decides rightly as often (same power), sequential / fixed per truth: {shown}"
    )


def merge(found: list[Outcomes]) -> Outcomes:
    return Outcomes(*([x for o in found for x in getattr(o, name)] for name in Outcomes.__dataclass_fields__))


def run_all(jobs: list[tuple[Any, ...]], function: Callable[[Any], Any], runs: int, workers: int) -> list[Any]:
    """``function`` on each job, its runs dealt out in shares of at most `SHARE` (each share
    seeded by its index, so the figures do not depend on ``workers``); the shares' results merged."""
    shares = [(job[0], index, *job[1:-2], min(SHARE, runs - start), job[-1])
              for job in jobs for index, start in enumerate(range(0, runs, SHARE))]  # fmt: skip
    if workers <= 1:
        done = [function(share) for share in shares]
    else:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            done = list(pool.map(function, shares))
    found, at = [], 0
    for _job in jobs:
        mine = done[at : at + math.ceil(runs / SHARE)]
        at += len(mine)
        found.append(tuple(merge(list(x)) for x in zip(*mine, strict=True)) if isinstance(mine[0], tuple)
                     else merge(mine))  # fmt: skip
    return found


def paired_section(args: argparse.Namespace, runs: int) -> list[str]:
    size = paired_sample_size(args.base, args.rho)
    cap = math.ceil(args.cap_factor * size / args.batch) * args.batch
    print(f"paired gates: control rate p_b = {args.base:.2f}, pair correlation rho = {args.rho:.2f},"
          f" {runs:,} simulated runs per truth, seed {args.seed}")  # fmt: skip
    print(f"  fixed: N = {size:,} pairs ({2 * size:,} sessions): McNemar sample size (Connor 1987) for a change of"
          f" {MARGIN} at 80% power, two-sided 5% (the textbook non-inferiority size at d = 0 would be"
          f" {noninferiority_size(args.base, args.rho):,})")  # fmt: skip
    print("         decision: McNemar exact p < 0.05 (worse) / 95% paired t interval low > -0.05 (the harness's rule)")
    print(f"  sequential: paired_difference_cs (betting CS, aGRAPA bets, alpha {ALPHA}), a look every"
          f" {args.batch} pairs, cap {cap:,} pairs ({args.cap_factor:g} N)")  # fmt: skip
    for d in TRUTHS:
        p = cells(args.base, d, args.rho)
        print(f"  truth d = {d:+.2f}: p_a = {args.base + d:.2f}; P(1,1) {p[0]:.3f}  P(1,0) {p[1]:.3f}"
              f"  P(0,1) {p[2]:.3f}  P(0,0) {p[3]:.3f}  (discordant {p[1] + p[2]:.3f})")  # fmt: skip
    jobs = [(args.seed, d, args.base, args.rho, size, cap, runs, args.batch) for d in TRUTHS]
    results = run_all(jobs, simulate_paired, runs, args.workers)
    label = lambda d: f"d = {d:+.2f}"  # noqa: E731
    no_harm = [
        row(d, "fail" if d < 0 else "pass", nh, functools.partial(wrong_no_harm, d), 2)
        for d, (nh, _) in zip(TRUTHS, results, strict=True)
    ]
    harm_seen = [
        row(d, "pass" if d < 0 else "fail", hs, functools.partial(wrong_harm_seen, d), 2)
        for d, (_, hs) in zip(TRUTHS, results, strict=True)
        if d <= 0
    ]
    print_table("no-harm gate (treatment vs control): wrong = pass at d <= -0.05, fail at d >= 0", "sessions",
                no_harm, label)  # fmt: skip
    print_table("harm-seen gate (harm probe vs control): wrong = pass at d >= 0, fail at d <= -0.05", "sessions",
                harm_seen, label)  # fmt: skip
    return [summary("no-harm", "sessions", no_harm, label), summary("harm-seen", "sessions", harm_seen, label)]


def rate_section(args: argparse.Namespace, runs: int) -> list[str]:
    lines = []
    for index, gate in enumerate(RATE_GATES):
        size = rate_sample_size(gate)
        cap = math.ceil(args.cap_factor * size / args.batch) * args.batch
        print(f"\n{gate.name}: fixed N = {size:,} units (80% power at the design rate {gate.design}),"
              f" 90% Clopper-Pearson; sequential rate_cs every {args.batch} units, cap {cap:,}")  # fmt: skip
        jobs = [(args.seed, index, p, size, cap, runs, args.batch) for p in gate.truths]
        results = run_all(jobs, simulate_rate, runs, args.workers)
        meets = [(p >= gate.bar) if gate.at_least else (p <= gate.bar) for p in gate.truths]
        rows = [
            row(p, "pass" if ok else "fail", found, functools.partial(wrong_rate, gate, p), 1)
            for p, ok, found in zip(gate.truths, meets, results, strict=True)
        ]
        label = lambda p: f"p = {p:.3f}"  # noqa: E731
        print_table(f"{gate.name} gate: wrong = pass when the truth misses the bar, fail when it meets it", "units",
                    rows, label)  # fmt: skip
        lines.append(summary(gate.name, "units", rows, label))
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="60 runs per truth instead of --runs")
    parser.add_argument("--runs", type=int, default=500, help="simulated runs per truth (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=0, help="(default: %(default)s)")
    parser.add_argument("--base", type=float, default=0.6, help="control success rate (default: %(default)s)")
    parser.add_argument("--rho", type=float, default=0.5, help="correlation within a pair (default: %(default)s)")
    parser.add_argument("--batch", type=int, default=10, help="pairs or units per look (default: %(default)s)")
    parser.add_argument("--cap-factor", type=float, default=4.0, help="sequential cap / fixed N (default: %(default)s)")
    parser.add_argument("--workers", type=int, default=2, help="processes (default: %(default)s)")
    args = parser.parse_args(argv)
    runs = 60 if args.quick else args.runs
    start = time.perf_counter()
    lines = paired_section(args, runs)
    lines += rate_section(args, runs)
    print("\nfigures:")
    for line in lines:
        print(line)
    print(f"  simulated outcomes, {runs:,} runs per truth, seed {args.seed}; {time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
