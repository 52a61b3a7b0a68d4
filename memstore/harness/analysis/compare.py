"""Comparisons: every arm against the control, agent against agent, store against store, run against run.

Within a run, and between two runs that both kept their session tables, outcomes are paired
by (scenario, trial, task): binary outcomes get McNemar's exact test and a task-clustered
paired difference; review precision and recall get a seeded paired bootstrap. What has no
per-task outcome, or a run with no session table, gets the unpaired two-proportion test with
Newcombe's interval, named as unpaired. Holm adjusts each family of
p-values apart (`FAMILIES`: against the control, store against store, agent against agent,
within groups, against a baseline). Every comparison ends in a verdict: ``improved``, ``regressed``, ``no significant
change``, or ``underpowered`` (the effect that matters could not have been seen; the
minimum detectable effect and the sample size that would be needed are given).
"""

from __future__ import annotations

import math
from dataclasses import asdict

import pandas as pd

from memstore.harness.analysis.metric_registry import Direction, Metric, PairedBy, Test, registered_metrics
from memstore.harness.analysis.metrics import BAD, USABLE
from memstore.harness.analysis.pairs import memory_pairs, task_groups
from memstore.harness.analysis.run_results import Comparison, ComparisonVerdict, Rate, Role, RunResults
from memstore.harness.records import SESSION, TRIAL
from memstore.harness.stats import (
    adjust_pvalues,
    mcnemar,
    min_detectable_effect,
    newcombe_diff_ci,
    newcombe_paired_ci,
    paired_bootstrap,
    paired_difference,
    sample_size_two_proportions,
    two_proportion_ztest,
)

__all__ = [
    "ALPHA",
    "FAMILIES",
    "MIN_EFFECT",
    "OUTCOMES",
    "UNPAIRED",
    "Comparison",
    "ComparisonVerdict",
    "compare_groups",
    "compare_runs",
    "compare_within",
    "lower_is_better",
    "verdict_of",
]

ALPHA = 0.05
MIN_EFFECT = 0.05  # five points: the smallest change worth acting on (the seeds' merge-rate gain was seven)
KEY = ["scenario", "trial", "task"]
UNPAIRED = "two-proportion-z (unpaired)"
Tables = dict[str, pd.DataFrame]


def lower_is_better(name: str) -> bool:
    """Whether a smaller value of the metric ``name`` is the better one (harm, errors, breaches)."""
    found = next((m for m in registered_metrics() if m.name == name), None)
    return found is not None and found.direction in {Direction.LOWER, Direction.ZERO}


def verdict_of(c: Comparison, *, alpha: float = ALPHA, min_effect: float = MIN_EFFECT) -> ComparisonVerdict:
    """The verdict on a comparison whose ``p_adjusted`` and ``mde`` are set."""
    if c.p_adjusted < alpha and c.diff != 0:
        better = c.diff < 0 if lower_is_better(c.metric) else c.diff > 0
        return ComparisonVerdict.IMPROVED if better else ComparisonVerdict.REGRESSED
    if c.mde is None or not math.isfinite(c.mde) or c.mde > min_effect:
        return ComparisonVerdict.UNDERPOWERED
    return ComparisonVerdict.NO_CHANGE


OUTCOMES = ("task_success_rate", "merge_rate", "answer_accuracy", "review_precision", "review_recall")
"""The outcomes of a task, as the no-harm and harm-seen gates read them against the control."""

FAMILIES = {
    "outcomes": "one family per arm: its outcomes against its control (what its no-harm or harm-seen gate reads)",
    "memory": "one family per arm: its memory metrics against its control (descriptive)",
    "stores": "store against store, for one agent",
    "agents": "agent against agent on one store (exploratory)",
    "groups": "task success against the control within each group of tasks (exploratory)",
    "runs": "each arm against itself in the baseline run (what the baseline gates read)",
}
"""The families Holm adjusts apart: a decision is protected against the other comparisons of its
own family, not against every comparison a run happens to make."""


def _finish(found: list[Comparison], alpha: float, min_effect: float) -> list[Comparison]:
    """``found`` with p-values Holm-adjusted within each family, and verdicts."""
    adjusted: dict[int, float] = {}
    for family in dict.fromkeys(c.family for c in found):
        members = [i for i, c in enumerate(found) if c.family == family]
        adjusted.update(zip(members, adjust_pvalues([found[i].p_value for i in members], "holm"), strict=True))
    done = []
    for i, c in enumerate(found):
        c = Comparison(**{**asdict(c), "p_adjusted": adjusted[i]})
        done.append(Comparison(**{**asdict(c), "verdict": verdict_of(c, alpha=alpha, min_effect=min_effect)}))
    return done


def _family(rows: dict[str, dict[str, object]], a: str, b: str, metric: str) -> str:
    """The family of the comparison of arm ``a`` with arm ``b`` on ``metric`` (`FAMILIES`; one
    per arm against the control: each arm's gate is a decision of its own)."""
    if rows[b]["role"] == Role.CONTROL:
        return f"{'outcomes' if metric in OUTCOMES else 'memory'}: {a}"
    return "stores" if rows[a]["agent"] == rows[b]["agent"] else "agents"


def _outcomes_of(metric: Metric, tables: Tables, arm: str) -> pd.Series | None:
    """``arm``'s binary outcome on ``metric`` per paired unit (a task, or a seeded memory in a
    task or a trial), indexed by the unit's key; None when the tables do not hold it."""
    if metric.paired_by is PairedBy.SESSIONS:
        sessions = tables.get("sessions")
        if sessions is None or metric.column not in sessions:  # a table written before the metric existed
            return None
        rows = sessions if metric.surface is None else sessions[sessions.surface == metric.surface]
        return rows[rows.arm == arm].set_index(KEY)[metric.column]
    if metric.paired_by in {PairedBy.BAD_HANDED, PairedBy.USABLE_HANDED}:
        pairs = tables.get("pairs")
        if pairs is None or pairs.empty:
            return None
        truths = BAD if metric.paired_by is PairedBy.BAD_HANDED else USABLE
        rows = pairs[(pairs.arm == arm) & pairs.truth.isin(truths)]
        # paired by the seeded memory, not by the id a store gave it: stores number memories their own way
        return rows.set_index([*KEY, "seed"])[metric.column]
    trials = tables.get("trials")
    if trials is None or TRIAL.bad_seeds not in trials:
        return None
    found = {}
    mine = trials[trials[TRIAL.arm] == arm][[TRIAL.scenario, TRIAL.trial, TRIAL.bad_seeds, TRIAL.healed_seeds]]
    for scenario, trial, bad_seeds, healed_seeds in mine.itertuples(index=False, name=None):
        healed = set(healed_seeds.split(";")) if isinstance(healed_seeds, str) else set()
        for seed in bad_seeds.split(";") if isinstance(bad_seeds, str) else []:
            found[(scenario, trial, "", seed)] = seed in healed
    index = pd.MultiIndex.from_tuples(list(found), names=[*KEY, "seed"]) if found else None
    return pd.Series(list(found.values()), index=index, dtype=bool) if found else None


class _Outcomes:
    """`_outcomes_of` for one set of tables, each (metric, arm) read once: a run of many arms
    pairs each arm with many others."""

    def __init__(self, tables: Tables) -> None:
        self.tables = tables
        self._found: dict[tuple[str, str], pd.Series | None] = {}

    def __call__(self, metric: Metric, arm: str) -> pd.Series | None:
        key = (metric.name, arm)
        if key not in self._found:
            self._found[key] = _outcomes_of(metric, self.tables, arm)
        return self._found[key]


def _paired_binary(metric: Metric, a: str, b: str, outcomes: _Outcomes, min_effect: float) -> Comparison | None:
    left, right = outcomes(metric, a), outcomes(metric, b)
    if left is None or right is None:
        return None
    both = pd.concat([left.rename("a"), right.rename("b")], axis=1, join="inner").dropna()
    if both.empty:
        return None
    x, y = both["a"].astype(bool).astype(int), both["b"].astype(bool).astype(int)
    clusters = [f"{key[0]}|{key[2]}" for key in both.index]  # a task (or a scenario) across trials
    diff = paired_difference(x.tolist(), y.tolist(), clusters=clusters)
    only_a, only_b = int(((x == 1) & (y == 0)).sum()), int(((x == 0) & (y == 1)).sum())
    test = mcnemar(only_a, only_b)
    # the task-clustered interval, widened to Newcombe's score interval where a small sample makes it too narrow
    score = newcombe_paired_ci(int(((x == 1) & (y == 1)).sum()), only_a, only_b, int(((x == 0) & (y == 0)).sum()))
    base = float(y.mean())
    rho = diff.rho if math.isfinite(diff.rho) else 0.0
    mde = min_detectable_effect(min(base, 1 - 1e-6), len(both), paired=True, rho=max(rho, 0.0))
    target = min(base + min_effect, 0.999) if base + min_effect < 1 else max(base - min_effect, 0.001)
    needed = sample_size_two_proportions(base, target, paired=True, rho=max(rho, 0.0)) if 0 < base < 1 else None
    return Comparison(
        metric.name,
        a,
        b,
        Test.MCNEMAR.value
        if metric.paired_by is PairedBy.SESSIONS
        else f"{Test.MCNEMAR.value}, per {metric.paired_by.value}",
        float(x.mean()),
        base,
        diff.mean_diff,
        max(min(diff.low, score[0]), -1.0),  # a difference of two rates lies in [-1, 1]
        min(max(diff.high, score[1]), 1.0),
        test.p_value,
        len(both),
        mde=mde,
        needed_n=needed,
    )


class _Reviews:
    """Each arm's code-review sessions (true and false positives, false negatives per task),
    read once."""

    def __init__(self, sessions: pd.DataFrame) -> None:
        rows = sessions[sessions.surface == "code_review"].copy()
        self.rows = rows
        self._found: dict[str, pd.DataFrame] = {}
        if rows.empty:  # a table of no review may have no review columns either
            return
        rows["tp"] = rows[SESSION.correct_findings].astype(int)
        rows["fp"] = rows.findings.astype(int) - rows.tp
        rows["fn"] = rows[SESSION.expected_findings].astype(int) - rows.tp

    def __call__(self, arm: str) -> pd.DataFrame:
        if arm not in self._found:
            self._found[arm] = self.rows[self.rows.arm == arm].set_index(KEY)[["tp", "fp", "fn"]]
        return self._found[arm]


def _bootstrap(metric: Metric, a: str, b: str, reviews: _Reviews, seed: int) -> Comparison | None:
    if reviews.rows.empty:
        return None
    both = reviews(a).merge(reviews(b), left_index=True, right_index=True, how="inner", suffixes=("_a", "_b"))
    if both.empty:
        return None
    xa = list(both[["tp_a", "fp_a", "fn_a"]].itertuples(index=False, name=None))
    xb = list(both[["tp_b", "fp_b", "fn_b"]].itertuples(index=False, name=None))
    which = metric.name.removeprefix("review_")
    result = paired_bootstrap(xa, xb, metric=which, seed=seed, n_resamples=2000)
    tp_a, fp_a, fn_a = (sum(v[i] for v in xa) for i in range(3))
    tp_b, fp_b, fn_b = (sum(v[i] for v in xb) for i in range(3))
    value_a = tp_a / (tp_a + (fp_a if which == "precision" else fn_a) or 1)
    value_b = tp_b / (tp_b + (fp_b if which == "precision" else fn_b) or 1)
    mde = (result.high - result.low) / 2 * 2.8 / 1.96  # the half-width at 80% power, from the bootstrap spread
    return Comparison(
        metric.name,
        a,
        b,
        Test.BOOTSTRAP.value,
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
    """(arm, reference arm): each against the control (its role), agent against agent on one
    store, store against store for one agent."""
    rows = arms.drop_duplicates("arm").sort_values("arm").to_dict("records")
    pairs: list[tuple[str, str]] = []
    controls = [r for r in rows if r["role"] == Role.CONTROL]
    for r in rows:
        if r["role"] == Role.CONTROL or not controls:
            continue
        same = [c for c in controls if c["store"] == r["store"]] or controls
        pairs.append((r["arm"], same[0]["arm"]))
    for r in rows:
        for q in rows:
            if r["arm"] >= q["arm"] or Role.CONTROL in {r["role"], q["role"]}:
                continue
            if r["store"] == q["store"] or r["agent"] == q["agent"]:
                pairs.append((r["arm"], q["arm"]))
    return pairs


def compare_within(
    tables: dict[str, pd.DataFrame], *, seed: int = 0, alpha: float = ALPHA, min_effect: float = MIN_EFFECT
) -> list[Comparison]:
    """Every comparison of a run's arms (see the module docstring), on every metric the
    registry says is compared within a run."""
    sessions = tables["sessions"]
    events = tables.get("events")
    paired: Tables = {
        "sessions": sessions,
        "trials": tables.get("trials", pd.DataFrame()),
        "pairs": memory_pairs(events) if events is not None else pd.DataFrame(),
    }
    outcomes, reviews = _Outcomes(paired), _Reviews(sessions)
    arms = sessions[["arm", "agent", "store", "role"]]
    rows = {str(r["arm"]): r for r in arms.drop_duplicates("arm").to_dict("records")}
    found: list[Comparison] = []
    for a, b in _pairs(arms):
        made = [_paired_binary(metric, a, b, outcomes, min_effect) for metric in registered_metrics(test=Test.MCNEMAR)]
        made += [_bootstrap(metric, a, b, reviews, seed) for metric in registered_metrics(test=Test.BOOTSTRAP)]
        found += [Comparison(**{**asdict(c), "family": _family(rows, a, b, c.metric)}) for c in made if c is not None]
    return _finish(found, alpha, min_effect)


def compare_groups(
    tables: dict[str, pd.DataFrame], *, alpha: float = ALPHA, min_effect: float = MIN_EFFECT
) -> list[Comparison]:
    """Task success of every arm against its control within each group of tasks (each kind of
    scenario, each stratum of discoverability), paired as `compare_within` pairs them; Holm
    adjusts this family apart from the run's own. Where memory's benefit comes from: a pooled
    effect says nothing of whether it is knowledge the repository does not offer."""
    sessions = tables["sessions"]
    roles = dict(zip(sessions.arm, sessions.role, strict=False))
    success = next(m for m in registered_metrics(test=Test.MCNEMAR) if m.name == "task_success_rate")
    groups = [(group, _Outcomes({"sessions": sessions[mask]})) for group, mask in task_groups(sessions)]
    found: list[Comparison] = []
    for a, b in _pairs(sessions[["arm", "agent", "store", "role"]]):
        if roles.get(b) != Role.CONTROL:
            continue
        for group, outcomes in groups:
            c = _paired_binary(success, a, b, outcomes, min_effect)
            if c is not None:
                found.append(Comparison(**{**asdict(c), "group": group, "family": "groups"}))
    return _finish(found, alpha, min_effect)


def compare_runs(
    current: RunResults,
    baseline: RunResults,
    *,
    current_sessions: pd.DataFrame | None = None,
    baseline_sessions: pd.DataFrame | None = None,
    seed: int = 0,
    alpha: float = ALPHA,
    min_effect: float = MIN_EFFECT,
) -> list[Comparison]:
    """Each arm of ``current`` against the same arm in ``baseline``, Holm-adjusted together.

    Given both runs' session tables, every task is the same task in both, so outcomes are
    paired by (scenario, trial, task): McNemar's exact test and a task-clustered interval for
    binary outcomes, the paired bootstrap for review precision and recall. Rates with no
    per-task outcome (memory-level rates such as detection), and every rate when a run has no
    session table, are compared unpaired (two-proportion z-test; the method says so).
    """
    paired = current_sessions is not None and baseline_sessions is not None
    found: list[Comparison] = []
    for arm in sorted(set(current.arms) & set(baseline.arms)):
        done: set[str] = set()
        if paired:
            assert current_sessions is not None
            assert baseline_sessions is not None
            now, then = f"{arm} (this run)", f"{arm} (baseline)"
            both = pd.concat(
                [
                    current_sessions[current_sessions.arm == arm].assign(arm=now),
                    baseline_sessions[baseline_sessions.arm == arm].assign(arm=then),
                ],
                ignore_index=True,
            )
            outcomes, reviews = _Outcomes({"sessions": both}), _Reviews(both)
            for metric in registered_metrics(test=Test.MCNEMAR):
                c = _paired_binary(metric, now, then, outcomes, min_effect)
                if c is not None:
                    found.append(c)
                    done.add(metric.name)
            for metric in registered_metrics(test=Test.BOOTSTRAP):
                c = _bootstrap(metric, now, then, reviews, seed)
                if c is not None:
                    found.append(c)
                    done.add(metric.name)
        for metric in registered_metrics(rate=True):
            x, y = current.arms[arm].rate(metric.name), baseline.arms[arm].rate(metric.name)
            if metric.name in done or x is None or y is None:
                continue
            found.append(_unpaired(metric.name, arm, x, y))
    return _finish([Comparison(**{**asdict(c), "family": "runs"}) for c in found], alpha, min_effect)


def _unpaired(metric: str, arm: str, x: Rate, y: Rate) -> Comparison:
    test = two_proportion_ztest(x.k, x.n, y.k, y.n)
    low, high = newcombe_diff_ci(x.k, x.n, y.k, y.n)
    n = min(x.n, y.n)
    mde = min_detectable_effect(min(y.value, 1 - 1e-6), n) if y.value < 1 else math.inf
    return Comparison(
        metric,
        f"{arm} (this run)",
        f"{arm} (baseline)",
        UNPAIRED,
        x.value,
        y.value,
        x.value - y.value,
        low,
        high,
        test.p_value,
        n,
        mde=mde,
    )
