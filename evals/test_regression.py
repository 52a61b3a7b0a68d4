"""The sample of evals/conftest.py: the committed sample baseline is what a fresh run writes, byte
for byte (the regression gates against it, one per arm, are among the plugin's:
``memstore::ARM::baseline``), and the sample decides every other gate, so that each gate test
passes or fails rather than skipping. The whole library's run is held to reports/baseline the
same way by ``.ci/run`` (evals/check_baseline.py)."""

from __future__ import annotations

import pytest

from evals.check_baseline import REGENERATE, check
from memstore.harness.pytest_plugin import EvalRun

SAMPLE = "reports/sample-baseline"


def test_the_committed_sample_baseline_is_what_a_fresh_run_writes(memstore_run: EvalRun) -> None:
    baseline = memstore_run.baseline
    if baseline is None or not baseline.source.is_dir():
        pytest.skip("no baseline run folder: pass --memstore-baseline RUN (reports/sample-baseline in a checkout)")
    then, now = baseline.results.run, memstore_run.results.run
    same_run = ("scenario_set_hash", "stores", "seed", "trials")
    if any(getattr(then, key) != getattr(now, key) for key in same_run) or set(baseline.results.arms) != set(
        memstore_run.results.arms
    ):
        pytest.skip("the baseline ran other scenarios, stores, agents, seed or trials")
    differences = check(memstore_run.folder, baseline.source)
    assert differences == [], f"if the change is meant, regenerate it (reports/README.md): {REGENERATE[SAMPLE]}"


def test_the_sample_decides_every_gate_but_the_regression_gates(memstore_run: EvalRun) -> None:
    gates = [g for g in memstore_run.gates if not g.key.startswith("baseline[")]
    assert len(gates) == 82  # integrity, contract, effects and verifier gates of the four arms
    assert [f"{g.name}: {g.outcome.value}: {g.message}" for g in gates if not g.decided] == []
