"""What every rendering of a run says first: the decision, the gates that made it, and what to do.

The summary, report.md and report.html all start here: the verdict (PASS, FAIL or UNDECIDED,
`memstore.harness.report.gate.decide`), each failed gate and the scenarios where it failed,
each undecided gate with why and what would decide it, the harm probes named as probes, each
store under test against memstore's reference store, and the next step.
"""

from __future__ import annotations

from collections.abc import Iterable

from memstore.harness.analysis import Comparison, RunResults
from memstore.harness.records import Role
from memstore.harness.report.gate import Decision, Gate, Outcome, decide

__all__ = [
    "PROBE_NOTE",
    "REFERENCE_SCHEME",
    "failing_scenarios",
    "next_step",
    "store_lines",
    "undecided_lines",
    "verdict_line",
]

PROBE_NOTE = "a probe, expected to regress: it shows these scenarios can harm an agent that trusts memory"
REFERENCE_SCHEME = "sqlite"  # memstore's reference store: what a store under test is held against


def verdict_line(gate_list: list[Gate]) -> str:
    """``PASS: all 87 gates passed``, ``FAIL: 2 of 87 gates failed``, or ``UNDECIDED: none of 87
    gates failed; 5 inconclusive, 3 not exercised``."""
    decision = decide(gate_list)
    total = len(gate_list)
    if decision is Decision.PASS:
        return f"PASS: all {total} gates passed"
    if decision is Decision.FAIL:
        return f"FAIL: {sum(g.failed for g in gate_list)} of {total} gates failed"
    open_ = [g for g in gate_list if not g.decided]
    kinds = [
        f"{n} {outcome.value}"
        for outcome in (Outcome.INCONCLUSIVE, Outcome.NOT_EXERCISED)
        if (n := sum(g.outcome is outcome for g in open_))
    ]
    return f"UNDECIDED: none of {total} gates failed; {', '.join(kinds) or 'no gate'} (the sample cannot decide)"


def undecided_lines(gate_list: list[Gate]) -> list[str]:
    """One line per undecided gate, a gate of several arms on one line: ``inconclusive:
    jit-verify/sqlite: not significantly worse ...: <why>; <what would decide it>``."""
    grouped: dict[tuple[Outcome, str, str, str], list[Gate]] = {}
    for g in gate_list:
        if not g.decided:
            why = g.message if g.outcome is Outcome.INCONCLUSIVE else ""
            grouped.setdefault((g.outcome, g.key or g.name, why, g.advice), []).append(g)
    lines = []
    for (outcome, key, _, advice), found in grouped.items():
        if len(found) == 1:
            what = f"{found[0].name}: {found[0].message}"
        else:
            what = f"{key} on {len(found)} arms ({', '.join(g.arm for g in found)}): {found[0].message}"
        lines.append(f"{outcome.value}: {what}" + (f"; {advice}" if advice else ""))
    return lines


def failing_scenarios(results: RunResults, gate: Gate, most: int = 5) -> list[str]:
    """The scenarios where a failed gate failed (at most ``most``): where its promise was broken,
    or where the arm did worse than the control."""
    arm = results.arms.get(gate.arm)
    if arm is None:
        return []
    if gate.key.startswith("contract["):
        metric = gate.key[len("contract[") : -1]
        if metric == "caught":
            return []
        found = [s for s, m in arm.per_scenario.items() if _number(m.get(metric)) > 0]
    elif gate.key == "integrity[agent_errors]":
        found = [s for s, m in arm.per_scenario.items() if _rate_k(m.get("agent_error_rate")) > 0]
    elif gate.key in {"no_harm", "harm_seen"}:
        controls = [results.arms[c] for c in results.arms_of(Role.CONTROL)]
        if not controls:
            return []
        control = controls[0]
        found = [
            s
            for s, m in arm.per_scenario.items()
            if _value(m.get("task_success_rate")) < _value(control.per_scenario.get(s, {}).get("task_success_rate"))
        ]
    else:
        return []
    return sorted(found)[:most] + ([f"and {len(found) - most} more"] if len(found) > most else [])


def _number(value: object) -> float:
    return float(value) if isinstance(value, int | float) else 0.0


def _rate_k(value: object) -> int:
    return int(getattr(value, "k", 0) or 0)


def _value(value: object) -> float:
    found = getattr(value, "value", None)
    return float(found) if found is not None else float("nan")


def store_lines(results: RunResults, gate_list: list[Gate]) -> list[str]:
    """For each store under test, one line against the reference store (``sqlite:``): the gates
    its arms failed, and its difference in task success and healing for each agent run on both,
    with 95% intervals. Nothing when the run has one store and it is the reference."""
    stores = sorted({a.store for a in results.arms.values() if a.role is not Role.CONTROL})
    tested = [s for s in stores if s.partition(":")[0] != REFERENCE_SCHEME]
    reference = next((s for s in stores if s.partition(":")[0] == REFERENCE_SCHEME), None)
    lines = []
    for store in tested:
        arms = [n for n, a in results.arms.items() if a.store == store]
        if any(results.arms[n].role is Role.NEGATIVE_CONTROL for n in arms):
            continue
        failed = sorted({g.key or g.name for g in gate_list if g.failed and g.arm in arms})
        shown = f"failed {', '.join(failed)}" if failed else "failed no gate"
        if reference is None:
            lines.append(f"{store}: {shown}; no reference store in this run (add --store sqlite: to compare)")
            continue
        against = [_against(c, results, reference) for c in results.comparisons if c.a in arms or c.b in arms]
        diffs = [d for d in against if d]
        lines.append(f"{store} against the reference {reference}: {shown}" + (f"; {'; '.join(diffs)}" if diffs else ""))
    return lines


def _against(c: Comparison, results: RunResults, reference: str) -> str:
    """``jit-verify: success -2.1 points [-5.0, +0.8], heal ...`` for a store-against-reference comparison."""
    if c.metric not in {"task_success_rate", "self_heal_rate"} or c.group:
        return ""
    a, b = results.arms.get(c.a), results.arms.get(c.b)
    if a is None or b is None or a.agent != b.agent or reference not in {a.store, b.store}:
        return ""
    if a.role is not Role.TREATMENT:  # a probe is meant to regress on any store
        return ""
    sign = 1 if b.store == reference else -1  # always the store under test minus the reference
    low, high = sorted((sign * c.low, sign * c.high))
    what = "success" if c.metric == "task_success_rate" else "healing"
    return f"{a.agent} {what} {100 * sign * c.diff:+.1f} points [{100 * low:+.1f}, {100 * high:+.1f}]"


def next_step(gate_list: list[Gate], results: RunResults) -> str:
    """What to do now: for a failure, where to read it; for undecided gates, the run that would
    decide them (about how many tasks, or which scenarios)."""
    decision = decide(gate_list)
    if decision is Decision.PASS:
        return ""
    if decision is Decision.FAIL:
        return "Next: read each failed gate above (report.md names the scenarios; report.html drills down to tasks)."
    tasks = results.run.tasks
    needed = _most(g.tasks_needed for g in gate_list if g.outcome is Outcome.INCONCLUSIVE)
    steps = []
    if needed is not None:
        trials = results.run.trials or 1
        more = max(trials + 1, -(-needed * trials // max(tasks, 1)))
        steps.append(
            f"run about {needed:,} tasks ({tasks:,} now): more scenarios or a larger --sample, or --trials {more} "
            "on these; --sequential stops as soon as every gate is decided"
        )
    if any(g.outcome is Outcome.NOT_EXERCISED for g in gate_list):
        steps.append("add scenarios that exercise the gates not exercised (each says what; the shipped library does)")
    return "Next: " + "; ".join(steps) + "." if steps else ""


def _most(found: Iterable[int | None]) -> int | None:
    numbers = [n for n in found if n is not None]
    return max(numbers) if numbers else None
