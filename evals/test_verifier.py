"""The verifier gates, on the hand-written scenario library."""

from __future__ import annotations

import pytest

from memstore.harness.metrics import compute
from memstore.harness.pytest_plugin import EvalRun


@pytest.fixture(scope="module")
def library(memstore_run: EvalRun) -> dict[str, dict[str, object]]:
    tables = memstore_run.tables
    hand_written = {s.name for s in memstore_run.config.scenarios if s.files is None}
    keep = {
        name: frame[frame.scenario.isin(hand_written)] if "scenario" in frame else frame
        for name, frame in tables.items()
    }
    return compute(keep)[memstore_run.arm("jit-verify")]["overall"]  # type: ignore[return-value]


def test_detection_recall(library: dict[str, dict[str, float]]) -> None:
    assert library["detection_recall"]["value"] >= 0.95


def test_false_invalidation_rate(library: dict[str, dict[str, float]]) -> None:
    assert library["false_invalidation_rate"]["value"] <= 0.02


def test_reanchor_accuracy(library: dict[str, dict[str, float]]) -> None:
    assert library["reanchor_accuracy"]["value"] >= 0.9
