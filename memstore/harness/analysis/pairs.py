"""The tables metrics are computed from: (session, memory) pairs, and each arm's sessions paired
with the control arm's on the same task."""

from __future__ import annotations

import pandas as pd

from memstore.harness.analysis.run_results import Role
from memstore.harness.records import EVENT, SESSION, EventKind
from memstore.verify import FLAGGED

__all__ = [
    "SCENARIO_KINDS",
    "SESSION_KEY",
    "STRATA",
    "column",
    "control_arm",
    "memory_pairs",
    "paired_with_control",
    "task_groups",
]

SESSION_KEY = ["arm", "scenario", "trial", "task"]
PAIR_KEY = ["scenario", "trial", "task"]
SCENARIO_KINDS = ("hand-written", "mined", "generated")  # `Scenario.kind`: each is evidence of another sort
STRATA = ("discoverable", "not discoverable")  # `Task.stratum`: whether the repository offers what a task needs


def task_groups(sessions: pd.DataFrame) -> list[tuple[str, pd.Series]]:
    """The groups results are also reported for, each with its mask over ``sessions``: each kind
    of scenario, then each stratum of discoverability, as far as the sessions hold them (tables
    written before these columns existed have none)."""
    found = []
    for column, values in ((SESSION.scenario_kind, SCENARIO_KINDS), (SESSION.stratum, STRATA)):
        if column not in sessions:
            continue
        for value in values:
            mask = sessions[column].fillna("").astype(str) == value
            if mask.any():
                found.append((value, mask))
    return found


def memory_pairs(events: pd.DataFrame) -> pd.DataFrame:
    """One row per (session, memory handed): the seeded memory it is (``seed``), its origin and
    truth, whether the agent refused it (refuse or retire), whether an action repeated its
    error (``misled``, found by the harness from the session's actions; an agent's own ``use``
    events count for nothing), whether it carries instructions planted for the agent
    (``planted``, a label) and whether a verdict in the session flagged instructions in it
    (``flagged``: `Verdict.summary`)."""
    columns = [*SESSION_KEY, EVENT.memory_id, "seed", "origin", "truth"]
    if events.empty:
        return pd.DataFrame(columns=[*columns, "refused", "misled", "refreshed", "planted", "flagged"])
    handed = events[(events.kind == EventKind.RETRIEVE) & (events.truth != "")]
    pairs = handed[columns].drop_duplicates()
    verdicts = events.kind == EventKind.VERDICT
    marks = (
        ("refused", events.kind.isin([EventKind.REFUSE, EventKind.RETIRE])),
        ("misled", events.kind == EventKind.MISLED),
        ("refreshed", events.kind == EventKind.REFRESH),
        ("planted", events.kind == EventKind.PLANTED),
        ("flagged", verdicts & events.detail.fillna("").astype(str).str.contains(FLAGGED, regex=False)),
    )
    for column, mask in marks:
        marked = events[mask][[*SESSION_KEY, EVENT.memory_id]].drop_duplicates().assign(**{column: True})
        pairs = pairs.merge(marked, how="left", on=[*SESSION_KEY, EVENT.memory_id])
        pairs[column] = pairs[column].astype("boolean").fillna(False).astype(bool)
    return pairs


def control_arm(sessions: pd.DataFrame, arm: str) -> str | None:
    """The control arm ``arm`` is paired with: the one on the same store, else the first; None
    for a control arm itself, or a run without one."""
    arms = sessions[["arm", "store", "role"]].drop_duplicates("arm").set_index("arm")
    if arm not in arms.index or arms.loc[arm, "role"] == Role.CONTROL:
        return None
    controls = arms[arms.role == Role.CONTROL]
    same = controls[controls.store == arms.loc[arm, "store"]]
    chosen = same if len(same) else controls
    return str(sorted(chosen.index)[0]) if len(chosen) else None


def paired_with_control(sessions: pd.DataFrame, arm: str) -> pd.DataFrame:
    """The arm's sessions joined with the control's on the same task: ``ok`` (this arm's
    task_success), ``control_ok``, ``origins`` handed and ``misled_origins``; empty without a control.
    A session either agent failed (an agent error) is left out: it is no harm and no rescue, and
    is counted apart (``agent_error_rate``)."""
    columns = [*PAIR_KEY, "ok", "control_ok", SESSION.origins, SESSION.misled_origins]
    control = control_arm(sessions, arm)
    if control is None:
        return pd.DataFrame(columns=columns)
    if SESSION.agent_error in sessions:
        sessions = sessions[~sessions[SESSION.agent_error].astype(str).str.lower().isin(["true", "1", "1.0"])]
    mine = sessions[sessions.arm == arm][[*PAIR_KEY, SESSION.task_success, SESSION.origins, SESSION.misled_origins]]
    theirs = sessions[sessions.arm == control][[*PAIR_KEY, SESSION.task_success]]
    both = mine.merge(theirs, on=PAIR_KEY, suffixes=("", "_control")).dropna(
        subset=[SESSION.task_success, "task_success_control"]
    )
    return pd.DataFrame(
        {
            **{k: both[k] for k in PAIR_KEY},
            "ok": both[SESSION.task_success].astype(bool),
            "control_ok": both.task_success_control.astype(bool),
            SESSION.origins: both[SESSION.origins].fillna("").astype(str),
            SESSION.misled_origins: both[SESSION.misled_origins].fillna("").astype(str),
        },
        columns=columns,
    )


def column(frame: pd.DataFrame, name: str) -> pd.Series:
    """A column, or zeros for tables written before it existed."""
    return frame[name].fillna(0) if name in frame else pd.Series(0, index=frame.index)
