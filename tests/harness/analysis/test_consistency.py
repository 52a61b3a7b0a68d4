"""pass^k and the flip rate: over tasks run in K >= 2 trials, the share that succeeded in every
trial, and the share whose outcome differed between trials; None with one trial."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd

from memstore.harness.analysis.metric_registry import Direction, Level, registered_metrics
from memstore.harness.analysis.metric_registry import Test as Compared  # not a test class
from memstore.harness.analysis.metrics import compute
from memstore.harness.analysis.run_results import ArmResult, Rate
from memstore.harness.grading.trial import TrialGrading
from memstore.harness.records import SessionRecord, columns
from memstore.harness.run.runner.declarations import declared
from memstore.harness.run.runner.pool import Arm, RunConfig, run
from memstore.harness.runfolder.results import write_run
from tests.harness.conftest import scenario

ARM = "a/memory"
NO_EVENTS = pd.DataFrame(columns=["arm", "scenario", "trial", "task", "kind", "memory_id", "seed", "truth", "origin"])
NO_TRIALS = pd.DataFrame(columns=["arm", "scenario", "trial", "healed", "bad_initial"])


def _session(scenario: str, task: str, trial: int, ok: object) -> dict[str, object]:
    row: dict[str, object] = dict.fromkeys(columns(SessionRecord))
    row.update(
        arm=ARM,
        agent="a",
        store="memory",
        role="treatment",
        scenario=scenario,
        trial=trial,
        task=task,
        surface="cli",
        user="u",
        handed=0,
        injected_chars=0,
        verify_reads=0,
        leaks=0,
        expiry_violations=0,
        moved_given=0,
        moved_reanchored=0,
        stale_use=False,
        origins="",
        misled_origins="",
        answer_correct=ok,
        task_success=ok,
    )
    return row


def _table(outcomes: dict[tuple[str, str], list[object]]) -> pd.DataFrame:
    """One session per (scenario, task) and trial: ``outcomes[(scenario, task)][trial]``."""
    return pd.DataFrame([_session(s, t, trial, ok) for (s, t), oks in outcomes.items() for trial, ok in enumerate(oks)])


def _arm(sessions: pd.DataFrame) -> ArmResult:
    tables = {"sessions": sessions, "events": NO_EVENTS, "trials": NO_TRIALS, "findings": pd.DataFrame()}
    return compute(tables)[ARM]


def test_three_trials_by_hand() -> None:
    """A passes 3 of 3, B 2 of 3, C 0 of 3: only A passes every trial, only B flips."""
    arm = _arm(_table({("s", "A"): [True] * 3, ("s", "B"): [True, False, True], ("s", "C"): [False] * 3}))
    assert arm.overall["pass_hat_k"] == Rate(1, 3)
    assert arm.overall["flip_rate"] == Rate(1, 3)
    assert arm.overall["task_success_rate"] == Rate(5, 9)  # per session: B's two passes count there
    assert arm.per_scenario["s"]["pass_hat_k"] == Rate(1, 3)
    assert arm.per_scenario["s"]["flip_rate"] == Rate(1, 3)


def test_a_task_is_a_scenario_and_task_pair() -> None:
    """The same task id in two scenarios is two tasks; each scenario counts its own."""
    arm = _arm(_table({("s1", "t"): [True, True], ("s2", "t"): [False, True], ("s2", "u"): [False, False]}))
    assert arm.overall["pass_hat_k"] == Rate(1, 3)
    assert arm.overall["flip_rate"] == Rate(1, 3)
    assert arm.per_scenario["s1"]["pass_hat_k"] == Rate(1, 1)
    assert arm.per_scenario["s1"]["flip_rate"] == Rate(0, 1)
    assert arm.per_scenario["s2"]["pass_hat_k"] == Rate(0, 2)
    assert arm.per_scenario["s2"]["flip_rate"] == Rate(1, 2)


def test_every_task_run_once_gives_none() -> None:
    arm = _arm(_table({("s", "A"): [True], ("s", "B"): [False], ("t", "A"): [True]}))
    assert arm.overall["task_success_rate"] == Rate(2, 3)
    assert arm.overall["pass_hat_k"] is None
    assert arm.overall["flip_rate"] is None
    assert all(found["pass_hat_k"] is None for found in arm.per_scenario.values())


def test_a_missing_task_success_is_not_a_trial() -> None:
    """A trial without a task_success (an infrastructure failure) is left out, as task_success_rate
    leaves it out: a task counts over the trials that have one, and only with two or more."""
    nan = math.nan
    arm = _arm(
        _table(
            {
                ("s", "A"): [True, nan, True],  # passes both of its counted trials
                ("s", "B"): [nan, False, True],  # flips over its two
                ("s", "C"): [True, nan, nan],  # one counted trial: not a task run K times
                ("s", "D"): [None, None, None],  # none
            }
        )
    )
    assert arm.overall["task_success_rate"] == Rate(4, 5)
    assert arm.overall["pass_hat_k"] == Rate(1, 2)
    assert arm.overall["flip_rate"] == Rate(1, 2)


def test_no_task_with_two_counted_trials_gives_none() -> None:
    arm = _arm(_table({("s", "A"): [True, math.nan], ("s", "B"): [math.nan, False]}))
    assert arm.overall["pass_hat_k"] is None
    assert arm.overall["flip_rate"] is None


def test_both_are_declared_once_without_a_within_run_test() -> None:
    found = {m.name: m for m in registered_metrics(level=Level.OVERALL)}
    pass_k, flips = found["pass_hat_k"], found["flip_rate"]
    assert (pass_k.direction, flips.direction) == (Direction.HIGHER, Direction.LOWER)
    assert pass_k.test is Compared.NONE
    assert flips.test is Compared.NONE
    assert (pass_k.rate, flips.rate, pass_k.summary, flips.summary) == (True, True, True, True)
    assert pass_k.levels == flips.levels == {Level.OVERALL, Level.SCENARIO}
    assert pass_k.label == "pass^k"


def test_a_run_with_two_trials_reports_both_per_task(tmp_path: Path) -> None:
    """End to end: two trials of one scenario with the jit-verify stub; n is the scenario's tasks."""
    chosen = scenario("api-version-contradicted")
    config = RunConfig(scenarios=(chosen,), arms=(Arm("jit-verify", "memory://"),), trials=2)
    output = run(config, grading=TrialGrading)
    results, tables = write_run(tmp_path, config, output, arms=declared(config), seconds=0.0)
    (arm,) = results.arms.values()
    assert len(tables["sessions"]) == 2 * len(chosen.tasks)
    pass_k, flips = arm.rate("pass_hat_k"), arm.rate("flip_rate")
    assert pass_k is not None
    assert flips is not None
    assert pass_k.n == flips.n == len(chosen.tasks)
    assert pass_k.k + flips.k <= pass_k.n
    written = json.loads((tmp_path / "results.json").read_text())
    (overall,) = (a["overall"] for a in written["arms"].values())
    assert overall["pass_hat_k"]["n"] == len(chosen.tasks)
