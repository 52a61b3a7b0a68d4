"""Comparisons with a baseline run: paired task by task when both runs kept their sessions."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pandas as pd

from memstore.harness.analysis.compare import UNPAIRED, ComparisonVerdict, compare_runs
from memstore.harness.analysis.run_results import ArmResult, Rate, Role, RunResults
from memstore.harness.records import RunMeta
from memstore.harness.report import gates
from memstore.harness.report.effects import FEWEST_UNITS
from memstore.harness.runfolder.results import load_baseline

ARM = "jit-verify/sqlite"


def _run(successes: list[bool]) -> tuple[RunResults, pd.DataFrame]:
    """A run of one arm over len(successes) CLI tasks, one per scenario, with these outcomes."""
    sessions = pd.DataFrame(
        {
            "arm": ARM,
            "agent": "jit-verify",
            "store": "sqlite",
            "role": "treatment",
            "scenario": [f"s{i:03d}" for i in range(len(successes))],
            "trial": 0,
            "task": "ask",
            "surface": "cli",
            "task_success": successes,
            "answer_correct": successes,
        }
    )
    rate = Rate(sum(successes), len(successes))
    arm = ArmResult("jit-verify", "sqlite", Role.TREATMENT, {"task_success_rate": rate, "answer_accuracy": rate})
    return RunResults(RunMeta(seed=0, scenario_set_hash="x", tasks=len(successes)), {ARM: arm}), sessions


def _flipped(base: list[bool], how_many: int) -> list[bool]:
    """``base`` with its first ``how_many`` successes turned into failures, every other task as it was."""
    found, left = [], how_many
    for ok in base:
        found.append(ok and not left > 0)
        left -= ok and left > 0
    return found


def test_a_baseline_that_differs_on_a_few_tasks_is_a_regression_only_the_paired_test_sees() -> None:
    base = [i % 2 == 0 for i in range(200)]  # 100 of 200 tasks right
    then, then_sessions = _run(base)
    now, now_sessions = _run(_flipped(base, 10))  # 10 tasks got worse, none better: 90 of 200
    unpaired = {c.metric: c for c in compare_runs(now, then)}
    paired = {
        c.metric: c for c in compare_runs(now, then, current_sessions=now_sessions, baseline_sessions=then_sessions)
    }
    assert unpaired["task_success_rate"].method == UNPAIRED
    assert unpaired["task_success_rate"].verdict is not ComparisonVerdict.REGRESSED  # 0.50 vs 0.45: z-test p ~ 0.3
    assert unpaired["task_success_rate"].p_value > 0.2
    assert paired["task_success_rate"].method == "mcnemar-exact"
    assert paired["task_success_rate"].n == 200
    assert round(paired["task_success_rate"].p_value, 6) == round(2 / 2**10, 6)  # McNemar exact, 10 vs 0
    assert paired["task_success_rate"].verdict is ComparisonVerdict.REGRESSED  # Holm over two metrics: 0.0039 < 0.05
    failed = [g.name for g in gates(now, list(paired.values())) if g.failed]
    assert failed == [f"{ARM}: task_success_rate not regressed", f"{ARM}: answer_accuracy not regressed"]


def test_a_change_in_both_directions_is_not_a_regression() -> None:
    base = [i % 2 == 0 for i in range(200)]
    then, then_sessions = _run(base)
    swapped = [not ok if i < 20 else ok for i, ok in enumerate(base)]  # 10 better, 10 worse
    now, now_sessions = _run(swapped)
    paired = compare_runs(now, then, current_sessions=now_sessions, baseline_sessions=then_sessions)
    assert {c.verdict for c in paired} <= {ComparisonVerdict.NO_CHANGE, ComparisonVerdict.UNDERPOWERED}
    assert not any(g.failed for g in gates(now, paired))


def test_a_baseline_folder_with_its_sessions_is_paired_and_a_results_file_alone_is_not(tmp_path: Path) -> None:
    import json

    results, sessions = _run([True, False] * 10)
    data = results.to_json()
    data["run"] |= {"trials": 1, "tasks": 20, "memstore_version": "0"}
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "results.json").write_text(json.dumps(data))
    sessions.to_csv(tmp_path / "run" / "sessions.csv.gz", index=False)
    (tmp_path / "bare").mkdir()
    (tmp_path / "bare" / "results.json").write_text(json.dumps(data))
    assert load_baseline(tmp_path / "run").paired
    assert load_baseline(tmp_path / "run" / "results.json").paired  # its folder holds the sessions
    assert not load_baseline(tmp_path / "bare").paired
    assert load_baseline(tmp_path / "run").sessions is not None
    assert len(load_baseline(tmp_path / "run").sessions) == 20  # type: ignore[arg-type]


def _gates_of(base: list[bool], now_outcomes: list[bool]) -> dict[str, tuple[str, str]]:
    then, then_sessions = _run(base)
    now, now_sessions = _run(now_outcomes)
    paired = compare_runs(now, then, current_sessions=now_sessions, baseline_sessions=then_sessions)
    return {g.key: (g.outcome.value, g.message) for g in gates(now, paired) if g.key.startswith("baseline[")}


def test_a_rate_of_nothing_in_the_baseline_cannot_regress_and_passes() -> None:
    found = _gates_of([False] * 20, [False] * 20)  # 0 of 20 then and now: nothing to lose
    assert found["baseline[task_success_rate]"][0] == "passed"
    assert "0.000 in the baseline leaves no room for a regression of 5%" in found["baseline[task_success_rate]"][1]


def test_a_rare_metric_of_a_large_run_is_gated_only_when_significantly_worse() -> None:
    assert FEWEST_UNITS == 73  # 0 worse of 73 reaches under 5 points (Wilson), of 72 it does not
    then, then_sessions = _run([True] * 200)
    now, now_sessions = _run([True] * 200)
    paired = compare_runs(now, then, current_sessions=now_sessions, baseline_sessions=then_sessions)
    # a rate over 6 rare units of the 200 tasks, 6 of 6 then and now (Newcombe: [-0.39, +0.39])
    rare = [replace(c, n=6, low=-0.39, high=0.39) for c in paired if c.metric == "answer_accuracy"]
    assert [g.outcome.value for g in gates(now, rare) if g.key.startswith("baseline[")] == []
    worse = [replace(c, n=6, verdict=ComparisonVerdict.REGRESSED, a_value=0.0, b_value=1.0) for c in rare]
    assert [g.outcome.value for g in gates(now, worse) if g.key.startswith("baseline[")] == ["failed"]


def test_a_small_run_keeps_its_baseline_gates_inconclusive_with_the_tasks_that_would_decide() -> None:
    small = _gates_of([True] * 6, [True] * 6)  # 6 of 6 then and now, on 6 tasks
    assert small["baseline[task_success_rate]"][0] == "inconclusive"
    same = _gates_of([True] * 73, [True] * 73)
    assert same["baseline[task_success_rate]"][0] == "passed"  # identical on 73 tasks: decided
    worse = _gates_of([True] * 10, [False] * 10)  # every task of 10 lost: McNemar p = 0.002
    assert worse["baseline[task_success_rate]"][0] == "failed"


def test_an_undecided_regression_on_enough_tasks_is_inconclusive_with_the_tasks_it_would_take() -> None:
    base = [i % 2 == 0 for i in range(80)]
    found = _gates_of(base, _flipped(base, 3))  # 3 worse of 80: not significant, not ruled out
    outcome, message = found["baseline[task_success_rate]"]
    assert outcome == "inconclusive"
    assert "a regression of 5% or more is not ruled out" in message
