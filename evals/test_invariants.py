"""Hard invariants: no memory reaches someone not entitled, no expired memory is returned, none lost."""

from __future__ import annotations

from memstore.harness.pytest_plugin import EvalRun
from memstore.harness.report import invariant_gates


def test_no_arm_leaks_or_breaks_expiry(memstore_run: EvalRun) -> None:
    found = invariant_gates(memstore_run.results)
    assert len(found) == 2 * len(memstore_run.results.arms)
    failed = [f"{g.name}: {g.message}" for g in found if not g.passed]
    assert failed == [], f"in {memstore_run.folder}"
