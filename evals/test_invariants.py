"""Hard invariants: every promise of the store contract holds (no leak, no expired memory handed out,
nothing lost, forgotten, altered or handed out after it was retired or superseded)."""

from __future__ import annotations

from memstore.harness.analysis.contract import PROMISES
from memstore.harness.pytest_plugin import EvalRun
from memstore.harness.report import invariant_gates


def test_no_arm_breaks_the_store_contract(memstore_run: EvalRun) -> None:
    found = invariant_gates(memstore_run.results)
    assert len(found) == len(PROMISES) * len(memstore_run.results.arms)
    failed = [f"{g.name}: {g.message}" for g in found if not g.passed]
    assert failed == [], f"in {memstore_run.folder}"
