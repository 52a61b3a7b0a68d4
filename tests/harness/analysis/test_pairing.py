"""Memories are paired across arms by what was seeded, not by the id a store gave them: a store
that numbers its memories its own way is compared memory by memory all the same."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memstore.backends import StoreOptions
from memstore.backends.sqlite import SqliteStore, open_sqlite
from memstore.harness.evaluate import evaluate
from memstore.harness.run.runner.pool import Arm, RunConfig
from memstore.ids import UlidIds
from memstore.store import BACKENDS
from tests.harness.conftest import scenario


def open_renumbered(uri: str, options: StoreOptions) -> SqliteStore:
    """The reference SQLite store, numbering its memories from ids of its own."""
    return open_sqlite("sqlite:" + uri.partition(":")[2], StoreOptions(**{**vars(options), "ids": UlidIds("own")}))


open_renumbered.per_trial = open_sqlite.per_trial  # type: ignore[attr-defined]


@pytest.fixture(autouse=True)
def _registered() -> object:
    with BACKENDS.registration("renumbered", open_renumbered):
        yield


def test_a_store_with_ids_of_its_own_is_compared_memory_by_memory(tmp_path: Path) -> None:
    config = RunConfig(
        scenarios=(scenario("api-version-contradicted"), scenario("adversarial-memories")),
        arms=(Arm("jit-verify", "sqlite:"), Arm("jit-verify", "renumbered:"), Arm("no-memory", "sqlite:")),
    )
    evaluate(config, tmp_path / "run")
    results = json.loads((tmp_path / "run" / "results.json").read_text(encoding="utf-8"))
    overall = results["arms"]["jit-verify/sqlite"]["overall"]
    assert (overall["self_heal_rate"]["n"], overall["detection_recall"]["n"]) == (5, 5)
    paired = {
        c["metric"]: (c["n"], c["diff"])
        for c in results["comparisons"]
        if (c["a"], c["b"]) == ("jit-verify/renumbered", "jit-verify/sqlite") and not c.get("group")
    }
    # every bad memory healed or handed is paired with itself in the other arm: none is lost
    assert paired["self_heal_rate"] == (5, 0.0)
    assert paired["detection_recall"] == (5, 0.0)
    assert paired["false_invalidation_rate"] == (3, 0.0)
