"""Memory helps when it is verified, and hurts when it is trusted: paired, on the generated population."""

from __future__ import annotations

from typing import Any

from memstore.harness.pytest_plugin import EvalRun


def _comparison(run: EvalRun, metric: str, a: str, b: str) -> dict[str, Any]:
    name_a, name_b = run.arm(a), run.arm(b)
    found = [c for c in run.results["comparisons"] if c["metric"] == metric and {c["a"], c["b"]} == {name_a, name_b}]
    assert found, f"no comparison of {metric} between {name_a} and {name_b}"
    return found[0]


def test_jit_verify_beats_no_memory_on_merge_rate(memstore_run: EvalRun) -> None:
    c = _comparison(memstore_run, "merge_rate", "jit-verify", "no-memory")
    assert c["verdict"] == "improved"
    assert c["p_adjusted"] < 0.01
    assert c["a"] == memstore_run.arm("jit-verify")


def test_jit_verify_beats_trusting_on_stale_use(memstore_run: EvalRun) -> None:
    c = _comparison(memstore_run, "stale_use_rate", "jit-verify", "trusting")
    assert c["verdict"] == "improved"
    assert c["p_adjusted"] < 0.01
    assert c["a_value"] < c["b_value"] if c["a"] == memstore_run.arm("jit-verify") else c["a_value"] > c["b_value"]
