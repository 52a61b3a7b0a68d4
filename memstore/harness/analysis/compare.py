"""Comparisons: every arm against the control, agent against agent, store against store, run against run.

Within a run, outcomes are paired by (scenario, trial, task): binary outcomes get McNemar's
exact test and a task-clustered paired difference; review precision and recall get a
seeded paired bootstrap. Between runs only aggregate counts are kept, so the test is the
unpaired two-proportion test with Newcombe's interval. Holm adjusts each family of
p-values. Every comparison ends in a verdict: ``improved``, ``regressed``, ``no significant
change``, or ``underpowered`` (the effect that matters could not have been seen; the
minimum detectable effect and the sample size that would be needed are given).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import pandas as pd

from memstore.harness.analysis.metrics import OUTCOME_RATES
from memstore.harness.stats import (
    adjust_pvalues,
    mcnemar,
    min_detectable_effect,
    newcombe_diff_ci,
    paired_bootstrap,
    paired_difference,
    sample_size_two_proportions,
    two_proportion_ztest,
)

__all__ = ["ALPHA", "MIN_EFFECT", "Comparison", "compare_runs", "compare_within", "verdict_of"]

ALPHA = 0.05
MIN_EFFECT = 0.05  # five points: the smallest change worth acting on (the seeds' merge-rate gain was seven)
LOWER_IS_BETTER = {"stale_use_rate", "false_invalidation_rate", "harm_rate", "leaks", "expiry_violations"}
BINARY = {  # metric: (surface, or None for every session; the session column it counts)
    "task_success_rate": (None, "task_success"),
    "merge_rate": ("coding_agent", "merged"),
    "answer_accuracy": ("cli", "answer_correct"),
    "stale_use_rate": (None, "stale_use"),
}
KEY = ["scenario", "trial", "task"]


@dataclass(frozen=True)
class Comparison:
    """One metric of arm ``a`` against arm (or run) ``b``."""

    metric: str
    a: str
    b: str
    method: str
    a_value: float
    b_value: float
    diff: float
    low: float
    high: float
    p_value: float
    n: int
    p_adjusted: float = 1.0
    verdict: str = ""
    mde: float | None = None
    needed_n: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: six significant digits (a p-value of 1e-35 stays 1e-35), infinities as None."""

        def clean(value: Any) -> Any:
            if isinstance(value, float):
                return float(f"{value:.6g}") if math.isfinite(value) else None
            return value

        return {k: clean(v) for k, v in asdict(self).items()}


def verdict_of(c: Comparison, *, alpha: float = ALPHA, min_effect: float = MIN_EFFECT) -> str:
    """The verdict on a comparison whose ``p_adjusted`` and ``mde`` are set."""
    if c.p_adjusted < alpha and c.diff != 0:
        better = c.diff < 0 if c.metric in LOWER_IS_BETTER else c.diff > 0
        return "improved" if better else "regressed"
    if c.mde is None or not math.isfinite(c.mde) or c.mde > min_effect:
        return "underpowered"
    return "no significant change"


def _finish(found: list[Comparison], alpha: float, min_effect: float) -> list[Comparison]:
    adjusted = adjust_pvalues([c.p_value for c in found], "holm")
    done = []
    for c, p in zip(found, adjusted, strict=True):
        c = Comparison(**{**asdict(c), "p_adjusted": p})
        done.append(Comparison(**{**asdict(c), "verdict": verdict_of(c, alpha=alpha, min_effect=min_effect)}))
    return done


def _paired_binary(metric: str, a: str, b: str, sessions: pd.DataFrame, min_effect: float) -> Comparison | None:
    surface, column = BINARY[metric]
    rows = sessions if surface is None else sessions[sessions.surface == surface]
    left = rows[rows.arm == a].set_index(KEY)[column]
    right = rows[rows.arm == b].set_index(KEY)[column]
    both = pd.concat([left.rename("a"), right.rename("b")], axis=1, join="inner").dropna()
    if both.empty:
        return None
    x, y = both["a"].astype(bool).astype(int), both["b"].astype(bool).astype(int)
    clusters = [f"{s}|{t}" for s, _, t in both.index]
    diff = paired_difference(x.tolist(), y.tolist(), clusters=clusters)
    test = mcnemar(int(((x == 1) & (y == 0)).sum()), int(((x == 0) & (y == 1)).sum()))
    base = float(y.mean())
    rho = diff.rho if math.isfinite(diff.rho) else 0.0
    mde = min_detectable_effect(min(base, 1 - 1e-6), len(both), paired=True, rho=max(rho, 0.0))
    target = min(base + min_effect, 0.999) if base + min_effect < 1 else max(base - min_effect, 0.001)
    needed = sample_size_two_proportions(base, target, paired=True, rho=max(rho, 0.0)) if 0 < base < 1 else None
    return Comparison(
        metric,
        a,
        b,
        "mcnemar-exact",
        float(x.mean()),
        base,
        diff.mean_diff,
        diff.low,
        diff.high,
        test.p_value,
        len(both),
        mde=mde,
        needed_n=needed,
    )


def _bootstrap(metric: str, a: str, b: str, sessions: pd.DataFrame, seed: int) -> Comparison | None:
    rows = sessions[sessions.surface == "code_review"].copy()
    if rows.empty:
        return None
    rows["tp"] = rows.correct_findings.astype(int)
    rows["fp"] = rows.findings.astype(int) - rows.tp
    rows["fn"] = rows.expected_findings.astype(int) - rows.tp
    left = rows[rows.arm == a].set_index(KEY)[["tp", "fp", "fn"]]
    right = rows[rows.arm == b].set_index(KEY)[["tp", "fp", "fn"]]
    both = left.merge(right, left_index=True, right_index=True, how="inner", suffixes=("_a", "_b"))
    if both.empty:
        return None
    xa = list(both[["tp_a", "fp_a", "fn_a"]].itertuples(index=False, name=None))
    xb = list(both[["tp_b", "fp_b", "fn_b"]].itertuples(index=False, name=None))
    which = metric.removeprefix("review_")
    result = paired_bootstrap(xa, xb, metric=which, seed=seed, n_resamples=2000)
    tp_a, fp_a, fn_a = (sum(v[i] for v in xa) for i in range(3))
    tp_b, fp_b, fn_b = (sum(v[i] for v in xb) for i in range(3))
    value_a = tp_a / (tp_a + (fp_a if which == "precision" else fn_a) or 1)
    value_b = tp_b / (tp_b + (fp_b if which == "precision" else fn_b) or 1)
    mde = (result.high - result.low) / 2 * 2.8 / 1.96  # the half-width at 80% power, from the bootstrap spread
    return Comparison(
        metric,
        a,
        b,
        "paired-bootstrap",
        value_a,
        value_b,
        result.estimate,
        result.low,
        result.high,
        result.p_value,
        len(both),
        mde=mde,
    )


def _pairs(arms: pd.DataFrame) -> list[tuple[str, str]]:
    """(arm, reference arm): each against the no-memory control, agent against agent on one store,
    store against store for one agent."""
    rows = arms.drop_duplicates("arm").sort_values("arm").to_dict("records")
    pairs: list[tuple[str, str]] = []
    control = next((r["arm"] for r in rows if r["agent"] == "no-memory"), None)
    for r in rows:
        if control and r["arm"] != control:
            pairs.append((r["arm"], control))
    for r in rows:
        for q in rows:
            if r["arm"] >= q["arm"] or "no-memory" in {r["agent"], q["agent"]}:
                continue
            if r["store"] == q["store"] or r["agent"] == q["agent"]:
                pairs.append((r["arm"], q["arm"]))
    return pairs


def compare_within(
    tables: dict[str, pd.DataFrame], *, seed: int = 0, alpha: float = ALPHA, min_effect: float = MIN_EFFECT
) -> list[Comparison]:
    """Every comparison of a run's arms (see the module docstring)."""
    sessions = tables["sessions"]
    found: list[Comparison] = []
    for a, b in _pairs(sessions[["arm", "agent", "store"]]):
        for metric in BINARY:
            c = _paired_binary(metric, a, b, sessions, min_effect)
            if c is not None:
                found.append(c)
        for metric in ("review_precision", "review_recall"):
            c = _bootstrap(metric, a, b, sessions, seed)
            if c is not None:
                found.append(c)
    return _finish(found, alpha, min_effect)


def compare_runs(
    current: dict[str, Any], baseline: dict[str, Any], *, alpha: float = ALPHA, min_effect: float = MIN_EFFECT
) -> list[Comparison]:
    """Each arm's rates in ``current`` against the same arm in ``baseline`` (unpaired)."""
    found: list[Comparison] = []
    for arm in sorted(set(current["arms"]) & set(baseline["arms"])):
        now, then = current["arms"][arm]["overall"], baseline["arms"][arm]["overall"]
        for metric in OUTCOME_RATES:
            x, y = now.get(metric), then.get(metric)
            if not x or not y:
                continue
            test = two_proportion_ztest(x["k"], x["n"], y["k"], y["n"])
            low, high = newcombe_diff_ci(x["k"], x["n"], y["k"], y["n"])
            n = min(x["n"], y["n"])
            mde = min_detectable_effect(min(y["value"], 1 - 1e-6), n) if y["value"] < 1 else math.inf
            found.append(
                Comparison(
                    metric,
                    f"{arm} (this run)",
                    f"{arm} (baseline)",
                    "two-proportion-z",
                    x["value"],
                    y["value"],
                    x["value"] - y["value"],
                    low,
                    high,
                    test.p_value,
                    n,
                    mde=mde,
                )
            )
    return _finish(found, alpha, min_effect)
