"""What the reports' tables abbreviate, and which way is better: spelled out under each table.

The arms' table takes its rows (terminal) or columns (report.md) from the metric registry: its
legend is made from the same declarations (`Metric.label`, ``name``, ``direction``), so a metric
added to the table is explained with it.
"""

from __future__ import annotations

from collections.abc import Sequence

from memstore.harness.analysis import Metric

__all__ = ["COSTS_LEGEND", "metric_legend"]


def metric_legend(metrics: Sequence[Metric], *, short: bool) -> str:
    """One sentence: each metric as the table names it (its short label when ``short``), what it
    is, and which way is better ("leaks: leaks, must be 0")."""
    parts = []
    for m in metrics:
        spelled = m.name.replace("_", " ")
        shown = m.label if short else spelled
        what = spelled if short and m.label != spelled else ""
        parts.append(f"{shown}: {what + ', ' if what else ''}{m.direction.value}")
    return "; ".join(parts) + "."


COSTS_LEGEND = (
    "needed recall at k: the share of tasks whose needed memory was among the first k handed "
    "(higher is better); injected chars: characters of memory put before the agent per session; verify "
    "reads: files read to verify memories per session; store ms: the store's own time per session; "
    "tokens, cost $ and $ / merge: what the agent reported spending (lower is better); agent s: the "
    "agent's wall time per session and per merged change."
)
