"""Gates: the pass/fail checks of a run, each a JUnit test case, each able to fail.

Every run gets the integrity gates (the run measured something), the store contract's
invariants (one gate per promise: no leaks, no expiry breaches, nothing forgotten, altered or
handed out after it was retired or superseded...), the no-harm gate for every treatment arm (not significantly worse
than the control on any outcome) and, given a baseline, one gate per comparison with it.
`harm_seen_gate` and `verifier_gates` are for suites that assert on a known scenario set
(``evals/``). `tests/harness/report/test_reports.py` feeds each gate a run where it must fail.
"""

from __future__ import annotations

from dataclasses import dataclass

from memstore.harness.analysis.compare import Comparison, Verdict
from memstore.harness.analysis.model import ArmResult, Role, RunResults
from memstore.harness.run.promises import PROMISES

__all__ = [
    "HARM_OUTCOMES",
    "Gate",
    "gates",
    "harm_seen_gate",
    "invariant_gates",
    "no_harm_gates",
    "verifier_gates",
]

HARM_OUTCOMES = ("merge_rate", "answer_accuracy", "review_precision")


@dataclass(frozen=True)
class Gate:
    """A pass/fail check of a run: one JUnit test case.

    ``integrity``: the gate says whether the run measured anything at all (an agent that failed
    every session, units that could not run, a store changed behind the harness's back); a
    run that fails one is a failed run, whatever else was asked.
    """

    name: str
    passed: bool
    message: str
    integrity: bool = False
    arm: str = ""  # the arm it judges ("" for a gate of several)
    key: str = ""  # what it checks, the same for every arm: contract[forgotten], no_harm, baseline[merge_rate]...


def _integrity(name: str, arm: ArmResult) -> list[Gate]:
    errors = arm.rate("agent_error_rate")
    failed, tampered = arm.count("failed_units"), arm.count("tampering")
    every = errors is not None and errors.k == errors.n
    shown = f"{errors.k} of {errors.n}" if errors is not None else "0 of 0"
    return [
        Gate(
            f"{name}: sessions without an agent error > 0",
            not every,
            f"agent errors in {shown} sessions"
            + (" (every one): nothing was measured" if every else "")
            + (f"; first: {arm.errors[0][0]}" if arm.errors else ""),
            integrity=True,
            arm=name,
            key="integrity[agent_errors]",
        ),
        _infrastructure(name, arm),
        Gate(
            f"{name}: every unit ran",
            failed == 0,
            f"{failed} unit(s) could not run",
            integrity=True,
            arm=name,
            key="integrity[units]",
        ),
        Gate(
            f"{name}: tampering == 0",
            tampered == 0,
            f"{tampered} change(s) to the store or a template behind the harness's back",
            integrity=True,
            arm=name,
            key="integrity[tampering]",
        ),
    ]


def _infrastructure(name: str, arm: ArmResult) -> Gate:
    """Sessions lost to the infrastructure (timeouts, a model endpoint down) measure nothing: an
    arm that lost every one of them measured nothing; one that lost some says how many."""
    lost = arm.rate("infra_error_rate")
    every = lost is not None and lost.k == lost.n
    shown = f"{lost.k} of {lost.n}" if lost is not None else "0 of 0"
    return Gate(
        f"{name}: sessions without an infrastructure error > 0",
        not every,
        f"infrastructure errors (timeouts, model endpoint) in {shown} sessions"
        + (" (every one): nothing was measured" if every else ""),
        integrity=True,
        arm=name,
        key="integrity[infra_errors]",
    )


def _invariants(name: str, arm: ArmResult) -> list[Gate]:
    """One gate per promise of the store contract: the audit found no breach of it."""
    found = []
    for promise in PROMISES:
        count = arm.count(promise.metric)
        shown = "no breach" if count == 0 else f"{count} breach{'es' if count != 1 else ''}"
        found.append(
            Gate(
                f"{name}: {promise.says} ({promise.metric} == 0)",
                count == 0,
                shown,
                arm=name,
                key=f"contract[{promise.metric}]",
            )
        )
    return found


def _caught(name: str, arm: ArmResult) -> list[Gate]:
    """A negative control's store is built to break the contract: its gate is that the audit sees it."""
    count = arm.count("contract_breaches")
    return [
        Gate(
            f"{name}: the negative control's breaches are caught (contract_breaches > 0)",
            count > 0,
            f"{count} breach(es) of the store contract found",
            arm=name,
            key="contract[caught]",
        )
    ]


def invariant_gates(results: RunResults) -> list[Gate]:
    """No arm's store breaks a promise of the store contract (leaks and expiry among them); a
    negative control's breaks it and is caught."""
    return [
        g
        for name, arm in results.arms.items()
        for g in (_caught(name, arm) if arm.role is Role.NEGATIVE_CONTROL else _invariants(name, arm))
    ]


def _against_control(results: RunResults, arms: list[str]) -> list[Comparison]:
    controls = set(results.arms_of(Role.CONTROL))
    return [c for c in results.comparisons if c.a in arms and c.b in controls]


def no_harm_gates(results: RunResults, arms: list[str] | None = None) -> list[Gate]:
    """Each of ``arms`` (default: every treatment arm) is not significantly worse than the
    control on any outcome (paired, Holm-adjusted). A gate with nothing compared fails."""
    chosen = results.arms_of(Role.TREATMENT) if arms is None else arms
    found = []
    for name in chosen:
        mine = _against_control(results, [name])
        worse = [c for c in mine if c.verdict is Verdict.REGRESSED]
        if not mine:
            message = "no comparison with a control in this run"
        elif worse:
            message = "; ".join(
                f"{c.metric} {c.a_value:.3f} vs {c.b_value:.3f} (p = {_p(c.p_adjusted)})" for c in worse
            )
        else:
            message = f"no outcome of {len(mine)} compared is significantly worse"
        found.append(
            Gate(
                f"{name}: not significantly worse than the control",
                bool(mine) and not worse,
                message,
                arm=name,
                key="no_harm",
            )
        )
    return found


def harm_seen_gate(results: RunResults, arms: list[str] | None = None) -> Gate:
    """The run shows bad memory harming an agent that trusts it (default: the harm-probe arms):
    significantly worse than the control on merge rate, answer accuracy or review precision. A
    scenario set where this fails cannot show that a store or an agent is safe."""
    chosen = results.arms_of(Role.HARM_PROBE) if arms is None else arms
    shown = [c for c in _against_control(results, chosen) if c.metric in HARM_OUTCOMES]
    worse = [c for c in shown if c.verdict is Verdict.REGRESSED]
    detail = "; ".join(
        f"{c.metric} {c.a_value:.3f} vs {c.b_value:.3f} ({c.verdict.value}, p = {_p(c.p_adjusted)})" for c in shown
    )
    name = ", ".join(chosen) or "harm probe"
    if shown and not worse and all(c.verdict is Verdict.UNDERPOWERED for c in shown):
        detail += "; too few tasks to show harm at this significance: run more of them"
    return Gate(
        f"{name}: bad memory measurably harms it",
        bool(worse),
        detail or "no harm-probe arm with a control",
        arm=chosen[0] if len(chosen) == 1 else "",
        key="harm_seen",
    )


def verifier_gates(
    arm: ArmResult,
    name: str,
    *,
    detection: float = 0.95,
    false_invalidation: float = 0.02,
    reanchor: float = 0.9,
) -> list[Gate]:
    """The verifier's bars on one arm's metrics: a rate that was not measured fails its gate."""
    bars = (
        ("detection_recall", ">=", detection),
        ("false_invalidation_rate", "<=", false_invalidation),
        ("reanchor_accuracy", ">=", reanchor),
    )
    found = []
    for metric, how, bar in bars:
        rate = arm.rate(metric)
        ok = rate is not None and (rate.value >= bar if how == ">=" else rate.value <= bar)
        shown = "not measured" if rate is None else f"{rate.value:.3f}"
        found.append(
            Gate(f"{name}: {metric} {how} {bar}", ok, f"{shown} (bar {how} {bar})", arm=name, key=f"verifier[{metric}]")
        )
    return found


def gates(results: RunResults, baseline: list[Comparison] | None = None) -> list[Gate]:
    """Every run's gates: integrity, no leaks or expiry violations, every treatment arm not
    significantly worse than the control (where the run has one), and no significant
    regression against the baseline."""
    found = []
    for name, arm in results.arms.items():
        found += _integrity(name, arm)
        found += _caught(name, arm) if arm.role is Role.NEGATIVE_CONTROL else _invariants(name, arm)
    found += [g for g in no_harm_gates(results) if "no comparison" not in g.message]
    for c in baseline or []:
        message = (
            f"{c.verdict.value}: {c.a_value:.3f} now vs {c.b_value:.3f} in the baseline "
            f"(diff {c.diff:+.3f}, adjusted p = {_p(c.p_adjusted)}; {c.method})"
        )
        if c.verdict is Verdict.UNDERPOWERED and c.mde is not None and c.mde < 1:
            message += f"; the smallest change this run could detect is {c.mde:.3f}"
        elif c.verdict is Verdict.UNDERPOWERED:
            message += "; this run could not detect a change of any size on it"
        judged = c.a.removesuffix(" (this run)")
        found.append(
            Gate(f"{judged}: {c.metric} not regressed", not c.worse, message, arm=judged, key=f"baseline[{c.metric}]")
        )
    return found


def _p(p: float) -> str:
    return "< 1e-16" if p < 1e-16 else f"{p:.3g}"
