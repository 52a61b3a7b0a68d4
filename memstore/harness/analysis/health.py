"""Metrics of a run's health: the rules that must hold (leaks, expiry, tampering, units that
ran) and what a session costs. Declared in the registry like every other metric."""

from __future__ import annotations

from memstore.harness.analysis.metric_registry import Direction, Level, Slice, metric
from memstore.harness.analysis.metrics import _binary
from memstore.harness.analysis.pairs import column
from memstore.harness.analysis.run_results import Rate
from memstore.harness.records import PROMISES, SESSION, Promise

__all__: list[str] = []


@metric(
    SESSION.leaks,
    label="leaks",
    counts="memories shown to someone not entitled to see them (checked by the harness from the rules): "
    "scope_leaks + preference_leaks + surface_leaks + get_leaks",
    direction=Direction.ZERO,
    rate=False,
)
def _leaks(s: Slice) -> int:
    return int(column(s.sessions, SESSION.leaks).sum())


@metric(
    SESSION.expiry_violations,
    label="expiry",
    counts="expired memories handed out, or refreshes that did not restart the expiry window: "
    "expired_returned + refresh_ignored",
    direction=Direction.ZERO,
    rate=False,
)
def _expiry(s: Slice) -> int:
    return int(column(s.sessions, SESSION.expiry_violations).sum())


@metric(
    "contract_breaches",
    label="contract",
    counts="breaches of the store contract the harness's audit found, every promise together (one per promise and "
    "memory in a trial; a list out of order once per session)",
    direction=Direction.ZERO,
    rate=False,
)
def _contract(s: Slice) -> int:
    return sum(int(column(s.sessions, p.metric).sum()) for p in PROMISES)


def _promise_metric(promise: Promise) -> None:
    def count(s: Slice) -> int:
        return int(column(s.sessions, promise.metric).sum())

    metric(
        promise.metric,
        label=promise.label,
        counts=f"breaches of the promise: {promise.says}",
        direction=Direction.ZERO,
        rate=False,
        summary=False,
    )(count)


for _promise in PROMISES:
    _promise_metric(_promise)


@metric(
    "agent_error_rate",
    label="errors",
    counts="sessions the agent failed (it raised, exited non-zero, timed out, or wrote a result the schema refuses) "
    "/ sessions",
    direction=Direction.LOWER,
)
def _agent_errors(s: Slice) -> Rate | None:
    return _binary(s.sessions, SESSION.agent_error)


@metric(
    "tampering",
    label=SESSION.tampered,
    counts="changes to a trial's store or template behind the harness's back",
    direction=Direction.ZERO,
    rate=False,
    summary=False,
)
def _tampering(s: Slice) -> int:
    return int(column(s.sessions, SESSION.tampered).sum())


@metric(
    "failed_units",
    label="failed",
    counts="units (one trial of one scenario in one arm) that could not run",
    direction=Direction.ZERO,
    rate=False,
    summary=False,
    levels=frozenset({Level.OVERALL}),
)
def _failed(s: Slice) -> int:
    return len(s.failures)


@metric(
    SESSION.injected_chars,
    label="chars",
    counts="characters of memory handed to a session (subject, fact, reason, citations), mean",
    direction=Direction.COST,
    rate=False,
    summary=False,
)
def _chars(s: Slice) -> float | None:
    return round(float(s.sessions[SESSION.injected_chars].mean()), 3) if len(s.sessions) else None


@metric(
    SESSION.verify_reads,
    label="reads",
    counts="blob reads the verifier made per session, mean",
    direction=Direction.COST,
    rate=False,
    summary=False,
)
def _verify_reads(s: Slice) -> float | None:
    return round(float(s.sessions[SESSION.verify_reads].mean()), 3) if len(s.sessions) else None


@metric(
    "sessions",
    label="sessions",
    counts="sessions the arm ran",
    direction=Direction.COST,
    rate=False,
    summary=False,
)
def _sessions(s: Slice) -> int:
    return len(s.sessions)
