"""The Markdown report: a summary fit for a CI job summary, headline and failures first."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from memstore.harness.analysis import FAMILIES, Comparison, ComparisonVerdict, Level, RunResults, registered_metrics
from memstore.harness.records import Role, RunMeta
from memstore.harness.report.builtin_gates import Gate
from memstore.harness.report.content import (
    GROUPS_NOTE,
    arm_label,
    cost_rows,
    error_lines,
    fmt_ci,
    format_p,
    group_rows,
    harm_rows,
    headlines,
    instruction_lines,
    poisoning_rows,
    simulation_notes,
    store_profile_lines,
)
from memstore.harness.report.decision import (
    PROBE_NOTE,
    failing_scenarios,
    next_step,
    store_lines,
    undecided_lines,
    verdict_line,
)
from memstore.harness.report.failures import failed_tasks
from memstore.harness.report.gate import Decision, Outcome, decide
from memstore.harness.report.legends import COSTS_LEGEND, metric_legend

__all__ = ["comparison_table", "render_markdown"]


_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", "|": "\\|", "`": "\\`"})


def _md(text: object) -> str:
    """Text from a run (agent commands, store names, scenario text) as Markdown shows it and
    nothing more: no HTML, no table cell breaks, no links, one line."""
    return " ".join(str(text).split()).translate(_ESCAPES).replace("](", "]\\(")  # [x](y) is no link


def _header(run: RunMeta, arms: int) -> str:
    return (
        f"{run.tasks} tasks, {arms} arms, seed {run.seed}, {run.trials} trial(s); scenario set "
        f"`{run.scenario_set_hash}`; memstore {run.memstore_version}"
        + (f", commit `{run.git_commit[:12]}`" if run.git_commit else "")
        + (f". Tasks: {_md(run.sample)}" if run.sample else "")
    )


def _detectable(c: Comparison) -> str:
    """The smallest change this sample could detect (80% power), and the tasks the effect that
    matters would need where it could not."""
    if c.mde is None or not math.isfinite(c.mde) or c.mde >= 1:
        return "none"
    needs = c.verdict is ComparisonVerdict.UNDERPOWERED and c.needed_n and math.isfinite(c.needed_n)
    return f"{c.mde:.3f}" + (f" (needs {math.ceil(c.needed_n or 0):,})" if needs else "")


FAMILY_NOTE = "Holm adjusts each family apart: " + "; ".join(f"*{k}*: {v}" for k, v in FAMILIES.items()) + "."


def comparison_table(comparisons: tuple[Comparison, ...] | list[Comparison], *, title: str, note: str) -> list[str]:
    """The comparisons as a Markdown section."""
    if not comparisons:
        return []
    lines = [
        f"## {title}",
        "",
        "| metric | a | b | a - b [95% CI] | adjusted p | family | verdict | detectable (80% power) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for c in comparisons:
        interval = f"[{c.low:+.3f}, {c.high:+.3f}]" if math.isfinite(c.low) and math.isfinite(c.high) else "[-]"
        lines.append(
            f"| {_md(c.metric)} | {_md(c.a)} | {_md(c.b)} | {c.diff:+.3f} {interval} | {format_p(c.p_adjusted)} | "
            f"{c.family or '-'} | {c.verdict.value} | {_detectable(c)} |"
        )
    return [*lines, "", note, ""]


def render_markdown(
    results: RunResults,
    gate_list: list[Gate],
    timings: dict[str, Any] | None = None,
    *,
    comparisons_title: str = "Paired comparisons",
    sessions: pd.DataFrame | None = None,
) -> str:
    """A summary fit for a CI job summary: the verdict and every failed gate first, then the
    headline; where a gate failed or could not be decided, the tasks that failed (``sessions``)."""
    lines = _verdict(results, gate_list)
    if sessions is not None and decide(gate_list) is not Decision.PASS:
        lines += _failed_tasks(sessions)
    lines += _groups(results)
    notes = simulation_notes(results)
    if notes:
        lines += ["## What is simulated", "", *[f"- {_md(n)}" for n in notes], ""]
    profiles = store_profile_lines(results)
    if profiles:
        lines += ["## Other projects' stores: native and emulated", "", *[f"- {_md(p)}" for p in profiles], ""]
    lines += _harm(results)
    lines += _poisoning(results)
    lines += _costs(results, timings)
    lines += comparison_table(results.comparisons, title=comparisons_title, note=FAMILY_NOTE)
    lines += _gates(gate_list)
    return "\n".join(lines).rstrip() + "\n"


def _failed_tasks(sessions: pd.DataFrame) -> list[str]:
    """The short table of failed tasks: arm, scenario, trial, task and what went wrong."""
    rows, total = failed_tasks(sessions)
    if not rows:
        return []
    lines = [
        "## Failed tasks",
        "",
        f"{total:,} session(s) failed their task or saw the store break a promise"
        + (f"; the first {len(rows)}, in run order (report.html has them all):" if total > len(rows) else ":"),
        "",
        "| arm | scenario | trial | task | what went wrong |",
        "|---|---|---|---|---|",
    ]
    for r in rows:
        wrong = _md("; ".join(r["wrong"]))
        lines.append(f"| {_md(r['arm'])} | {_md(r['scenario'])} | {r['trial']} | {_md(r['task'])} | {wrong} |")
    return [*lines, ""]


def _gates(gate_list: list[Gate]) -> list[str]:
    """Every gate with what it decided: failed first, then undecided, then passed."""
    passed = sum(g.passed for g in gate_list)
    order = {Outcome.FAILED: 0, Outcome.INCONCLUSIVE: 1, Outcome.NOT_EXERCISED: 2, Outcome.PASSED: 3}
    lines = [
        "## Gates",
        "",
        f"{passed} of {len(gate_list)} passed.",
        "",
        "| gate | outcome | detail |",
        "|---|---|---|",
    ]
    for g in sorted(gate_list, key=lambda g: order[g.outcome]):
        detail = g.message + (f"; {g.advice}" if g.advice else "")
        lines.append(f"| {_md(g.name)} | {g.outcome.value} | {_md(detail)} |")
    return [*lines, ""]


def _verdict(results: RunResults, gate_list: list[Gate]) -> list[str]:
    """The decision with every failed gate (and where) and every undecided one (and what would
    decide it), the next step, the probes, each store against the reference, the run, the
    headline, agent errors and the arms' table."""
    shown = [m for m in registered_metrics(level=Level.OVERALL) if m.summary]
    shown = [m for m in shown if any(a.overall.get(m.name) is not None for a in results.arms.values())]
    word, _, rest = verdict_line(gate_list).partition(": ")
    lines = ["# memstore eval", "", f"**{word}**: {_md(rest)}.", ""]
    decided = [
        f"\u2717 {g.name}: {g.message}"
        + (f" (scenarios: {', '.join(where)})" if (where := failing_scenarios(results, g)) else "")
        for g in gate_list
        if g.failed
    ]
    decided += [f"? {line}" for line in undecided_lines(gate_list)]
    if decided:
        lines += [*[f"- {_md(f)}" for f in decided], ""]
    lines += [f"{_md(step)}", ""] if (step := next_step(gate_list, results)) else []
    probes = results.arms_of(Role.HARM_PROBE)
    lines += [f"Probes: {_md(', '.join(probes))}: {PROBE_NOTE}.", ""] if probes else []
    lines += [f"- {_md(line)}" for line in store_lines(results, gate_list)]
    lines += [_header(results.run, len(results.arms)), ""]
    lines += [f"- {_md(h.text)}" for h in headlines(results)]
    errors = error_lines(results)
    if errors:
        lines += [
            "",
            "**Agent and infrastructure errors** (no harm and no rescue: counted apart):",
            "",
            *[f"- {_md(e)}" for e in errors],
        ]
    lines += [
        "",
        "| arm | " + " | ".join(m.name.replace("_", " ") for m in shown) + " |",
        "|---|" + "---|" * len(shown),
    ]
    for name, arm in results.arms.items():
        cells = " | ".join(fmt_ci(arm.overall.get(m.name)) for m in shown)
        lines.append(f"| {_md(arm_label(name, arm))} | {cells} |")
    legend = metric_legend(shown, short=False)
    return [*lines, "", f"Rates with Wilson 95% intervals and their counts. {_md(legend)}", ""]


def _where(results: RunResults, gate: Gate) -> str:
    """`` (scenarios: a, b)``: where a failed gate failed, when that is known."""
    found = failing_scenarios(results, gate)
    return f" (scenarios: {', '.join(found)})" if found else ""


def _groups(results: RunResults) -> list[str]:
    groups = group_rows(results)
    if not groups:
        return []
    return [
        "## Where memory's effect comes from",
        "",
        "| arm | tasks of | tasks | task success | control | difference, points [95% CI] | adjusted p | verdict "
        "| detection | false invalidation |",
        "|---|---|---|---|---|---|---|---|---|---|",
        *[
            f"| {_md(r['arm'])} | {r['group']} | {r['tasks']} | {r['success']} | {r['control']} | "
            f"{r['difference']} | {r['p']} | {r['verdict']} | {r['detection']} | {r['false_invalidation']} |"
            for r in groups
        ],
        "",
        GROUPS_NOTE,
        "",
    ]


def _harm(results: RunResults) -> list[str]:
    harm = harm_rows(results)
    if not harm:
        return []
    return [
        "## Harm and rescue against the control",
        "",
        "| arm | memories of origin | harm | rescue |",
        "|---|---|---|---|",
        *[f"| {_md(r['arm'])} | {_md(r['origin'])} | {r['harm']} | {r['rescue']} |" for r in harm],
        "",
        "Harm: paired tasks the control (no memory) got right and the arm got wrong; rescue: the reverse. Per "
        "origin: over the tasks handed a memory of that origin, harm counted where an action repeated such a "
        "memory's error.",
        "",
    ]


def _poisoning(results: RunResults) -> list[str]:
    rows = poisoning_rows(results)
    if not rows:
        return []
    lines = [
        "## Poisoning",
        "",
        "| arm | adversarial memories handed | per session | refused | harm from them |",
        "|---|---|---|---|---|",
        *[f"| {_md(r['arm'])} | {r['handed']} | {r['per_session']} | {r['refused']} | {r['harm']} |" for r in rows],
        "",
        "Retrieval hijack: the adversarial memories (injected instructions, wrong facts behind citations that look "
        "valid, memories planted by another user) the store handed; refused: those the agent would not use; harm: "
        "over the tasks handed one, those an action repeating it turned from right (the control) to wrong.",
        "",
    ]
    flagged = instruction_lines(results)
    if flagged:
        lines += [
            *(f"- {line}" for line in flagged),
            "",
            "Instructions flagged: the memories handed that carry instructions planted for the agent (their label), "
            "and of them those a verdict in the session flagged as carrying instructions to the reader.",
            "",
        ]
    return lines


def _costs(results: RunResults, timings: dict[str, Any] | None) -> list[str]:
    lines = [
        "## Retrieval and cost",
        "",
        "| arm | needed recall at 5 | at 10 | at 20 | at 50 | injected chars / session | verify reads / session "
        "| store ms / session | tokens in / out | cost $ | $ / merge | agent s / session | agent s / merge |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    after = ["", _md(COSTS_LEGEND)]
    for row in cost_rows(results, timings):
        store_ms = "-" if row["store_ms"] is None else f"{row['store_ms']:.2f}"
        recall = " | ".join(row["recall"].values())
        seconds = " | ".join("-" if row[k] is None else f"{row[k]:.2f}" for k in ("agent_s", "agent_s_per_merge"))
        lines.append(
            f"| {_md(row['arm'])} | {recall} | {row['chars']} | {row['reads']} | {store_ms} | {row['tokens']} "
            f"| {row['cost']} | {row['cost_per_merge']} | {seconds} |"
        )
    return [*lines, *after, ""]
