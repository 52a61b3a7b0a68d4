"""The gates on effects: each treatment arm not worse than the control, each harm probe harmed,
the verifier's bars, no regression against a baseline. Each decides from the run's intervals at
the level the gate asks (`MIN_EFFECT`), or says it cannot and about how many tasks would."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import replace

from statsmodels.stats.proportion import proportion_confint

from memstore.harness.analysis import (
    MIN_EFFECT,
    OUTCOMES,
    ArmResult,
    Comparison,
    ComparisonVerdict,
    RunResults,
    lower_is_better,
    rate_cs,
)
from memstore.harness.records import Role
from memstore.harness.report.gate import Gate, Outcome, decided, shown_p
from memstore.harness.stats import wilson_ci

__all__ = [
    "FEWEST_UNITS",
    "HARM_OUTCOMES",
    "anytime",
    "baseline_gate",
    "harm_seen_gate",
    "no_harm_gates",
    "tasks_of",
    "verifier_gates",
]

HARM_OUTCOMES = ("task_success_rate", "merge_rate", "answer_accuracy", "review_precision")


def _against_control(results: RunResults, arms: list[str]) -> list[Comparison]:
    """The outcomes of ``arms`` against the control (over every task: no group's, no memory
    metric's). In a sequential run, each with its anytime-valid interval instead (`anytime`)."""
    controls = set(results.arms_of(Role.CONTROL))
    found = [c for c in results.comparisons if c.a in arms and c.b in controls and c.metric in OUTCOMES and not c.group]
    intervals = anytime(results)
    if intervals is None:
        return found
    return [_anytime(c, intervals[c.a][c.metric]) for c in found if c.metric in intervals.get(c.a, {})]


def anytime(results: RunResults) -> dict[str, dict[str, list[float]]] | None:
    """A sequential run's anytime-valid intervals (`memstore.harness.analysis.anytime`), or None."""
    found = results.run.sequential
    return found.get("intervals", {}) if isinstance(found, dict) else None


def _anytime(c: Comparison, interval: list[float]) -> Comparison:
    """``c`` decided by its confidence sequence: worse when the sequence lies below 0."""
    low, high = float(interval[0]), float(interval[1])
    verdict = ComparisonVerdict.NO_CHANGE
    if high < 0 or low > 0:
        verdict = ComparisonVerdict.REGRESSED if high < 0 else ComparisonVerdict.IMPROVED
    return replace(c, low=low, high=high, verdict=verdict, method="betting confidence sequence (anytime-valid)")


def _harm_excluded(c: Comparison, margin: float = MIN_EFFECT) -> bool:
    """Whether ``c``'s interval rules out ``a`` being worse than ``b`` by ``margin`` or more."""
    if lower_is_better(c.metric):
        return math.isfinite(c.high) and c.high < margin
    return math.isfinite(c.low) and c.low > -margin


def _tasks_until(c: Comparison, tasks: int, room: float) -> int | None:
    """About how many tasks would shrink ``c``'s interval to half-width ``room`` at the
    difference it shows (the interval narrows as one over the square root of the tasks); None
    when no sample would (no room)."""
    half = (c.high - c.low) / 2
    if not (math.isfinite(half) and half > 0 and room > 0 and c.n > 0):
        return None
    return max(tasks + 1, math.ceil(tasks * (half / room) ** 2))


def _better(c: Comparison) -> float:
    """``c``'s difference, positive when ``a`` is the better."""
    return -c.diff if lower_is_better(c.metric) else c.diff


def _tasks_to_exclude_harm(c: Comparison, tasks: int, margin: float = MIN_EFFECT) -> int | None:
    """About how many tasks would make ``c``'s interval rule out harm of ``margin``."""
    return _tasks_until(c, tasks, margin + _better(c))


def _tasks_to_show(c: Comparison, tasks: int) -> int | None:
    """About how many tasks would make ``c``'s interval show ``a`` worse than ``b``."""
    return _tasks_until(c, tasks, -_better(c))


def _most(found: Iterable[int | None]) -> int | None:
    numbers = [n for n in found if n is not None]
    return max(numbers) if numbers else None


def tasks_of(results: RunResults) -> int:
    """The tasks of a run (every trial counted)."""
    return results.run.tasks or 1


def _more(tasks_needed: int | None, now: int, what: str) -> str:
    if tasks_needed is None:
        return f"no sample would {what} at the difference this run shows"
    return f"about {tasks_needed:,} tasks ({now:,} now) would {what}"


def no_harm_gates(results: RunResults, arms: list[str] | None = None) -> list[Gate]:
    """Each of ``arms`` (default: every treatment arm) is not worse than the control on any
    outcome: failed on a significant regression (paired, Holm-adjusted), passed where every
    outcome's 95% interval rules out harm of `MIN_EFFECT` or more, inconclusive otherwise. A gate
    with nothing compared is not exercised."""
    chosen = results.arms_of(Role.TREATMENT) if arms is None else arms
    found = []
    for name in chosen:
        mine = _against_control(results, [name])
        worse = [c for c in mine if c.verdict is ComparisonVerdict.REGRESSED]
        open_ = [c for c in mine if not worse and not _harm_excluded(c)]
        title = f"{name}: not significantly worse than the control"
        if not mine:
            needed = "a control arm (no-memory) on the same tasks"
            message = "no comparison with a control in this run"
            found.append(Gate(title, Outcome.NOT_EXERCISED, message, arm=name, key="no_harm", needed=needed))
        elif worse:
            message = "; ".join(
                f"{c.metric} {c.a_value:.3f} vs {c.b_value:.3f} (p = {shown_p(c.p_adjusted)})" for c in worse
            )
            found.append(Gate(title, Outcome.FAILED, message, arm=name, key="no_harm"))
        elif open_:
            need = _most(_tasks_to_exclude_harm(c, tasks_of(results)) for c in open_)
            shown = "; ".join(f"{c.metric} {c.diff:+.3f} [{c.low:+.3f}, {c.high:+.3f}]" for c in open_)
            message = f"{shown}: harm of {MIN_EFFECT:.0%} or more is not ruled out"
            needed = _more(need, tasks_of(results), "rule it out")
            gate = Gate(title, Outcome.INCONCLUSIVE, message, arm=name, key="no_harm", needed=needed, tasks_needed=need)
            found.append(gate)
        else:
            message = f"no outcome of {len(mine)} compared is worse by {MIN_EFFECT:.0%} or more (95% intervals)"
            found.append(Gate(title, Outcome.PASSED, message, arm=name, key="no_harm"))
    return found


def harm_seen_gate(results: RunResults, arms: list[str] | None = None) -> Gate:
    """The run shows bad memory harming an agent that trusts it (default: the harm-probe arms):
    significantly worse than the control on merge rate, answer accuracy or review precision
    (passed); failed where every such outcome rules out harm of `MIN_EFFECT`; inconclusive
    otherwise. A scenario set where this fails cannot show that a store or an agent is safe."""
    chosen = results.arms_of(Role.HARM_PROBE) if arms is None else arms
    shown = [c for c in _against_control(results, chosen) if c.metric in HARM_OUTCOMES]
    worse = [c for c in shown if c.verdict is ComparisonVerdict.REGRESSED]
    detail = "; ".join(
        f"{c.metric} {c.a_value:.3f} vs {c.b_value:.3f} ({c.verdict.value}, p = {shown_p(c.p_adjusted)})" for c in shown
    )
    name = ", ".join(chosen) or "harm probe"
    title = f"{name}: bad memory measurably harms it (a probe: expected to regress)"
    arm = chosen[0] if len(chosen) == 1 else ""
    if not shown:
        needed = "a harm probe (trusting) and a control (no-memory) on the same tasks"
        return Gate(title, Outcome.NOT_EXERCISED, "no harm-probe arm with a control", arm=arm, key="harm_seen",
                    needed=needed)  # fmt: skip
    if worse:
        return Gate(title, Outcome.PASSED, detail, arm=arm, key="harm_seen")
    if all(_harm_excluded(c) for c in shown):
        message = f"{detail}; harm of {MIN_EFFECT:.0%} or more is ruled out"
        return Gate(title, Outcome.FAILED, message, arm=arm, key="harm_seen")
    need = min(
        (n for c in shown if (n := _tasks_to_show(c, tasks_of(results))) is not None), default=None
    )  # one suffices
    message = f"{detail}; too few tasks to show harm at this significance"
    needed = _more(need, tasks_of(results), "show it")
    return Gate(title, Outcome.INCONCLUSIVE, message, arm=arm, key="harm_seen", needed=needed, tasks_needed=need)


_VERIFIER_NEEDS = {
    "detection_recall": "bad memories (stale, adversarial) handed to it",
    "false_invalidation_rate": "usable memories handed to it",
    "reanchor_accuracy": "memories whose cited code moved, handed to it",
}


def verifier_gates(
    arm: ArmResult,
    name: str,
    *,
    detection: float = 0.95,
    false_invalidation: float = 0.02,
    reanchor: float = 0.8,
    tasks: int = 0,
    sequential: bool = False,
) -> list[Gate]:
    """The verifier's bars on one arm's metrics, over every seeded memory (each one's truth is
    known): passed where the rate's one-sided 95% (exact) bound clears its bar, failed where the
    other bound misses it, inconclusive in between; a rate with nothing to count is not exercised.

    The bars fail a verifier far from the reference's figures on the default run (detection
    0.985, false invalidation 0.00003, re-anchoring 0.84: the generated population moves code
    in ways the reference cannot always follow), such as one that refuses everything."""
    bars = (
        ("detection_recall", ">=", detection),
        ("false_invalidation_rate", "<=", false_invalidation),
        ("reanchor_accuracy", ">=", reanchor),
    )
    found = []
    for metric, how, bar in bars:
        rate = arm.rate(metric)
        title, key = f"{name}: {metric} {how} {bar}", f"verifier[{metric}]"
        if rate is None:
            needed = f"a scenario with {_VERIFIER_NEEDS[metric]}"
            message = f"not measured (bar {how} {bar})"
            found.append(Gate(title, Outcome.NOT_EXERCISED, message, arm=name, key=key, needed=needed))
            continue
        low, high = _bounds(rate.k, rate.n, sequential)
        ok, bad = (low >= bar, high < bar) if how == ">=" else (high <= bar, low > bar)
        shown = f"{rate} [{low:.3f}, {high:.3f}] (bar {how} {bar})"
        if ok or bad:
            found.append(Gate(title, decided(ok), shown, arm=name, key=key))
            continue
        units = _units_to_clear(rate.k / rate.n, bar, how)
        need = None if units is None or not tasks else math.ceil(tasks * units / rate.n)
        needed = _more(need, tasks, "decide it") if tasks else "a larger sample of the memories it counts"
        message = f"{shown}: its interval straddles the bar"
        found.append(Gate(title, Outcome.INCONCLUSIVE, message, arm=name, key=key, needed=needed, tasks_needed=need))
    return found


def _bounds(k: int, n: int, sequential: bool) -> tuple[float, float]:
    """A rate's bounds, each one-sided at 95%: Clopper-Pearson's (exact: a handful of memories
    cannot fail a bar by chance more often than 5%, as Wilson's can), or in a sequential run the
    beta-binomial mixture's confidence sequence (valid at every look)."""
    if sequential:
        return rate_cs(k, n, alpha=0.05)  # two-sided 95%: each bound holds at 95% or better
    low, high = proportion_confint(k, n, alpha=0.10, method="beta")
    return float(low), float(high)


def _units_to_clear(p: float, bar: float, how: str, z: float = 1.645) -> float | None:
    """About how many counted memories a one-sided 95% bound on a rate ``p`` needs to clear ``bar``
    (None: ``p`` is on the wrong side of it)."""
    gap = p - bar if how == ">=" else bar - p
    if gap <= 0:
        return None
    spread = max(p * (1 - p), bar * (1 - bar) / 4)  # a rate of 0 or 1 still has the spread of its bar
    return z * z * spread / (gap * gap)


# The fewest units on which a rate could ever rule out a regression of `MIN_EFFECT`: with no unit
# worse than in the baseline, the interval still reaches the Wilson bound of 0 in n, which falls
# under 5 points at 73 (`memstore.harness.stats.newcombe_paired_ci`).
FEWEST_UNITS = next(n for n in range(1, 10_000) if wilson_ci(0, n)[1] < MIN_EFFECT)


def baseline_gate(c: Comparison, tasks: int) -> Gate | None:
    """No regression against the baseline on one metric: failed when significant; passed where the
    interval rules out a regression of `MIN_EFFECT`, or the baseline leaves no room for one (a rate
    of 0 cannot fall); inconclusive otherwise, with the tasks that would decide. In a run of at
    least `FEWEST_UNITS` tasks, a metric measured on fewer units than that (the six planted
    memories of instructions-in-memories in 2,044 tasks) is gated only when significantly worse and
    otherwise stays a row of the comparisons: a run large enough to decide its task-level gates is
    not left undecided by a handful of rare units. A smaller run keeps the gate, inconclusive with
    the tasks that would decide it."""
    message = (
        f"{c.verdict.value}: {c.a_value:.3f} now vs {c.b_value:.3f} in the baseline "
        f"(diff {c.diff:+.3f} [{c.low:+.3f}, {c.high:+.3f}], adjusted p = {shown_p(c.p_adjusted)}; {c.method})"
    )
    judged = c.a.removesuffix(" (this run)")
    title, key = f"{judged}: {c.metric} not regressed", f"baseline[{c.metric}]"
    if c.worse:
        return Gate(title, Outcome.FAILED, message, arm=judged, key=key)
    room = 1 - c.b_value if lower_is_better(c.metric) else c.b_value
    if room < MIN_EFFECT:
        message += f"; {c.b_value:.3f} in the baseline leaves no room for a regression of {MIN_EFFECT:.0%}"
        return Gate(title, Outcome.PASSED, message, arm=judged, key=key)
    if _harm_excluded(c):
        return Gate(title, Outcome.PASSED, message, arm=judged, key=key)
    if c.n < FEWEST_UNITS <= tasks:
        return None
    need = _tasks_to_exclude_harm(c, tasks)
    message += f"; a regression of {MIN_EFFECT:.0%} or more is not ruled out"
    needed = _more(need, tasks, "rule it out")
    return Gate(title, Outcome.INCONCLUSIVE, message, arm=judged, key=key, needed=needed, tasks_needed=need)
