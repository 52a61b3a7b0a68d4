"""Memory's harm, measured: bad memory hurts an agent that trusts it, and verification protects.

Both gates read the run's paired comparisons with the control arm (McNemar's exact test,
Holm-adjusted). Each can fail: tests/harness/test_reports.py feeds them runs where they must.
"""

from __future__ import annotations

import pytest

from memstore.harness.pytest_plugin import EvalRun
from memstore.harness.report import harm_seen_gate, no_harm_gates


def test_jit_verify_is_not_significantly_worse_than_no_memory(memstore_run: EvalRun) -> None:
    found = no_harm_gates(memstore_run.results, [memstore_run.arm("jit-verify")])
    failed = [f"{g.name}: {g.message}" for g in found if not g.passed]
    assert failed == []


@pytest.mark.parametrize("agent", ["trusting", "blind-trusting"])
def test_bad_memory_measurably_harms_each_trusting_agent(memstore_run: EvalRun, agent: str) -> None:
    """The harness sees harm: without this, a clean bill for another agent or store means
    nothing. Both harm probes: the one that reads the cited lines, and the blind one."""
    gate = harm_seen_gate(memstore_run.results, [memstore_run.arm(agent)])
    assert gate.passed, gate.message
