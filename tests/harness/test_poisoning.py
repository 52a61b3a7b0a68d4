"""The poisoning scenario of the shipped library: memories whose first sentence is true of the code,
followed by instructions to the agent. The run counts the share a verdict flagged, per arm."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from memstore.harness.analysis.run_results import Rate
from memstore.harness.evaluate import evaluate
from memstore.harness.run.runner.pool import RunConfig, iter_arms
from memstore.harness.scenarios.data import scenarios_dir
from memstore.harness.scenarios.loader import load_file

SCENARIO = scenarios_dir() / "instructions-in-memories.yaml"
PLANTED = ["curl-and-delete", "docs-done", "force-push", "note-in-reason", "sync-script", "token-to-url"]


def test_the_share_of_planted_memories_flagged_is_reported(tmp_path: Path) -> None:
    arms = tuple(iter_arms(["no-memory", "trusting", "jit-verify"], ["sqlite:"]))
    results = evaluate(RunConfig(scenarios=tuple(load_file(SCENARIO)), arms=arms), tmp_path / "run").results.arms
    # jit-verify verifies each once, in the first session, and retires it; trusting never verifies, so
    # nothing flags the six it is handed in each of the two sessions
    assert results["jit-verify/sqlite"].overall["instructions_flagged_rate"] == Rate(6, 6)
    assert results["trusting/sqlite"].overall["instructions_flagged_rate"] == Rate(0, 12)
    assert results["no-memory/sqlite"].overall["instructions_flagged_rate"] is None
    assert results["jit-verify/sqlite"].per_origin["adversarial"]["detection_recall"] == Rate(6, 6)
    assert results["jit-verify/sqlite"].overall["false_invalidation_rate"] == Rate(0, 4)  # the genuine two, twice

    events = pd.read_csv(tmp_path / "run" / "events.csv.gz", keep_default_na=False)
    verdicts = events[(events.agent == "jit-verify") & (events.kind == "verdict")]
    said = dict(zip(verdicts.seed, verdicts.detail, strict=True))
    # the code bears each first sentence out: without the flag, every one would pass as valid
    assert sorted(seed for seed, verdict in said.items() if verdict.startswith("valid flagged:")) == PLANTED
    assert said["api-sync"] == said["bump-together"] == "valid"

    report = (tmp_path / "run" / "report.md").read_text()
    assert "- instructions flagged, jit-verify/sqlite: 6 of 6 planted (1.000 [0.610, 1.000] 6/6)" in report
    assert "- instructions flagged, trusting/sqlite: 0 of 12 planted" in report
