"""What a run was, typed: `RunMeta` reads ``results.json``'s ``run`` and writes the same document."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memstore.harness.records import ArmMeta, Role, RunMeta, upgrade

REPORTS = Path(__file__).resolve().parents[3] / "reports"
FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


@pytest.mark.parametrize("run", ["sample-baseline", "baseline", "determinism-sample"])
def test_a_committed_runs_metadata_is_written_back_as_it_was(run: Path) -> None:
    document = json.loads((REPORTS / run / "results.json").read_text())["run"]
    meta = RunMeta.from_json(document)
    assert meta.to_json() == document
    assert meta.arms[0].role in set(Role)


def test_an_older_formats_metadata_reads_through_upgrade() -> None:
    document = upgrade(json.loads((FIXTURES / "format-1" / "results.json").read_text()))["run"]
    meta = RunMeta.from_json(document)
    assert {a.agent: a.role for a in meta.arms}["no-memory"] is Role.CONTROL
    assert meta.extra == {}  # format 1's agent_config became each arm's params
    assert meta.sample is None
    assert "sample" not in meta.to_json()  # an optional key the run lacked stays absent


def test_a_key_it_does_not_know_is_kept() -> None:
    meta = RunMeta.from_json({"seed": 3, "git_commit": "0123456789abcdef", "arms": [{"name": "a", "careful": True}]})
    assert meta.git_commit == "0123456789abcdef"
    assert meta.to_json()["git_commit"] == "0123456789abcdef"
    assert meta.arms[0].declares("careful")
    assert not meta.arms[0].declares("verifies")
    assert meta.arms[0] == ArmMeta("a", extra={"careful": True})
