"""Hard invariants: no memory reaches someone not entitled, no expired memory is returned, none lost."""

from __future__ import annotations

import pytest

from memstore.harness.pytest_plugin import EvalRun


@pytest.mark.parametrize("invariant", ["leaks", "expiry_violations"])
def test_no_arm_breaks_an_invariant(memstore_run: EvalRun, invariant: str) -> None:
    broken = {
        arm: data["overall"][invariant]
        for arm, data in memstore_run.results["arms"].items()
        if data["overall"][invariant]
    }
    assert broken == {}, f"{invariant} in {memstore_run.folder}: {broken}"
