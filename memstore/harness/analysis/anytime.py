"""A sequential run's statistics: the order its tasks ran in, and anytime-valid intervals on it.

A run with ``--sequential`` takes its scenarios in a seeded random order (`sequential_order`) and
looks at its gates after each batch. Looking early and often is safe only with intervals that
hold at every look at once: `anytime_intervals` gives, for each arm against its control on each
outcome of a task, the betting confidence sequence of `memstore.harness.analysis.sequential`
over the pairs in the order they ran. The run keeps them in its metadata (``run["sequential"]``),
so a report rendered again decides its gates the same way (`memstore.harness.report.effects`).
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pandas as pd

from memstore.harness.analysis.compare import KEY, OUTCOMES
from memstore.harness.analysis.metric_registry import PairedBy, Test, registered_metrics
from memstore.harness.analysis.run_results import Role
from memstore.harness.analysis.sequential import paired_difference_cs

__all__ = ["anytime_intervals", "sequential_order"]


def sequential_order(names: Iterable[str], seed: int) -> list[str]:
    """The scenarios ``names`` in the order a sequential run takes them: seeded by the run's
    seed, the same from any checkout or machine."""
    found = sorted(names)
    random.Random(f"memstore-sequential:{seed}").shuffle(found)
    return found


def anytime_intervals(
    sessions: pd.DataFrame, order: Sequence[str], roles: Mapping[str, Role]
) -> dict[str, dict[str, list[Any]]]:
    """``{arm: {metric: [low, high, pairs]}}``: each arm against its control on each binary
    outcome of a task, a 95% confidence sequence on the paired difference (this arm minus the
    control) over the pairs in the order they ran (scenario by ``order``, then trial and task)."""
    controls = [arm for arm, role in roles.items() if role is Role.CONTROL]
    if not controls or sessions.empty:
        return {}
    rank = {name: i for i, name in enumerate(order)}
    mcnemar = registered_metrics(test=Test.MCNEMAR)
    chosen = [m for m in mcnemar if m.name in OUTCOMES and m.paired_by is PairedBy.SESSIONS]
    found: dict[str, dict[str, list[Any]]] = {}
    for arm, role in sorted(roles.items()):
        if role is Role.CONTROL:
            continue
        mine: dict[str, list[Any]] = {}
        for metric in chosen:
            pairs = _pairs(sessions, metric.column or metric.name, metric.surface, arm, controls[0], rank)
            if pairs is not None:
                low, high = paired_difference_cs(pairs["a"].tolist(), pairs["b"].tolist())
                mine[metric.name] = [round(low, 6), round(high, 6), len(pairs)]
        if mine:
            found[arm] = mine
    return found


def _pairs(
    sessions: pd.DataFrame, column: str, surface: object, arm: str, control: str, rank: Mapping[str, int]
) -> pd.DataFrame | None:
    """``arm``'s and the control's outcome on ``column`` per task, in run order (None: no pair)."""
    if column not in sessions:
        return None
    rows = sessions if surface is None else sessions[sessions.surface == surface]

    def of(name: str) -> pd.Series:
        return rows[rows.arm == name].set_index(KEY)[column]

    both = pd.concat([of(arm).rename("a"), of(control).rename("b")], axis=1, join="inner").dropna()
    if both.empty:
        return None
    both = both.astype(bool).astype(int).reset_index()
    both["rank"] = both.scenario.map(lambda s: rank.get(str(s), len(rank)))
    return both.sort_values(["rank", "trial", "task"], kind="stable")
