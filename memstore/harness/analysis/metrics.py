"""Every metric of a run, each declared once (`memstore.harness.analysis.metric_registry`), and
`compute`, which evaluates them per arm: overall, per scenario and per memory origin.

Every outcome comes from what an agent did (its merged change, findings, answer; stale use
from the harness comparing those actions with the bad memories handed), never from what it
says it did. Memory-level rates count (session, memory) pairs: a memory handed in two
sessions is judged twice. Harm and rescue pair each arm with the control arm (its role:
the agent without memory) on the same task.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

import numpy as np
import pandas as pd

from memstore.harness.analysis.metric_registry import (
    EVERY_LEVEL,
    Direction,
    Level,
    PairedBy,
    Slice,
    Test,
    metric,
    registered_metrics,
)
from memstore.harness.analysis.pairs import (
    PAIR_KEY,
    SCENARIO_KINDS,
    control_arm,
    memory_pairs,
    paired_with_control,
    task_groups,
)
from memstore.harness.analysis.run_results import ArmResult, Rate, Role, Value
from memstore.harness.records import PROMISES, RECALL_KS, SESSION, TRIAL, Chances, EventKind, Label
from memstore.model import Surface

__all__ = ["RECALL_KS", "Slice", "compute", "control_arm", "memory_pairs", "paired_with_control", "rate"]

USABLE = tuple(label.value for label in Label if label.usable)  # a lapsed label is neither
BAD = tuple(label.value for label in Label if label.bad)


def rate(k: float, n: float) -> Rate | None:
    """A rate with its counts, or None when there is nothing to count."""
    return Rate(int(k), int(n)) if n else None


# -- what agents achieve ---------------------------------------------------------------------


def _on(sessions: pd.DataFrame, surface: Surface | None) -> np.ndarray | None:
    """Which of ``sessions`` are on ``surface`` (None: all of them), as a mask (numpy: a metric is
    computed for every scenario of every arm, and pandas' filtering costs a millisecond a time)."""
    return None if surface is None else sessions["surface"].to_numpy() == surface.value


def _binary(sessions: pd.DataFrame, column: str, surface: Surface | None = None) -> Rate | None:
    mask = _on(sessions, surface)
    if column not in sessions:  # written before the metric existed: every session counts as False
        return rate(0, len(sessions) if mask is None else int(mask.sum()))
    values = sessions[column].to_numpy()
    if mask is not None:
        values = values[mask]
    present = values[~pd.isna(values)]  # a missing value counts nothing (a task that needs no memory)
    return rate(int(present.astype(bool).sum()), len(present))


@metric(
    "task_success_rate",
    label="success",
    counts="tasks that went right as a whole (merged; every expected finding and no other; the answer right) / tasks",
    test=Test.MCNEMAR,
    column=SESSION.task_success,
    chart=True,
)
def _task_success(s: Slice) -> Rate | None:
    return _binary(s.sessions, SESSION.task_success)


@metric(
    "merge_rate",
    label="merge",
    counts="coding tasks whose change passes the scenario's merge check / coding tasks",
    test=Test.MCNEMAR,
    column=SESSION.merged,
    surface=Surface.CODING_AGENT,
    chart=True,
)
def _merge(s: Slice) -> Rate | None:
    return _binary(s.sessions, SESSION.merged, Surface.CODING_AGENT)


def _review(s: Slice, denominator: str) -> Rate | None:
    mask = _on(s.sessions, Surface.CODE_REVIEW)
    if mask is None or not mask.any():
        return None
    found = s.sessions[SESSION.correct_findings].to_numpy(dtype=float)[mask]
    return rate(np.nansum(found), np.nansum(s.sessions[denominator].to_numpy(dtype=float)[mask]))


@metric(
    "review_precision",
    label="review P",
    counts="correct findings / findings",
    test=Test.BOOTSTRAP,
)
def _precision(s: Slice) -> Rate | None:
    return _review(s, "findings")


@metric(
    "review_recall",
    label="review R",
    counts="correct findings / expected findings",
    test=Test.BOOTSTRAP,
    chart=True,
)
def _recall(s: Slice) -> Rate | None:
    return _review(s, SESSION.expected_findings)


@metric(
    "answer_accuracy",
    label="answer",
    counts="CLI tasks answered right (by the scenario's matcher: values by default, so `30 days` is `30d`) / CLI tasks",
    test=Test.MCNEMAR,
    column=SESSION.answer_correct,
    surface=Surface.CLI,
    chart=True,
)
def _answer(s: Slice) -> Rate | None:
    return _binary(s.sessions, SESSION.answer_correct, Surface.CLI)


# -- what memory does to them ------------------------------------------------------------------


def _harm_rows(s: Slice) -> tuple[pd.DataFrame, pd.Series]:
    """The paired tasks of the slice, and which of them an action of this origin's memories misled."""
    paired = s.paired
    if s.origin is None:
        return paired, pd.Series(True, index=paired.index)
    rows = paired[[s.origin in found.split(";") for found in paired[SESSION.origins]]]
    misled = pd.Series(
        [s.origin in found.split(";") for found in rows[SESSION.misled_origins]], index=rows.index, dtype=bool
    )
    return rows, misled


@metric(
    "harm_rate",
    label="harm",
    counts="paired tasks the control (no memory) got right and this arm got wrong / paired tasks (a session either "
    "agent failed is no pair: it counts in agent_error_rate); per origin: over tasks handed a memory of that "
    "origin, harm where an action repeated such a memory's error",
    direction=Direction.LOWER,
    levels=EVERY_LEVEL,
)
def _harm(s: Slice) -> Rate | None:
    if s.paired.empty:
        return None
    rows, misled = _harm_rows(s)
    return rate(int((rows.control_ok & ~rows.ok & misled).sum()), len(rows))


@metric(
    "rescue_rate",
    label="rescue",
    counts="paired tasks the control got wrong and this arm got right / paired tasks (per origin: tasks handed "
    "a memory of that origin)",
    levels=EVERY_LEVEL,
)
def _rescue(s: Slice) -> Rate | None:
    if s.paired.empty:
        return None
    rows, _ = _harm_rows(s)
    return rate(int((~rows.control_ok & rows.ok).sum()), len(rows))


@metric(
    "stale_use_rate",
    label="stale use",
    counts="sessions in which an action (an edit, a finding, an answer) reproduces a bad memory's error, "
    "found by the harness from the action / sessions",
    direction=Direction.LOWER,
    test=Test.MCNEMAR,
    column=SESSION.stale_use,
    chart=True,
)
def _stale_use(s: Slice) -> Rate | None:
    return _binary(s.sessions, SESSION.stale_use)


@metric(
    "detection_recall",
    label="detect",
    counts="bad memories the agent refused to use / bad memories it was given",
    test=Test.MCNEMAR,
    column="refused",
    paired_by=PairedBy.BAD_HANDED,
    levels=EVERY_LEVEL,
    chart=True,
)
def _detection(s: Slice) -> Rate | None:
    bad = s.pairs.truth.isin(BAD)
    return rate(int((s.pairs.refused & bad).sum()), int(bad.sum()))


@metric(
    "false_invalidation_rate",
    label="false inv.",
    counts="usable memories it refused or retired / usable memories it was given",
    direction=Direction.LOWER,
    test=Test.MCNEMAR,
    column="refused",
    paired_by=PairedBy.USABLE_HANDED,
    levels=EVERY_LEVEL,
)
def _false_invalidation(s: Slice) -> Rate | None:
    usable = s.pairs.truth.isin(USABLE)
    return rate(int((s.pairs.refused & usable).sum()), int(usable.sum()))


@metric(
    "instructions_flagged_rate",
    label="instr. flagged",
    counts="memories carrying instructions planted for the agent (ignore your task, `curl ... | sh`) that a "
    "verdict in the session flagged / such memories handed (an agent that never verifies flags none)",
    summary=False,
)
def _instructions_flagged(s: Slice) -> Rate | None:
    planted = s.pairs.planted
    return rate(int((s.pairs.flagged & planted).sum()), int(planted.sum()))


@metric(
    "refresh_rate",
    label="refresh",
    counts="usable memories the agent refreshed (validated and used: their 28 days start again) / usable memories "
    "it was given",
    levels=EVERY_LEVEL,
    summary=False,
)
def _refresh(s: Slice) -> Rate | None:
    usable = s.pairs.truth.isin(USABLE)
    return rate(int((s.pairs.refreshed & usable).sum()), int(usable.sum()))


@metric(
    "reanchor_accuracy",
    label="reanchor",
    counts="moved memories re-anchored to the true lines (git's own diff is the truth) / moved memories",
    summary=False,
)
def _reanchor(s: Slice) -> Rate | None:
    return rate(s.sessions[SESSION.moved_reanchored].sum(), s.sessions[SESSION.moved_given].sum())


@metric(
    "self_heal_rate",
    label="heal",
    counts="bad memories of the initial pool retired, or superseded by a version whose fact states the value the "
    "code holds (read by the harness), at the end of a trial / bad memories",
    test=Test.MCNEMAR,
    paired_by=PairedBy.BAD_INITIAL,
)
def _self_heal(s: Slice) -> Rate | None:
    return rate(s.trials.healed.sum(), s.trials[TRIAL.bad_initial].sum()) if len(s.trials) else None


def _needed(k: int) -> None:
    @metric(
        f"needed_recall_at_{k}",
        label=f"needed@{k}",
        counts=f"tasks whose needed memory was among the first {k} memories handed / tasks that need one",
        summary=False,
    )
    def _recall_at(s: Slice) -> Rate | None:
        return _binary(s.sessions, f"needed_at_{k}")


for _k in RECALL_KS:
    _needed(_k)


def _evaluate(level: Level, found: Slice) -> dict[str, Value]:
    return {m.name: m.compute(found) for m in registered_metrics(level=level)}


def _by_scenario(frame: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """``frame``'s rows per scenario, split in one pass (a mask per scenario is quadratic)."""
    if frame.empty or "scenario" not in frame:
        return {}
    return {str(name): part for name, part in frame.groupby("scenario", sort=False)}


def compute(tables: dict[str, pd.DataFrame], roles: Mapping[str, Role] | None = None) -> dict[str, ArmResult]:
    """Every registered metric, per arm: overall, per scenario and per memory origin. ``roles``
    are the arms' declared roles (`metadata`'s ``arms``): an arm whose every unit failed has no
    session to carry its role (a treatment when it is not given)."""
    sessions, trials = tables["sessions"], tables["trials"]
    failures = tables.get("failures", pd.DataFrame())
    if failures.empty:
        failures = pd.DataFrame(columns=["arm", "agent", "store", "scenario", "trial"])
    pairs = memory_pairs(tables["events"])
    result: dict[str, ArmResult] = {}
    for arm in sorted(set(failures.arm) - set(sessions.arm if "arm" in sessions else ())):
        first = failures[failures.arm == arm].iloc[0]  # every unit failed: reported all the same
        role = (roles or {}).get(arm, Role.TREATMENT)
        overall = {"failed_units": int((failures.arm == arm).sum()), "sessions": 0}
        result[arm] = ArmResult(str(first.agent), str(first.store), Role(role), overall)
    if "arm" not in sessions or sessions.empty:
        return dict(sorted(result.items()))
    for arm in sorted(sessions.arm.unique()):
        whole = Slice(
            sessions[sessions.arm == arm],
            pairs[pairs.arm == arm],
            trials[trials.arm == arm],
            paired_with_control(sessions, arm),
            failures[failures.arm == arm],
        )
        split = {name: _by_scenario(getattr(whole, name)) for name in ("sessions", "pairs", "trials", "paired")}
        empty = {name: getattr(whole, name)[:0] for name in split}
        per_scenario = {
            scenario: _evaluate(
                Level.SCENARIO, replace(whole, **{name: p.get(scenario, empty[name]) for name, p in split.items()})
            )
            for scenario in sorted(whole.sessions.scenario.unique())
        }
        per_origin = {
            origin: _evaluate(
                Level.ORIGIN, replace(whole, pairs=whole.pairs[whole.pairs.origin == origin], origin=origin)
            )
            for origin in sorted(whole.pairs.origin.unique())
        }
        per_group = _per_group(whole)
        first = whole.sessions.iloc[0]
        result[arm] = ArmResult(
            str(first.agent),
            str(first.store),
            Role(first.role),
            {**_evaluate(Level.OVERALL, whole), **chance_counts(whole.sessions)},
            per_scenario,
            per_origin,
            per_group,
            _first_errors(tables["events"], arm, EventKind.AGENT_ERROR),
            _first_errors(tables["events"], arm, EventKind.INFRA_ERROR),
        )
    return dict(sorted(result.items()))


def chance_counts(sessions: pd.DataFrame) -> dict[str, int]:
    """The occasions the store had to break each promise, over ``sessions`` (``chances[METRIC]``,
    every promise listed; `memstore.harness.records.Chances`): 0 means the promise was not exercised."""
    found = dict.fromkeys((p.metric for p in PROMISES), 0)
    if SESSION.contract_chances in sessions:
        for text in sessions[SESSION.contract_chances]:
            for name, n in Chances.read(text).counts:
                if name in found:
                    found[name] += n
    return {f"chances[{name}]": n for name, n in found.items()}


def _per_group(whole: Slice) -> dict[str, dict[str, Value]]:
    """The metrics within each group of tasks (each kind of scenario, each stratum)."""
    per_group = {}
    for group, mask in task_groups(whole.sessions):
        sessions_in = whole.sessions[mask]
        keys = sessions_in[PAIR_KEY].drop_duplicates()
        scenarios = set(sessions_in.scenario)
        # A stratum cuts across a trial: what is counted per trial (healing) is left out there.
        trials_in = whole.trials[whole.trials.scenario.isin(scenarios)] if group in SCENARIO_KINDS else whole.trials[:0]
        per_group[group] = _evaluate(
            Level.SCENARIO,
            replace(
                whole,
                sessions=sessions_in,
                pairs=whole.pairs.merge(keys, on=PAIR_KEY),
                trials=trials_in,
                paired=whole.paired.merge(keys, on=PAIR_KEY),
            ),
        )
    return per_group


ERRORS_SHOWN = 3


def _first_errors(events: pd.DataFrame, arm: str, kind: EventKind) -> tuple[tuple[str, int], ...]:
    """The first ``ERRORS_SHOWN`` distinct reasons of ``kind`` (the agent's, the infrastructure's)
    a session failed, in the order the sessions ran, each with its sessions: what to fix first."""
    if events.empty or "kind" not in events:
        return ()
    rows = events[(events.arm == arm) & (events.kind == kind)]
    counts = rows.detail.fillna("").astype(str).value_counts(sort=False)
    return tuple((message, int(counts[message])) for message in list(counts.index)[:ERRORS_SHOWN])
