"""What went wrong, task by task: the short table of failed tasks that report.md gives when a gate
failed or could not be decided (report.html drills down to every session)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from memstore.harness.records import PROMISES, SESSION

__all__ = ["FAILED_TASKS_SHOWN", "failed_tasks"]

FAILED_TASKS_SHOWN = 20  # rows of the table; the rest are counted


def _wrong(row: Any) -> list[str]:
    """What went wrong in one session, in words."""
    found = []
    if _flag(row.get(SESSION.infra_error)) is True:
        found.append("infrastructure error (not run)")
    if _flag(row.get(SESSION.agent_error)) is True:
        found.append("agent error")
    if _flag(row.get(SESSION.merged)) is False:
        found.append("change not merged")
    if _flag(row.get(SESSION.answer_correct)) is False:
        found.append("wrong answer")
    if _flag(row.get(SESSION.stale_use)) is True:
        found.append("used a stale memory")
    breaches = [p.metric for p in PROMISES if _count(row.get(p.metric)) > 0]
    if breaches:
        found.append("store broke " + ", ".join(breaches))
    if not found and _flag(row.get(SESSION.task_success)) is False:
        found.append("task failed")
    return found


def _flag(value: Any) -> bool | None:
    """A session's yes/no column as written or read back (a bool, numpy's, "True"), None for none."""
    if value is None or (isinstance(value, float) and pd.isna(value)) or value == "":
        return None
    if isinstance(value, str):
        return {"true": True, "false": False}.get(value.lower())
    return bool(value)


def _count(value: Any) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return 0.0
    return 0.0 if pd.isna(number) else number


def failed_tasks(sessions: pd.DataFrame, limit: int = FAILED_TASKS_SHOWN) -> tuple[list[dict[str, Any]], int]:
    """The sessions that failed their task or saw the store break a promise, in the run's order
    (arm, scenario, trial, task), at most ``limit``, each with what went wrong; and how many there are."""
    if sessions.empty:
        return [], 0
    rows = []
    for row in sessions.astype(object).where(sessions.notna(), None).to_dict("records"):
        wrong = _wrong(row)
        if wrong:
            rows.append({key: row.get(key) for key in ("arm", "scenario", "trial", "task")} | {"wrong": wrong})
    return rows[:limit], len(rows)
