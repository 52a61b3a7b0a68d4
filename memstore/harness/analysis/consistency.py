"""Whether an arm does the same task the same way every time: over a run with ``--trials K``
(K >= 2), each task's ``task_success`` in each of its trials.

A task is a (scenario, task) pair within an arm. Only sessions with a ``task_success`` count (a
missing value is a session where it is not defined, as in `_binary`: one that failed for an
infrastructure reason), so a task counts when two or more of its trials have one. With one trial
(the default) every task ran once and both metrics are None (null in results.json): no report shows them.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from memstore.harness.analysis.metric_registry import Direction, Slice, metric
from memstore.harness.analysis.metrics import rate
from memstore.harness.analysis.run_results import Rate
from memstore.harness.records import SESSION

__all__: list[str] = []


def _per_task(sessions: pd.DataFrame) -> tuple[np.ndarray, np.ndarray] | None:
    """For each task with a ``task_success`` in two trials or more: how many of its trials have
    one, and how many of those succeeded; None when there is no such task. (In numpy: this runs
    for every scenario of every arm, and a pandas groupby costs milliseconds a time.)"""
    if len(sessions) < 2 or "trial" not in sessions:
        return None
    trials = sessions["trial"].to_numpy()
    if (trials == trials[0]).all():  # one trial: every task ran once (the default run, cheaply)
        return None
    if SESSION.task_success in sessions:
        values = sessions[SESSION.task_success].to_numpy()
        present = ~pd.isna(values)
        ok = values[present].astype(bool)
    else:  # written before the metric existed: every session counts as False, as `_binary` does
        present, ok = np.ones(len(sessions), dtype=bool), np.zeros(len(sessions), dtype=bool)
    scenario, _ = pd.factorize(sessions["scenario"].to_numpy()[present])
    task, tasks = pd.factorize(sessions["task"].to_numpy()[present])
    key = scenario.astype(np.int64) * max(len(tasks), 1) + task  # one code per (scenario, task)
    runs = np.bincount(key)
    passed = np.bincount(key, weights=ok, minlength=len(runs)).astype(int)
    repeated = runs >= 2
    if not repeated.any():
        return None
    return runs[repeated], passed[repeated]


@metric(
    "pass_hat_k",
    label="pass^k",
    counts="tasks that succeeded in every one of their K trials / tasks run K times (K >= 2: `--trials`)",
)
def _pass_hat_k(s: Slice) -> Rate | None:
    found = _per_task(s.sessions)
    if found is None:
        return None
    runs, passed = found
    return rate(int((passed == runs).sum()), len(runs))


@metric(
    "flip_rate",
    label="flips",
    counts="tasks run K times (K >= 2) that succeeded in some trials and failed in others / tasks run K times",
    direction=Direction.LOWER,
)
def _flip_rate(s: Slice) -> Rate | None:
    found = _per_task(s.sessions)
    if found is None:
        return None
    runs, passed = found
    return rate(int(((passed > 0) & (passed < runs)).sum()), len(runs))
