"""What the charts draw, computed with the rest of the results: per arm and memory origin, what
became of the memories handed (`confusion`); per arm, the share of the initial pool's bad
memories healed after each session (`healing_curves`)."""

from __future__ import annotations

import pandas as pd

from memstore.harness.analysis.pairs import memory_pairs
from memstore.harness.records import SESSION, TRIAL

__all__ = ["confusion", "healing_curves"]


def confusion(tables: dict[str, pd.DataFrame]) -> dict[str, dict[str, dict[str, int]]]:
    """Per arm and memory origin: memories handed that were refused, that misled an action, or neither."""
    pairs = memory_pairs(tables["events"])
    result: dict[str, dict[str, dict[str, int]]] = {}
    for (arm, origin), rows in pairs.groupby(["arm", "origin"]):
        result.setdefault(str(arm), {})[str(origin)] = {
            "refused": int(rows.refused.sum()),
            "misled": int((rows.misled & ~rows.refused).sum()),
            "other": int((~rows.misled & ~rows.refused).sum()),
        }
    return result


def healing_curves(tables: dict[str, pd.DataFrame]) -> dict[str, list[float]]:
    """Per arm: the share of the initial pool's bad memories healed by the end of each session
    (the harness's own count after every session; the last point is the self-heal rate)."""
    sessions, trials = tables["sessions"], tables["trials"]
    if sessions.empty or SESSION.healed not in sessions or trials.empty:
        return {}
    curves = {}
    depth = int(sessions[SESSION.index].max()) + 1
    for arm in sorted(sessions[SESSION.arm].unique()):
        total = int(trials[trials[TRIAL.arm] == arm][TRIAL.bad_initial].sum())
        if not total:
            continue
        mine = sessions[sessions[SESSION.arm] == arm].pivot_table(
            index=[SESSION.scenario, SESSION.trial], columns=SESSION.index, values=SESSION.healed, aggfunc="max"
        )
        mine = mine.reindex(columns=range(depth)).ffill(axis=1).fillna(0)
        curves[arm] = [round(float(mine[i].sum()) / total, 4) for i in range(depth)]
    return curves
