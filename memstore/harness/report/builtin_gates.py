"""Gates: the checks of a run, each a JUnit test case, each able to fail, each a decision.

A gate ends in one of four outcomes (`Outcome`):

- *passed*: the promise held and the run put it to the test, or the sample shows what the gate
  asks at its level (an outcome not worse than the control by more than `MIN_EFFECT`, a rate
  whose 95% interval clears its bar);
- *failed*: a promise broken, a significant regression, a rate whose interval misses its bar;
- *not exercised*: no session of the run could have broken the promise (no correction was made,
  no memory expired, no bad memory was handed to the verifier), so a pass would mean nothing;
  the gate says what would exercise it;
- *inconclusive*: exercised, but the sample cannot decide at the gate's level; the gate says
  about how many tasks would.

Every run gets the integrity gates (the run measured something), the store contract's
invariants (one gate per promise: no leaks, no expiry breaches, nothing forgotten, altered or
handed out after it was retired or superseded...), the no-harm gate for every treatment arm, the
harm-seen gate for every harm probe (bad memory measurably harms an agent that trusts it), the
verifier's bars for every arm whose agent declares that it verifies, and, given a baseline, one
gate per comparison with it. Each family is registered with `@gate` (`families`), memstore's
own here, a plug-in's in its own module, and says which arms it judges by what they declare.
`tests/harness/report/test_reports.py` feeds each gate a run where it must fail, and one where
it cannot decide.
"""

from __future__ import annotations

from memstore.harness.analysis import ArmResult, RunResults
from memstore.harness.records import PROMISES, Role
from memstore.harness.report.effects import (
    HARM_OUTCOMES,
    anytime,
    baseline_gate,
    harm_seen_gate,
    no_harm_gates,
    tasks_of,
    verifier_gates,
)
from memstore.harness.report.families import GateRun, gate, gates
from memstore.harness.report.gate import Gate, Outcome, decided

__all__ = [
    "HARM_OUTCOMES",
    "Gate",
    "Outcome",
    "gates",
    "harm_seen_gate",
    "invariant_gates",
    "no_harm_gates",
    "verifier_gates",
]


def _integrity(name: str, arm: ArmResult) -> list[Gate]:
    errors = arm.rate("agent_error_rate")
    failed, tampered = arm.count("failed_units"), arm.count("tampering")
    every = errors is not None and errors.k == errors.n
    shown = f"{errors.k} of {errors.n}" if errors is not None else "0 of 0"
    return [
        Gate(
            f"{name}: sessions without an agent error > 0",
            decided(not every),
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
            decided(failed == 0),
            f"{failed} unit(s) could not run",
            integrity=True,
            arm=name,
            key="integrity[units]",
        ),
        Gate(
            f"{name}: tampering == 0",
            decided(tampered == 0),
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
        decided(not every),
        f"infrastructure errors (timeouts, model endpoint) in {shown} sessions"
        + (" (every one): nothing was measured" if every else ""),
        integrity=True,
        arm=name,
        key="integrity[infra_errors]",
    )


def _invariants(name: str, arm: ArmResult, results: RunResults) -> list[Gate]:
    """One gate per promise of the store contract: failed on a breach; passed when the run gave
    the store a chance to break it, in this arm's sessions or in another arm's on the same store
    (a promise is the store's: an agent that never corrects gives no chance to supersede, and its
    arm's gate is not left open for that); not exercised otherwise. A run written before chances
    were counted: passed on no breach."""
    counted = "chances[forgotten]" in arm.overall
    others = [
        a for n, a in results.arms.items() if n != name and a.store == arm.store and a.role is not Role.NEGATIVE_CONTROL
    ]
    found = []
    for promise in PROMISES:
        metric = promise.metric
        count, chances = arm.count(metric), arm.count(f"chances[{metric}]")
        elsewhere = sum(a.count(f"chances[{metric}]") for a in others)
        title, key = f"{name}: {promise.says} ({metric} == 0)", f"contract[{metric}]"
        if count:
            breaches = f"{count} breach{'es' if count != 1 else ''}"
            shown = f"{breaches} in {chances} chances" if chances else breaches
            found.append(Gate(title, Outcome.FAILED, shown, arm=name, key=key))
        elif chances or elsewhere or (not counted and arm.count("sessions")):
            shown = (
                "no breach"
                if not counted
                else f"no breach in {chances} chances"
                if chances
                else f"no breach; this arm gave it no chance, the store's other arms {elsewhere}"
            )
            found.append(Gate(title, Outcome.PASSED, shown, arm=name, key=key))
        else:
            message = "no session gave the store a chance to break it"
            needed = f"a scenario with {promise.chance}"
            found.append(Gate(title, Outcome.NOT_EXERCISED, message, arm=name, key=key, needed=needed))
    return found


def _caught(name: str, arm: ArmResult) -> list[Gate]:
    """A negative control's store is built to break the contract: its gate is that the audit sees it."""
    count = arm.count("contract_breaches")
    chances = sum(arm.count(f"chances[{p.metric}]") for p in PROMISES)
    if count:
        outcome = Outcome.PASSED
    else:
        outcome = Outcome.FAILED if chances or not arm.count("sessions") else Outcome.NOT_EXERCISED
    return [
        Gate(
            f"{name}: the negative control's breaches are caught (contract_breaches > 0)",
            outcome,
            f"{count} breach(es) of the store contract found",
            arm=name,
            key="contract[caught]",
            needed="" if outcome is not Outcome.NOT_EXERCISED else "a scenario whose sessions use the store",
        )
    ]


def invariant_gates(results: RunResults) -> list[Gate]:
    """No arm's store breaks a promise of the store contract (leaks and expiry among them); a
    negative control's breaks it and is caught."""
    return [g for name in results.arms for g in _contract(GateRun(results), name)]


@gate("integrity", each_arm=True)
def _integrity_of(run: GateRun, name: str) -> list[Gate]:
    """The arm measured something: sessions without an agent or infrastructure error, every unit ran, no tampering."""
    return _integrity(name, run.results.arms[name])


@gate("contract", each_arm=True)
def _contract(run: GateRun, name: str) -> list[Gate]:
    """The store contract: one gate per promise, or a negative control's breaches caught."""
    arm = run.results.arms[name]
    return _caught(name, arm) if arm.role is Role.NEGATIVE_CONTROL else _invariants(name, arm, run.results)


@gate("no_harm")
def _no_harm(run: GateRun) -> list[Gate]:
    """Every treatment arm not worse than the control (given a control)."""
    return no_harm_gates(run.results) if run.results.arms_of(Role.CONTROL) else []


@gate("harm_seen")
def _harm_seen(run: GateRun) -> list[Gate]:
    """Every harm probe measurably harmed by bad memory (given a control)."""
    if not run.results.arms_of(Role.CONTROL):
        return []
    return [harm_seen_gate(run.results, [name]) for name in run.results.arms_of(Role.HARM_PROBE)]


@gate("verifier", declares="verifies")
def _verifier(run: GateRun, name: str) -> list[Gate]:
    """The verifier's bars, for an arm whose agent declares that it verifies memories before use."""
    results = run.results
    return verifier_gates(results.arms[name], name, tasks=tasks_of(results), sequential=anytime(results) is not None)


@gate("baseline")
def _baseline(run: GateRun) -> list[Gate]:
    """No regression against the baseline, one gate per metric compared (given a baseline)."""
    return [g for c in run.baseline if (g := baseline_gate(c, tasks_of(run.results))) is not None]
