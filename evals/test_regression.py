"""The committed baseline is what a fresh run of the default library writes, byte for byte (the
regression gates against it, one per arm, are among the plugin's: ``memstore::ARM::baseline``)."""

from __future__ import annotations

import pytest

from memstore.harness.pytest_plugin import EvalRun


def test_the_committed_baseline_is_what_a_fresh_run_writes(memstore_run: EvalRun) -> None:
    baseline = memstore_run.baseline
    if baseline is None or not baseline.source.is_dir():
        pytest.skip("no baseline run folder: pass --memstore-baseline RUN (reports/baseline in a checkout)")
    if baseline.results.run["scenario_set_hash"] != memstore_run.results.run["scenario_set_hash"]:
        pytest.skip("the baseline ran another scenario set")
    for name in ("results.json", "sessions.csv.gz"):
        fresh = (memstore_run.folder / name).read_bytes()
        assert fresh == (baseline.source / name).read_bytes(), (
            f"{name} differs from {baseline.source}: regenerate it (reports/README.md)"
        )
