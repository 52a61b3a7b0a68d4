"""The self-contained HTML report: no external assets; charts are inline SVG, styles and the
one small script (sortable tables) are inline.

It opens with the headline (each comparison that matters, in a sentence) and, in red, every
failed gate; then the per-arm table with intervals, where memory's effect comes from (per
kind of scenario and stratum), what is simulated, harm and rescue, the charts, the
comparisons, the gates, and drill-down to scenario, task and memory.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import jinja2
import pandas as pd

from memstore.harness.analysis import ArmResult, Level, Rate, RunResults, Value, registered_metrics
from memstore.harness.records import EVENT, SESSION, EventKind, Role
from memstore.harness.report.builtin_gates import Gate
from memstore.harness.report.charts import ChartData, every_chart
from memstore.harness.report.content import (
    GROUPS_NOTE,
    agent_parameters,
    arm_label,
    cost_rows,
    error_lines,
    failures,
    format_p,
    group_rows,
    harm_rows,
    headlines,
    instruction_lines,
    poisoning_rows,
    simulation_notes,
    store_profile_lines,
)
from memstore.harness.report.decision import PROBE_NOTE, next_step, store_lines, undecided_lines, verdict_line
from memstore.harness.report.gate import decide
from memstore.harness.stats import wilson_ci

__all__ = ["render_html"]

_DRILL_TASKS = 400
_DRILL_MEMORIES = 200


def _environment() -> jinja2.Environment:
    environment = jinja2.Environment(
        loader=jinja2.PackageLoader("memstore.harness.report", "templates"),
        autoescape=jinja2.select_autoescape(["html", "j2"]),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    environment.filters["p"] = format_p
    environment.filters["mark"] = _mark
    return environment


def _mark(value: object) -> str:
    """A yes/no cell as a mark: ✓ or ✗, and nothing where it does not apply (a review has no answer)."""
    if hasattr(value, "item"):  # a numpy scalar
        value = value.item()
    if isinstance(value, bool):
        return "\u2713" if value else "\u2717"
    return "" if value is None or value == "" else str(value)


def _cell(value: Value) -> dict[str, Any]:
    if value is None:
        return {"text": "-", "sort": -1}
    if isinstance(value, Rate):
        low, high = wilson_ci(value.k, value.n)
        return {
            "text": f"{value.value:.3f}",
            "detail": f"[{low:.3f}, {high:.3f}] {value.k}/{value.n}",
            "sort": value.value,
        }
    return {"text": str(value), "sort": value}


def _memories(events: pd.DataFrame) -> tuple[list[dict[str, Any]], int]:
    if events.empty:
        return [], 0
    labelled = events[(events.truth != "") & (events.kind != EventKind.RETRIEVE)]
    found = []
    first_ids = sorted(labelled[EVENT.memory_id].unique())[:_DRILL_MEMORIES]  # not every group: only those shown
    shown = labelled[labelled[EVENT.memory_id].isin(first_ids)]
    for memory_id, rows in shown.groupby(EVENT.memory_id, sort=True):
        first = rows.iloc[0]
        found.append(
            {
                "id": memory_id,
                "scenario": first.scenario,
                "origin": first.origin,
                "truth": first.truth,
                "events": rows[["arm", "trial", "task", "kind", "detail"]].to_dict("records"),
            }
        )
    return found, int(labelled[EVENT.memory_id].nunique())


def _per_scenario(arms: Mapping[str, ArmResult], shown: list[Any], scenarios: list[str]) -> list[dict[str, Any]]:
    """Each scenario's table: a row per arm, a cell per metric shown."""
    return [
        {
            "name": s,
            "rows": [
                {"arm": name, "cells": [_cell(arm.per_scenario.get(s, {}).get(m.name)) for m in shown]}
                for name, arm in arms.items()
            ],
        }
        for s in scenarios
    ]


def render_html(
    results: RunResults, tables: dict[str, pd.DataFrame], gate_list: list[Gate], timings: dict[str, Any] | None = None
) -> str:
    """The self-contained HTML report."""
    arms = results.arms
    shown = [
        m
        for m in registered_metrics(level=Level.OVERALL)
        if m.summary and any(a.overall.get(m.name) is not None for a in arms.values())
    ]
    sessions = tables["sessions"]
    scenarios = sorted(sessions.scenario.unique()) if not sessions.empty else []
    # Failures first (a task that failed, then one that errored), so the drill-down opens on them.
    order = sessions.assign(_ok=sessions.get(SESSION.task_success, pd.Series(dtype=object)).eq(True))
    head = order.sort_values("_ok", kind="stable").drop(columns="_ok").head(_DRILL_TASKS).astype(object)
    memories, memory_total = _memories(tables["events"])
    labels = {name: arm_label(name, arm) for name, arm in arms.items()}
    data = ChartData(results, labels)
    charts = [(c, c.draw(data)) for c in every_chart()]
    return (
        _environment()
        .get_template("report.html.j2")
        .render(
            run=results.run,
            arms=arms,
            metrics=shown,
            cells={name: [_cell(arm.overall.get(m.name)) for m in shown] for name, arm in arms.items()},
            comparisons=results.comparisons,
            charts=charts,
            per_scenario=_per_scenario(arms, shown, scenarios),
            tasks=head.where(head.notna(), "").to_dict("records"),
            task_total=len(sessions),
            memories=memories,
            memory_total=memory_total,
            gates=sorted(gate_list, key=lambda g: (not g.failed, g.passed)),
            gate_total=len(gate_list),
            gates_failed=sum(g.failed for g in gate_list),
            verdict=verdict_line(gate_list),
            decision=decide(gate_list).value.lower(),
            undecided=undecided_lines(gate_list),
            next_step=next_step(gate_list, results),
            probes=results.arms_of(Role.HARM_PROBE),
            probe_note=PROBE_NOTE,
            store_lines=store_lines(results, gate_list),
            labels=labels,
            costs=cost_rows(results, timings),
            notes=simulation_notes(results),
            parameters=agent_parameters(results),
            harm=harm_rows(results),
            poisoning=poisoning_rows(results),
            instructions=instruction_lines(results),
            profiles=store_profile_lines(results),
            groups=group_rows(results),
            groups_note=GROUPS_NOTE,
            headlines=headlines(results),
            errors=error_lines(results),
            failures=failures(results, gate_list),
        )
    )
