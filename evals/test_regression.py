"""The regression gate: fails only on a significant regression against the committed baseline."""

from __future__ import annotations

import warnings

import pytest

from memstore.harness.analysis.compare import compare_runs
from memstore.harness.analysis.results import load_results
from memstore.harness.pytest_plugin import EvalRun


def test_no_significant_regression_against_the_baseline(memstore_run: EvalRun) -> None:
    if memstore_run.baseline is None:
        pytest.skip("no baseline: pass --memstore-baseline RESULTS (reports/baseline.json in a checkout)")
    baseline = load_results(memstore_run.baseline)
    if baseline["run"]["scenario_set_hash"] != memstore_run.results["run"]["scenario_set_hash"]:
        pytest.skip("the baseline ran another scenario set; regenerate it with `memstore eval --out reports/...`")
    comparisons = compare_runs(memstore_run.results, baseline)
    if not comparisons:
        pytest.skip("no arm of this run is in the baseline (another store?)")
    underpowered = [
        f"{c.a} {c.metric} (detectable: {c.mde:.3f})"
        for c in comparisons
        if c.verdict == "underpowered" and c.mde is not None
    ]
    if underpowered:
        warnings.warn("underpowered against the baseline: " + "; ".join(underpowered), stacklevel=1)
    regressed = [
        f"{c.a} {c.metric}: {c.a_value:.3f} vs {c.b_value:.3f} (p = {c.p_adjusted:.2g})"
        for c in comparisons
        if c.verdict == "regressed"
    ]
    assert regressed == []
