"""Metrics of a run, computed from its tables (DESIGN.md, "The harness").

Rates keep their numerator and denominator (``{"value": 0.95, "k": 19, "n": 20}``) so that
the statistics can put intervals on them; a rate with nothing to count is ``None``.
Memory-level metrics (detection, false invalidation) are counted over (session, memory)
pairs: a memory handed in two sessions is judged twice. Every outcome is measured from what
the agent did (its merged change, findings, answer; ``stale_use`` from the harness comparing
those actions with the bad memories it was handed), never from what it says it did. Harm and
rescue pair each arm with the no-memory control on the same task.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

__all__ = [
    "CONTROL",
    "METRICS",
    "OUTCOME_RATES",
    "RATES",
    "compute",
    "control_arm",
    "memory_pairs",
    "paired_with_control",
    "rate",
]

OUTCOME_RATES = (  # what the agents achieve, and what memory does to them
    "task_success_rate",
    "merge_rate",
    "review_precision",
    "review_recall",
    "answer_accuracy",
    "harm_rate",
    "rescue_rate",
    "detection_recall",
    "false_invalidation_rate",
    "stale_use_rate",
    "self_heal_rate",
)
RATES = (*OUTCOME_RATES, "reanchor_accuracy", "needed_recall_at_k")
METRICS = (
    *RATES,
    "leaks",
    "expiry_violations",
    "agent_error_rate",
    "tampering",
    "failed_units",
    "injected_chars",
    "verify_reads",
)
CONTROL = "no-memory"  # the agent every other arm is paired with for harm and rescue
SESSION_KEY = ["arm", "scenario", "trial", "task"]
_PAIR_KEY = ["scenario", "trial", "task"]


def rate(k: float, n: float) -> dict[str, Any] | None:
    """A rate with its counts, or None when there is nothing to count."""
    if n == 0:
        return None
    return {"value": round(float(k) / float(n), 6), "k": int(k), "n": int(n)}


def memory_pairs(events: pd.DataFrame) -> pd.DataFrame:
    """One row per (session, memory handed): its origin and truth, whether the agent refused it
    (refuse or retire), and whether an action repeated its error (``misled``, found by the
    harness from the session's actions; an agent's own ``use`` events count for nothing)."""
    if events.empty:
        return pd.DataFrame(columns=[*SESSION_KEY, "memory_id", "origin", "truth", "refused", "misled"])
    handed = events[(events.kind == "retrieve") & (events.truth != "")][[*SESSION_KEY, "memory_id", "origin", "truth"]]
    handed = handed.drop_duplicates()
    pairs = handed
    for column, kinds in (("refused", ["refuse", "retire"]), ("misled", ["misled"])):
        marked = events[events.kind.isin(kinds)][[*SESSION_KEY, "memory_id"]].drop_duplicates().assign(**{column: True})
        pairs = pairs.merge(marked, how="left", on=[*SESSION_KEY, "memory_id"])
        pairs[column] = pairs[column].astype("boolean").fillna(False).astype(bool)
    return pairs


USABLE, BAD = ("valid", "moved"), ("contradicted", "unsupported", "missing")  # "lapsed" labels are neither


def _memory_metrics(pairs: pd.DataFrame) -> dict[str, Any]:
    usable, bad = pairs.truth.isin(USABLE), pairs.truth.isin(BAD)
    return {
        "detection_recall": rate(int((pairs.refused & bad).sum()), int(bad.sum())),
        "false_invalidation_rate": rate(int((pairs.refused & usable).sum()), int(usable.sum())),
    }


def control_arm(sessions: pd.DataFrame, arm: str) -> str | None:
    """The no-memory arm ``arm`` is paired with: the one on the same store, else the first; None
    for a no-memory arm, or a run without one."""
    arms = sessions[["arm", "agent", "store"]].drop_duplicates("arm").set_index("arm")
    if arm not in arms.index or arms.loc[arm, "agent"] == CONTROL:
        return None
    controls = arms[arms.agent == CONTROL]
    same = controls[controls.store == arms.loc[arm, "store"]]
    chosen = same if len(same) else controls
    return str(sorted(chosen.index)[0]) if len(chosen) else None


def paired_with_control(sessions: pd.DataFrame, arm: str) -> pd.DataFrame:
    """The arm's sessions joined with the control's on the same task: ``ok`` (this arm's
    task_success), ``control_ok``, ``origins`` handed and ``misled_origins``; empty without a control."""
    control = control_arm(sessions, arm)
    if control is None:
        return pd.DataFrame(columns=[*_PAIR_KEY, "ok", "control_ok", "origins", "misled_origins"])
    mine = sessions[sessions.arm == arm][[*_PAIR_KEY, "task_success", "origins", "misled_origins"]]
    theirs = sessions[sessions.arm == control][[*_PAIR_KEY, "task_success"]]
    both = mine.merge(theirs, on=_PAIR_KEY, suffixes=("", "_control")).dropna(
        subset=["task_success", "task_success_control"]
    )
    return both.rename(columns={"task_success": "ok", "task_success_control": "control_ok"}).assign(
        ok=lambda f: f.ok.astype(bool),
        control_ok=lambda f: f.control_ok.astype(bool),
        origins=lambda f: f.origins.fillna("").astype(str),
        misled_origins=lambda f: f.misled_origins.fillna("").astype(str),
    )


def _harm(paired: pd.DataFrame, origin: str | None = None) -> dict[str, Any]:
    """``harm_rate``: tasks the control got right and this arm got wrong, over the paired tasks;
    ``rescue_rate``: its mirror. For one origin: over the tasks handed a memory of that origin,
    harm counted where an action repeated the error of a memory of that origin."""
    if paired.empty:
        return {"harm_rate": None, "rescue_rate": None}
    if origin is None:
        rows, misled = paired, pd.Series(True, index=paired.index)
    else:
        rows = paired[[origin in found.split(";") for found in paired.origins]]
        misled = pd.Series([origin in found.split(";") for found in rows.misled_origins], index=rows.index, dtype=bool)
    harmed = rows.control_ok & ~rows.ok & misled
    rescued = ~rows.control_ok & rows.ok
    return {"harm_rate": rate(int(harmed.sum()), len(rows)), "rescue_rate": rate(int(rescued.sum()), len(rows))}


def _session_metrics(sessions: pd.DataFrame, trials: pd.DataFrame, k: int) -> dict[str, Any]:
    coding = sessions[sessions.surface == "coding_agent"]
    review = sessions[sessions.surface == "code_review"]
    cli = sessions[sessions.surface == "cli"]
    needed = sessions[f"needed_at_{k}"].dropna() if f"needed_at_{k}" in sessions else pd.Series(dtype=bool)
    return {
        "task_success_rate": rate(int(_column(sessions, "task_success").astype(bool).sum()), len(sessions)),
        "merge_rate": rate(int(coding.merged.astype(bool).sum()), len(coding)),
        "review_precision": rate(review.correct_findings.sum(), review.findings.sum()) if len(review) else None,
        "review_recall": rate(review.correct_findings.sum(), review.expected_findings.sum()) if len(review) else None,
        "answer_accuracy": rate(int(cli.answer_correct.astype(bool).sum()), len(cli)),
        "reanchor_accuracy": rate(sessions.moved_reanchored.sum(), sessions.moved_given.sum()),
        "stale_use_rate": rate(int(sessions.stale_use.astype(bool).sum()), len(sessions)),
        "self_heal_rate": rate(trials.healed.sum(), trials.bad_initial.sum()) if len(trials) else None,
        "needed_recall_at_k": rate(int(needed.astype(bool).sum()), len(needed)),
        "leaks": int(sessions.leaks.sum()),
        "expiry_violations": int(sessions.expiry_violations.sum()),
        "agent_error_rate": rate(int(_column(sessions, "agent_error").astype(bool).sum()), len(sessions)),
        "tampering": int(_column(sessions, "tampered").sum()),
        "injected_chars": round(float(sessions.injected_chars.mean()), 3) if len(sessions) else None,
        "verify_reads": round(float(sessions.verify_reads.mean()), 3) if len(sessions) else None,
        "sessions": len(sessions),
    }


def _none_if_empty(found: dict[str, Any], paired: pd.DataFrame) -> dict[str, Any]:
    """Harm and rescue are None for the control itself and in a run without one."""
    return found if len(paired) else dict.fromkeys(found)


def _column(frame: pd.DataFrame, name: str) -> pd.Series:
    """A column, or zeros for tables written before it existed."""
    return frame[name].fillna(0) if name in frame else pd.Series(0, index=frame.index)


def compute(tables: dict[str, pd.DataFrame], *, k: int = 50) -> dict[str, dict[str, Any]]:
    """Per arm: ``overall``, ``per_scenario`` and ``per_origin`` metrics."""
    sessions, events, trials = tables["sessions"], tables["events"], tables["trials"]
    failures = tables.get("failures", pd.DataFrame())
    pairs = memory_pairs(events)
    result: dict[str, dict[str, Any]] = {}
    if not failures.empty:  # an arm whose every unit failed has no sessions, but must still be reported
        for arm in sorted(set(failures.arm) - set(sessions.arm if "arm" in sessions else ())):
            first = failures[failures.arm == arm].iloc[0]
            result[arm] = {
                "agent": first.agent,
                "store": first.store,
                "overall": {"failed_units": int((failures.arm == arm).sum()), "sessions": 0},
                "per_scenario": {},
                "per_origin": {},
            }
    if "arm" not in sessions:
        return result
    for arm in sorted(sessions.arm.unique()):
        s, t, p = sessions[sessions.arm == arm], trials[trials.arm == arm], pairs[pairs.arm == arm]
        paired = paired_with_control(sessions, arm)
        overall = {**_session_metrics(s, t, k), **_memory_metrics(p), **_none_if_empty(_harm(paired), paired)}
        per_scenario = {}
        for scenario in sorted(s.scenario.unique()):
            here = paired[paired.scenario == scenario]
            per_scenario[scenario] = {
                **_session_metrics(s[s.scenario == scenario], t[t.scenario == scenario], k),
                **_memory_metrics(p[p.scenario == scenario]),
                **_none_if_empty(_harm(here), here),
            }
        per_origin = {
            origin: {**_memory_metrics(p[p.origin == origin]), **_none_if_empty(_harm(paired, origin), paired)}
            for origin in sorted(p.origin.unique())
        }
        overall["failed_units"] = int((failures.arm == arm).sum()) if not failures.empty else 0
        first = s.iloc[0]
        result[arm] = {
            "agent": first.agent,
            "store": first.store,
            "overall": overall,
            "per_scenario": per_scenario,
            "per_origin": per_origin,
        }
        for k_ in (5, 10, 20, 50):
            column = s[f"needed_at_{k_}"].dropna() if f"needed_at_{k_}" in s else pd.Series(dtype=bool)
            overall[f"needed_recall_at_{k_}"] = rate(int(column.astype(bool).sum()), len(column))
    return dict(sorted(result.items()))
