"""Reports of a run folder: a self-contained HTML page, a Markdown summary, JUnit XML, JSON.

The HTML page has no external assets: its charts are inline SVG drawn by matplotlib, its
styles and its one small script are inline. It shows the per-arm table with intervals,
a forest plot of the paired differences, the verifier's confusion per memory origin,
self-healing over sessions, and drill-down to scenario, task and memory.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from xml.sax.saxutils import quoteattr

import jinja2
import pandas as pd

from memstore.harness.analysis.metrics import CONTROL, RATES, memory_pairs
from memstore.harness.charts import confusion_chart, forest_chart, healing_chart, rates_chart
from memstore.harness.stats import wilson_ci

__all__ = ["Gate", "gates", "render_html", "render_junit", "render_markdown", "write_reports"]

HEADLINE = list(RATES)
_DRILL_TASKS = 400
_DRILL_MEMORIES = 200


@dataclass(frozen=True)
class Gate:
    """A pass/fail check of a run: one JUnit test case.

    ``integrity``: the gate says whether the run measured anything at all (an agent that failed
    every session, units that could not run, a store changed behind the harness's back); a
    run that fails one is a failed run, whatever else was asked.
    """

    name: str
    passed: bool
    message: str
    integrity: bool = False


def _integrity_gates(arm: str, overall: dict[str, Any]) -> list[Gate]:
    errors = overall.get("agent_error_rate") or {"k": 0, "n": overall.get("sessions", 0)}
    failed, tampered = overall.get("failed_units", 0), overall.get("tampering", 0)
    every = errors["n"] > 0 and errors["k"] == errors["n"]
    return [
        Gate(
            f"{arm}: the agent did not fail every session",
            not every,
            f"the agent failed {errors['k']} of {errors['n']} sessions" + (": nothing was measured" if every else ""),
            integrity=True,
        ),
        Gate(f"{arm}: every unit ran", failed == 0, f"{failed} unit(s) could not run", integrity=True),
        Gate(
            f"{arm}: tampering == 0",
            tampered == 0,
            f"{tampered} change(s) to the store or a template behind the harness's back",
            integrity=True,
        ),
    ]


def _invariants(arm: str, overall: dict[str, Any]) -> list[Gate]:
    found = []
    for invariant in ("leaks", "expiry_violations"):
        count = overall.get(invariant, 0)
        found.append(Gate(f"{arm}: {invariant} == 0", count == 0, f"{count} {invariant.replace('_', ' ')}"))
    return found


def invariant_gates(results: dict[str, Any]) -> list[Gate]:
    """No arm leaks a memory or breaks expiry."""
    return [g for arm, data in results["arms"].items() for g in _invariants(arm, data["overall"])]


def _against_control(results: dict[str, Any], agent: str) -> tuple[list[str], list[dict[str, Any]]]:
    """The arms of ``agent``, and the run's comparisons of each with its no-memory control."""
    arms = [arm for arm, data in results["arms"].items() if data.get("agent") == agent]
    controls = {arm for arm, data in results["arms"].items() if data.get("agent") == CONTROL}
    found = [c for c in results.get("comparisons", []) if c["a"] in arms and c["b"] in controls]
    return arms, found


def no_harm_gates(results: dict[str, Any], agent: str = "jit-verify") -> list[Gate]:
    """``agent`` is not significantly worse than the no-memory control on any outcome (paired, Holm-adjusted)."""
    arms, found = _against_control(results, agent)
    gates_found = []
    for arm in arms:
        mine = [c for c in found if c["a"] == arm]
        worse = [c for c in mine if c["verdict"] == "regressed"]
        message = (
            "; ".join(
                f"{c['metric']} {c['a_value']:.3f} vs {c['b_value']:.3f} (p = {format_p(c['p_adjusted'])})"
                for c in worse
            )
            if worse
            else f"no outcome of {len(mine)} compared is significantly worse"
        )
        gates_found.append(
            Gate(
                f"{arm}: not significantly worse than {CONTROL}",
                bool(mine) and not worse,
                message if mine else "no comparison with a no-memory control in this run",
            )
        )
    return gates_found


HARM_OUTCOMES = ("merge_rate", "answer_accuracy", "review_precision")


def harm_seen_gate(results: dict[str, Any], agent: str = "trusting") -> Gate:
    """The run shows bad memory harming ``agent`` (an agent that trusts what it is handed): it
    is significantly worse than the no-memory control on merge rate, answer accuracy or review
    precision. A scenario set where this fails cannot show that a store or an agent is safe."""
    _, found = _against_control(results, agent)
    worse = [c for c in found if c["metric"] in HARM_OUTCOMES and c["verdict"] == "regressed"]
    shown = [c for c in found if c["metric"] in HARM_OUTCOMES]
    detail = "; ".join(
        f"{c['metric']} {c['a_value']:.3f} vs {c['b_value']:.3f} ({c['verdict']}, p = {format_p(c['p_adjusted'])})"
        for c in shown
    )
    return Gate(f"{agent}: bad memory measurably harms it", bool(worse), detail or f"no {agent} arm with a control")


def verifier_gates(
    overall: dict[str, Any],
    arm: str,
    *,
    detection: float = 0.95,
    false_invalidation: float = 0.02,
    reanchor: float = 0.9,
) -> list[Gate]:
    """The verifier's bars on one arm's metrics: a rate that was not measured fails its gate."""
    bars = (
        ("detection_recall", ">=", detection),
        ("false_invalidation_rate", "<=", false_invalidation),
        ("reanchor_accuracy", ">=", reanchor),
    )
    found = []
    for metric, how, bar in bars:
        value = (overall.get(metric) or {}).get("value")
        ok = value is not None and (value >= bar if how == ">=" else value <= bar)
        shown = "not measured" if value is None else f"{value:.3f}"
        found.append(Gate(f"{arm}: {metric} {how} {bar}", ok, f"{shown} (bar {how} {bar})"))
    return found


def gates(results: dict[str, Any], baseline_comparisons: list[dict[str, Any]] | None = None) -> list[Gate]:
    """Every run's gates: integrity, no leaks or expiry violations, `jit-verify` not significantly
    worse than no memory (where both ran), and no significant regression against the baseline."""
    found = []
    for arm, data in results["arms"].items():
        found += _integrity_gates(arm, data["overall"]) + _invariants(arm, data["overall"])
    found += [g for g in no_harm_gates(results) if "no comparison" not in g.message]
    for c in baseline_comparisons or []:
        diff = c["diff"] or 0.0
        message = (
            f"{c['verdict']}: {c['a_value']:.3f} now vs {c['b_value']:.3f} in the baseline "
            f"(diff {diff:+.3f}, adjusted p = {format_p(c['p_adjusted'])})"
        )
        if c["verdict"] == "underpowered" and c.get("mde") is not None:
            message += f"; the smallest change this run could detect is {c['mde']:.3f}"
        found.append(
            Gate(
                f"{c['a'].removesuffix(' (this run)')}: {c['metric']} not regressed",
                c["verdict"] != "regressed",
                message,
            )
        )
    return found


NEGATIVE_CONTROLS = {"naive"}


def arm_label(arm: str, data: dict[str, Any]) -> str:
    """An arm's name, with the negative control labelled as such wherever it appears."""
    return f"{arm} (negative control)" if data.get("store") in NEGATIVE_CONTROLS else arm


def cost_rows(results: dict[str, Any], timings: dict[str, Any] | None) -> list[dict[str, Any]]:
    """Per arm: retrieval recall at k, and what a session costs (characters, reads, store time)."""
    rows = []
    per_arm = (timings or {}).get("per_arm", {})
    for arm, data in results["arms"].items():
        o = data["overall"]
        recall = {k: (o.get(f"needed_recall_at_{k}") or {}).get("value") for k in (5, 10, 20, 50)}
        rows.append(
            {
                "arm": arm_label(arm, data),
                "recall": recall,
                "chars": o.get("injected_chars"),
                "reads": o.get("verify_reads"),
                "store_ms": per_arm.get(arm, {}).get("store_ms_per_session"),
            }
        )
    return rows


STUBS = ("no-memory", "trusting", "jit-verify")


def simulation_notes(results: dict[str, Any]) -> list[str]:
    """What in the run is a simulation, named as one, with its parameters and how they were chosen."""
    run = results["run"]
    notes = []
    stubs = [a for a in STUBS if any(d.get("agent") == a for d in results["arms"].values())]
    if stubs:
        budget = ", ".join(f"{k}={v}" for k, v in run.get("agent_config", {}).items())
        notes.append(
            f"{', '.join(stubs)} {'is a' if len(stubs) == 1 else 'are'} built-in stub agent"
            f"{'' if len(stubs) == 1 else 's'}: deterministic programs that act on what they read and what "
            f"they are handed, standing in for real agents (simulations, not language models). Their "
            f'exploration budget ({budget}) is a modelling choice, not a measurement (README, "The stub agents").'
        )
    for name, population in sorted(run.get("populations", {}).items()):
        parameters = ", ".join(f"{k}={v}" for k, v in population.get("parameters", {}).items())
        notes.append(
            f"{name} is a generated population (synthetic repositories, a simulation): "
            f"{population.get('description', '')} Parameters: {parameters}."
        )
    return notes


def harm_rows(results: dict[str, Any]) -> list[dict[str, Any]]:
    """Per arm paired with the no-memory control: harm and rescue, overall and per memory origin."""
    rows = []
    for arm, data in results["arms"].items():
        if data["overall"].get("harm_rate") is None:
            continue
        rows.append({"arm": arm_label(arm, data), "origin": "all", **_harm_cells(data["overall"])})
        for origin, found in sorted(data.get("per_origin", {}).items()):
            if found.get("harm_rate") is not None:
                rows.append({"arm": arm_label(arm, data), "origin": origin, **_harm_cells(found)})
    return rows


def _harm_cells(found: dict[str, Any]) -> dict[str, str]:
    def cell(metric: Any) -> str:
        return "-" if not metric else f"{metric['value']:.3f} ({metric['k']}/{metric['n']})"

    return {"harm": cell(found.get("harm_rate")), "rescue": cell(found.get("rescue_rate"))}


def _cell(metric: Any) -> dict[str, Any]:
    if metric is None:
        return {"text": "-", "sort": -1}
    if isinstance(metric, dict):
        low, high = wilson_ci(metric["k"], metric["n"])
        return {
            "text": f"{metric['value']:.3f}",
            "detail": f"[{low:.3f}, {high:.3f}] {metric['k']}/{metric['n']}",
            "sort": metric["value"],
        }
    return {"text": str(metric), "sort": metric}


def _confusion(tables: dict[str, pd.DataFrame]) -> dict[str, dict[str, dict[str, int]]]:
    pairs = memory_pairs(tables["events"])
    result: dict[str, dict[str, dict[str, int]]] = {}
    for (arm, origin), rows in pairs.groupby(["arm", "origin"]):
        result.setdefault(str(arm), {})[str(origin)] = {
            "refused": int(rows.refused.sum()),
            "misled": int((rows.misled & ~rows.refused).sum()),
            "other": int((~rows.misled & ~rows.refused).sum()),
        }
    return result


def _healing_curves(tables: dict[str, pd.DataFrame]) -> dict[str, list[float]]:
    sessions, events, trials = tables["sessions"], tables["events"], tables["trials"]
    if sessions.empty:
        return {}
    index = sessions.set_index(["arm", "scenario", "trial", "task"])["index"]
    bad = events[
        events.kind.isin(["retire", "correct"]) & events.truth.isin(["contradicted", "unsupported", "missing"])
    ]
    curves = {}
    depth = int(sessions["index"].max()) + 1
    for arm in sorted(sessions.arm.unique()):
        total = int(trials[trials.arm == arm].bad_initial.sum())
        mine = bad[bad.arm == arm]
        at = [int(index.get((r.arm, r.scenario, r.trial, r.task), 0)) for r in mine.itertuples()]
        healed = mine.assign(when=at).drop_duplicates(["scenario", "trial", "memory_id"])
        curves[arm] = [round(int((healed["when"] <= i).sum()) / total, 4) if total else 0.0 for i in range(depth)]
    return curves


def _environment() -> jinja2.Environment:
    environment = jinja2.Environment(
        loader=jinja2.PackageLoader("memstore.harness", "templates"),
        autoescape=jinja2.select_autoescape(["html", "j2"]),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    environment.filters["p"] = format_p
    return environment


def render_html(
    results: dict[str, Any],
    tables: dict[str, pd.DataFrame],
    gate_list: list[Gate],
    timings: dict[str, Any] | None = None,
) -> str:
    """The self-contained HTML report."""
    arms = results["arms"]
    comparisons = results.get("comparisons", [])
    sessions = tables["sessions"]
    shown_metrics = [m for m in HEADLINE if any(a["overall"].get(m) for a in arms.values())]
    scenarios = sorted(sessions.scenario.unique()) if not sessions.empty else []
    per_scenario = [
        {
            "name": s,
            "rows": [
                {"arm": arm, "cells": [_cell(arms[arm]["per_scenario"].get(s, {}).get(m)) for m in shown_metrics]}
                for arm in arms
            ],
        }
        for s in scenarios
    ]
    head = sessions.head(_DRILL_TASKS).astype(object)
    task_rows = head.where(head.notna(), "").to_dict("records")
    events = tables["events"]
    labelled = events[(events.truth != "") & (events.kind != "retrieve")] if not events.empty else events
    memories = []
    for memory_id, rows in list(labelled.groupby("memory_id", sort=True))[:_DRILL_MEMORIES]:
        first = rows.iloc[0]
        memories.append(
            {
                "id": memory_id,
                "scenario": first.scenario,
                "origin": first.origin,
                "truth": first.truth,
                "events": rows[["arm", "trial", "task", "kind", "detail"]].to_dict("records"),
            }
        )
    charts = {
        "rates": rates_chart(
            arms,
            [
                m
                for m in ("merge_rate", "answer_accuracy", "review_recall", "detection_recall", "stale_use_rate")
                if any(a["overall"].get(m) for a in arms.values())
            ],
        ),
        "forest": forest_chart(comparisons),
        "confusion": confusion_chart(_confusion(tables)),
        "healing": healing_chart(_healing_curves(tables)),
    }
    return (
        _environment()
        .get_template("report.html.j2")
        .render(
            run=results["run"],
            arms=arms,
            metrics=shown_metrics,
            cells={a: [_cell(d["overall"].get(m)) for m in shown_metrics] for a, d in arms.items()},
            comparisons=comparisons,
            charts=charts,
            per_scenario=per_scenario,
            tasks=task_rows,
            task_total=len(sessions),
            memories=memories,
            memory_total=labelled.memory_id.nunique() if not labelled.empty else 0,
            gates=gate_list,
            labels={arm: arm_label(arm, data) for arm, data in arms.items()},
            costs=cost_rows(results, timings),
            notes=simulation_notes(results),
            harm=harm_rows(results),
        )
    )


def format_p(p: float) -> str:
    """A p-value as people read it; below double precision it is a bound, not zero."""
    return "< 1e-16" if p < 1e-16 else f"{p:.3g}"


def _fmt(metric: Any) -> str:
    if metric is None:
        return "-"
    if isinstance(metric, dict):
        low, high = wilson_ci(metric["k"], metric["n"])
        return f"{metric['value']:.3f} [{low:.3f}, {high:.3f}]"
    return str(metric)


def render_markdown(results: dict[str, Any], gate_list: list[Gate], timings: dict[str, Any] | None = None) -> str:
    """A summary fit for a CI job summary."""
    run = results["run"]
    arms = results["arms"]
    metrics = [m for m in HEADLINE if any(a["overall"].get(m) for a in arms.values())] + ["leaks", "expiry_violations"]
    lines = [
        "# memstore eval",
        "",
        f"{run['tasks']} tasks, {len(arms)} arms, seed {run['seed']}, {run['trials']} trial(s); scenario set "
        f"`{run['scenario_set_hash']}`; memstore {run['memstore_version']}"
        + (f", commit `{run['git_commit'][:12]}`" if run.get("git_commit") else ""),
        "",
        "| arm | " + " | ".join(m.replace("_", " ") for m in metrics) + " |",
        "|---|" + "---|" * len(metrics),
    ]
    for arm, data in arms.items():
        lines.append(f"| {arm_label(arm, data)} | " + " | ".join(_fmt(data["overall"].get(m)) for m in metrics) + " |")
    lines += ["", "Rates with Wilson 95% intervals.", ""]
    notes = simulation_notes(results)
    if notes:
        lines += ["## What is simulated", "", *[f"- {n}" for n in notes], ""]
    harm = harm_rows(results)
    if harm:
        lines += [
            "## Harm and rescue against the no-memory control",
            "",
            "| arm | memories of origin | harm | rescue |",
            "|---|---|---|---|",
            *[f"| {r['arm']} | {r['origin']} | {r['harm']} | {r['rescue']} |" for r in harm],
            "",
            "Harm: paired tasks no-memory got right and the arm got wrong; rescue: the reverse. Per origin: over "
            "the tasks handed a memory of that origin, harm counted where an action repeated such a memory's error.",
            "",
        ]
    lines += [
        "## Retrieval and cost",
        "",
        "| arm | needed recall at 5 | at 10 | at 20 | at 50 | injected chars / session | verify reads / session "
        "| store ms / session |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in cost_rows(results, timings):
        recall = " | ".join("-" if v is None else f"{v:.3f}" for v in row["recall"].values())
        store_ms = "-" if row["store_ms"] is None else f"{row['store_ms']:.2f}"
        lines.append(f"| {row['arm']} | {recall} | {row['chars']} | {row['reads']} | {store_ms} |")
    lines.append("")
    comparisons = results.get("comparisons", [])
    if comparisons:
        lines += [
            "## Paired comparisons",
            "",
            "| metric | a | b | a - b [95% CI] | adjusted p | verdict |",
            "|---|---|---|---|---|---|",
        ]
        for c in comparisons:
            extra = ""
            if c["verdict"] == "underpowered" and c.get("mde") is not None:
                extra = (
                    f" (detectable: {c['mde']:.3f}"
                    + (f"; needs {math.ceil(c['needed_n'])}" if c.get("needed_n") else "")
                    + ")"
                )
            lines.append(
                f"| {c['metric']} | {c['a']} | {c['b']} | {c['diff']:+.3f} [{c['low']:+.3f}, "
                f"{c['high']:+.3f}] | {format_p(c['p_adjusted'])} | {c['verdict']}{extra} |"
            )
        lines += ["", "Holm-adjusted across the family of comparisons.", ""]
    failed = [g for g in gate_list if not g.passed]
    lines += ["## Gates", "", f"{len(gate_list) - len(failed)} of {len(gate_list)} passed.", ""]
    lines += [f"- FAILED {g.name}: {g.message}" for g in failed]
    return "\n".join(lines).rstrip() + "\n"


def render_junit(gate_list: list[Gate]) -> str:
    """One JUnit test case per gate."""
    failures = sum(not g.passed for g in gate_list)
    out = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<testsuite name="memstore" tests="{len(gate_list)}" failures="{failures}" errors="0">',
    ]
    for g in gate_list:
        out.append(f'  <testcase classname="memstore.gates" name={quoteattr(g.name)}>')
        if not g.passed:
            out.append(f"    <failure message={quoteattr(g.message)}/>")
        else:
            out.append(f"    <system-out>{g.message.replace('&', '&amp;').replace('<', '&lt;')}</system-out>")
        out.append("  </testcase>")
    out.append("</testsuite>")
    return "\n".join(out) + "\n"


def write_reports(
    folder: Path,
    results: dict[str, Any],
    tables: dict[str, pd.DataFrame],
    gate_list: list[Gate],
    formats: tuple[str, ...] = ("html", "md", "junit"),
) -> list[Path]:
    """Write the reports of ``formats`` into ``folder``; the paths written."""
    written = []
    timing_file = folder / "timings.json"
    timings = json.loads(timing_file.read_text()) if timing_file.exists() else None
    for fmt in formats:
        if fmt == "html":
            path, text = folder / "report.html", render_html(results, tables, gate_list, timings)
        elif fmt == "md":
            path, text = folder / "report.md", render_markdown(results, gate_list, timings)
        elif fmt == "junit":
            path, text = folder / "junit.xml", render_junit(gate_list)
        elif fmt == "json":
            path, text = (
                folder / "report.json",
                json.dumps({**results, "gates": [g.__dict__ for g in gate_list]}, indent=2, sort_keys=True) + "\n",
            )
        else:
            raise ValueError(f"unknown report format {fmt!r}; known: html, md, json, junit")
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written
