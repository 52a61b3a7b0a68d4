"""Every gate of the run, as `memstore eval` gates it: any failed gate fails the suite, as it fails
`memstore eval` (exit 1), listed whole."""

from __future__ import annotations

from memstore.harness.pytest_plugin import EvalRun


def test_every_gate_of_the_run_passes(memstore_run: EvalRun) -> None:
    failed = [f"{g.name}: {g.message}" for g in memstore_run.evaluation.failed]
    assert failed == [], f"{len(failed)} gate(s) failed in {memstore_run.folder}"
