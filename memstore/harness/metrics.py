"""Metrics of a run, computed from its tables (DESIGN.md, "The harness").

Rates keep their numerator and denominator (``{"value": 0.95, "k": 19, "n": 20}``) so that
the statistics can put intervals on them; a rate with nothing to count is ``None``.
Memory-level metrics (detection, false invalidation, use of bad memories) are counted
over (session, memory) pairs: a memory handed in two sessions is judged twice.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

__all__ = ["METRICS", "OUTCOME_RATES", "RATES", "compute", "memory_pairs", "rate"]

OUTCOME_RATES = (  # what the agents achieve, and what memory does to them
    "merge_rate",
    "review_precision",
    "review_recall",
    "answer_accuracy",
    "detection_recall",
    "false_invalidation_rate",
    "stale_use_rate",
    "self_heal_rate",
)
RATES = (*OUTCOME_RATES[:6], "reanchor_accuracy", *OUTCOME_RATES[6:], "needed_recall_at_k")
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
SESSION_KEY = ["arm", "scenario", "trial", "task"]


def rate(k: float, n: float) -> dict[str, Any] | None:
    """A rate with its counts, or None when there is nothing to count."""
    if n == 0:
        return None
    return {"value": round(float(k) / float(n), 6), "k": int(k), "n": int(n)}


def memory_pairs(events: pd.DataFrame) -> pd.DataFrame:
    """One row per (session, memory handed): its origin and truth, and what the agent did with it."""
    if events.empty:
        return pd.DataFrame(columns=[*SESSION_KEY, "memory_id", "origin", "truth", "refused", "used"])
    handed = events[(events.kind == "retrieve") & (events.truth != "")][[*SESSION_KEY, "memory_id", "origin", "truth"]]
    handed = handed.drop_duplicates()
    acted = events[events.kind.isin(["refuse", "retire", "use"])][[*SESSION_KEY, "memory_id", "kind"]]
    refused = acted[acted.kind != "use"][[*SESSION_KEY, "memory_id"]].drop_duplicates().assign(refused=True)
    used = acted[acted.kind == "use"][[*SESSION_KEY, "memory_id"]].drop_duplicates().assign(used=True)
    pairs = handed.merge(refused, how="left", on=[*SESSION_KEY, "memory_id"])
    pairs = pairs.merge(used, how="left", on=[*SESSION_KEY, "memory_id"])
    pairs["refused"] = pairs["refused"].fillna(False).astype(bool)
    pairs["used"] = pairs["used"].fillna(False).astype(bool)
    return pairs


def _memory_metrics(pairs: pd.DataFrame) -> dict[str, Any]:
    usable = pairs.truth.isin(["valid", "moved"])
    bad = ~usable
    return {
        "detection_recall": rate(int((pairs.refused & bad).sum()), int(bad.sum())),
        "false_invalidation_rate": rate(int((pairs.refused & usable).sum()), int(usable.sum())),
        "bad_use_rate": rate(int((pairs.used & bad).sum()), int(bad.sum())),
    }


def _session_metrics(sessions: pd.DataFrame, trials: pd.DataFrame, k: int) -> dict[str, Any]:
    coding = sessions[sessions.surface == "coding_agent"]
    review = sessions[sessions.surface == "code_review"]
    cli = sessions[sessions.surface == "cli"]
    needed = sessions[f"needed_at_{k}"].dropna() if f"needed_at_{k}" in sessions else pd.Series(dtype=bool)
    return {
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
        overall = {**_session_metrics(s, t, k), **_memory_metrics(p)}
        per_scenario = {}
        for scenario in sorted(s.scenario.unique()):
            per_scenario[scenario] = {
                **_session_metrics(s[s.scenario == scenario], t[t.scenario == scenario], k),
                **_memory_metrics(p[p.scenario == scenario]),
            }
        per_origin = {origin: _memory_metrics(p[p.origin == origin]) for origin in sorted(p.origin.unique())}
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
