"""The regression gate: fails only on a significant regression against the committed baseline,
compared task by task; and the committed baseline is what a fresh run of the default library writes."""

from __future__ import annotations

import warnings

import pytest

from memstore.harness.analysis.compare import Verdict, compare_runs
from memstore.harness.pytest_plugin import EvalRun


def test_no_significant_regression_against_the_baseline(memstore_run: EvalRun) -> None:
    baseline = memstore_run.baseline
    if baseline is None:
        pytest.skip("no baseline: pass --memstore-baseline RUN (reports/baseline in a checkout)")
    if baseline.results.run["scenario_set_hash"] != memstore_run.results.run["scenario_set_hash"]:
        pytest.skip("the baseline ran another scenario set; regenerate it with `memstore eval --out reports/...`")
    comparisons = compare_runs(
        memstore_run.results,
        baseline.results,
        current_sessions=memstore_run.evaluation.tables["sessions"],
        baseline_sessions=baseline.sessions,
    )
    if not comparisons:
        pytest.skip("no arm of this run is in the baseline (another store?)")
    underpowered = [
        f"{c.a} {c.metric}" + (f" (detectable: {c.mde:.3f})" if c.mde is not None and c.mde < 1 else "")
        for c in comparisons
        if c.verdict is Verdict.UNDERPOWERED
    ]
    if underpowered:
        warnings.warn("underpowered against the baseline: " + "; ".join(underpowered), stacklevel=1)
    regressed = [
        f"{c.a} {c.metric}: {c.a_value:.3f} vs {c.b_value:.3f} (p = {c.p_adjusted:.2g})" for c in comparisons if c.worse
    ]
    assert regressed == []


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
