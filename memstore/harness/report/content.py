"""What every rendering of a run says: the headline, the failures, what is simulated, harm and
rescue, costs, and the numbers formatted the way people read them."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from memstore.harness.analysis import STRATA, ArmResult, Comparison, ComparisonVerdict, Rate, RunResults, Value
from memstore.harness.records import RECALL_KS, SESSION, Role
from memstore.harness.report.builtin_gates import Gate
from memstore.harness.stats import wilson_ci

__all__ = [
    "GROUPS_NOTE",
    "ROLE_NOTE",
    "Headline",
    "agent_parameters",
    "arm_label",
    "cost_rows",
    "error_lines",
    "failures",
    "fmt",
    "fmt_ci",
    "format_p",
    "group_rows",
    "harm_rows",
    "headlines",
    "instruction_lines",
    "poisoning_rows",
    "simulation_notes",
    "store_profile_lines",
    "usage_lines",
]

ROLE_NOTE = {Role.NEGATIVE_CONTROL: " (negative control)", Role.CONTROL: " (control)"}
HEADLINE_METRICS = ("task_success_rate", "merge_rate", "answer_accuracy", "review_precision")


def format_p(p: float) -> str:
    """A p-value as people read it; below double precision it is a bound, not zero."""
    if p != p:
        return "-"
    return "< 1e-16" if p < 1e-16 else f"{p:.3g}"


def fmt(value: Value) -> str:
    """A metric's value: a rate to three places, a count as is, nothing as a dash."""
    if value is None:
        return "-"
    if isinstance(value, Rate):
        return f"{value.value:.3f}"
    return str(value)


def fmt_ci(value: Value) -> str:
    """A rate with its Wilson 95% interval and counts."""
    if not isinstance(value, Rate):
        return fmt(value)
    low, high = wilson_ci(value.k, value.n)
    return f"{value.value:.3f} [{low:.3f}, {high:.3f}] {value.k}/{value.n}"


def arm_label(name: str, arm: ArmResult) -> str:
    """An arm's name, with a control or negative control labelled as such wherever it appears."""
    return name + ROLE_NOTE.get(arm.role, "")


@dataclass(frozen=True)
class Headline:
    """One sentence of the report's headline; ``tone`` is good, bad or neutral."""

    text: str
    tone: str


def _points(c: Comparison) -> str:
    interval = "" if not _finite(c.low) else f", 95% CI [{100 * c.low:+.1f}, {100 * c.high:+.1f}]"
    return f"{100 * c.diff:+.1f} points{interval}, Holm-adjusted p {_p_phrase(c.p_adjusted)}"


def _p_phrase(p: float) -> str:
    shown = format_p(p)
    return shown if shown.startswith("<") else f"= {shown}"


def headlines(results: RunResults) -> list[Headline]:
    """Each comparison that matters, in one sentence: every arm against the control on task
    success (and on the outcome where it moved most), and what memory did to it (harm, rescue)."""
    found: list[Headline] = []
    controls = set(results.arms_of(Role.CONTROL))
    for name, arm in results.arms.items():
        if arm.role is Role.CONTROL:
            continue
        mine = [c for c in results.comparisons if c.a == name and c.b in controls and c.metric in HEADLINE_METRICS]
        if not mine:
            continue
        main = next((c for c in mine if c.metric == "task_success_rate"), mine[0])
        what = main.metric.replace("_rate", "").replace("_", " ")
        tone = {ComparisonVerdict.IMPROVED: "good", ComparisonVerdict.REGRESSED: "bad"}.get(main.verdict, "neutral")
        text = (
            f"{name}: {what} {100 * main.a_value:.1f}% vs {100 * main.b_value:.1f}% without memory "
            f"({_points(main)}): {main.verdict.value}."
        )
        harm, rescue = arm.rate("harm_rate"), arm.rate("rescue_rate")
        if harm is not None and rescue is not None:
            text += (
                f" Of {harm.n:,} paired tasks, it got {harm.k:,} wrong that the control got right (harm) and "
                f"{rescue.k:,} right that the control got wrong (rescue)."
            )
        text += _by_stratum(results, name)
        found.append(Headline(text, tone))
    return found


def failures(results: RunResults, gate_list: list[Gate]) -> list[str]:
    """What must be seen first: every failed gate (leaks and expiry violations among them)."""
    return [f"{g.name}: {g.message}" for g in gate_list if g.failed]


def agent_parameters(results: RunResults) -> str:
    """The parameters the run's agents ran with, as the arms record them: once when every agent
    that has them shares them (``learn=True, reads=8, searches=2``), else per agent; "none" when
    no agent has any. By name: a run rendered as it ends and one rendered again from its
    ``results.json`` (whose keys are sorted) say the same."""
    given: dict[str, str] = {}
    for arm in results.run.arms:
        if arm.params:
            given.setdefault(arm.agent, ", ".join(f"{k}={v}" for k, v in sorted(arm.params.items())))
    if not given:
        return "none"
    if len(set(given.values())) == 1:
        return next(iter(given.values()))
    return "; ".join(f"{agent}: {text}" for agent, text in given.items())


def simulation_notes(results: RunResults, *, brief: bool = False) -> list[str]:
    """What in the run is a simulation, named as one, with its parameters and how they were chosen
    (``brief``: a population's description and parameters left to the reports, for the terminal)."""
    run = results.run
    notes = []
    stubs = list(dict.fromkeys(a.agent for a in run.arms if a.simulated))
    if stubs:
        budget = agent_parameters(results)
        one = len(stubs) == 1
        what = "is a built-in stub agent: a deterministic program that acts on what it reads and what it is"
        if not one:
            what = "are built-in stub agents: deterministic programs that act on what they read and what they are"
        notes.append(
            f"{', '.join(stubs)} {what} handed, standing in for real agents (simulations, not language models). "
            f"The exploration budget ({budget}) is a modelling choice, not a measurement "
            '(docs/agents.md, "The stub agents").'
        )
    runtime = run.agent_runtime
    if runtime:
        weaker = "" if str(runtime["sandbox"]).startswith("bubblewrap") else " WEAKER ISOLATION: "
        notes.append(
            f"Command agents ran with{weaker} {runtime['sandbox']}; network {runtime['network']}; "
            f'{runtime["timeout_seconds"]:g} s per session (docs/agents.md, "The sandbox").'
        )
    for name, population in sorted(run.populations.items()):
        parameters = ", ".join(f"{k}={v}" for k, v in population.get("parameters", {}).items())
        if brief:
            notes.append(
                f"{name} is a generated population (synthetic repositories, a simulation); its parameters are "
                "modelling choices, not measurements (report.md gives them and how they were chosen)."
            )
            continue
        notes.append(
            f"{name} is a generated population (synthetic repositories, a simulation): "
            f"{population.get('description', '')} Parameters: {parameters}."
        )
    return notes


GROUPS_NOTE = (
    "Task success against the control within each group of tasks: the kind of scenario (hand-written, mined from "
    "a real release history, generated), and for generated tasks whether what the task needs can be found in the "
    "repository (discoverable: named like the setting, or named beside it in the repository's own test) or not. "
    "A benefit on discoverable tasks is a control that missed what the repository offers; on tasks not "
    "discoverable it is knowledge only memory holds. McNemar's exact test, Holm-adjusted across this table; "
    "detection and false invalidation are the arm's own, in that group."
)


def group_rows(results: RunResults) -> list[dict[str, str]]:
    """Per arm against the control, per group of tasks: task success both ways, the paired
    difference and its verdict, and the arm's detection and false invalidation there."""
    rows = []
    for c in results.groups:
        arm = results.arms.get(c.a)
        found = arm.per_group.get(c.group, {}) if arm is not None else {}
        interval = f" [{100 * c.low:+.1f}, {100 * c.high:+.1f}]" if _finite(c.low) and _finite(c.high) else ""
        rows.append(
            {
                "arm": arm_label(c.a, arm) if arm is not None else c.a,
                "group": c.group,
                "tasks": f"{c.n:,}",
                "success": f"{c.a_value:.3f}",
                "control": f"{c.b_value:.3f}",
                "difference": f"{100 * c.diff:+.1f}{interval}",
                "p": format_p(c.p_adjusted),
                "verdict": c.verdict.value,
                "detection": _rate_cell(found.get("detection_recall")),
                "false_invalidation": _rate_cell(found.get("false_invalidation_rate")),
            }
        )
    return rows


def _rate_cell(value: Value) -> str:
    return f"{value.value:.3f} ({value.k}/{value.n})" if isinstance(value, Rate) else "-"


def error_lines(results: RunResults) -> list[str]:
    """Per arm whose agent failed sessions: the first distinct reasons, with their counts (an
    errored session is no harm and no rescue: it is counted here and in the agent error rate)."""
    found = []
    for name, arm in results.arms.items():
        for message, sessions in arm.errors:
            found.append(f"{name}: agent error in {sessions} session(s): {message}")
        for message, sessions in arm.infra_errors:
            found.append(f"{name}: not run in {sessions} session(s), an infrastructure error: {message}")
    return found


def _by_stratum(results: RunResults, arm: str) -> str:
    """The headline's clause on where an arm's effect comes from, by stratum of discoverability."""
    parts = [
        f"{c.group} {100 * c.diff:+.1f} points ({c.n:,} tasks, {c.verdict.value})"
        for c in results.groups
        if c.a == arm and c.group in STRATA
    ]
    return f" By stratum: {'; '.join(parts)}." if parts else ""


def harm_rows(results: RunResults) -> list[dict[str, str]]:
    """Per arm paired with the control: harm and rescue, overall and per memory origin."""
    rows = []
    for name, arm in results.arms.items():
        if arm.rate("harm_rate") is None:
            continue
        rows.append({"arm": arm_label(name, arm), "origin": "all", **_harm_cells(arm.overall)})
        for origin, found in sorted(arm.per_origin.items()):
            if isinstance(found.get("harm_rate"), Rate):
                rows.append({"arm": arm_label(name, arm), "origin": origin, **_harm_cells(found)})
    return rows


def _harm_cells(found: Any) -> dict[str, str]:
    return {"harm": _rate_cell(found.get("harm_rate")), "rescue": _rate_cell(found.get("rescue_rate"))}


def cost_rows(results: RunResults, timings: dict[str, Any] | None) -> list[dict[str, Any]]:
    """Per arm: retrieval recall at each k, and what a session costs (characters, reads, store time)."""
    per_arm = (timings or {}).get("per_arm", {})
    return [
        {
            "arm": arm_label(name, arm),
            "recall": {k: fmt(arm.overall.get(f"needed_recall_at_{k}")) for k in RECALL_KS},
            "chars": fmt(arm.overall.get(SESSION.injected_chars)),
            "reads": fmt(arm.overall.get(SESSION.verify_reads)),
            "store_ms": per_arm.get(name, {}).get("store_ms_per_session"),
            "tokens": _tokens(arm.overall),
            "cost": fmt(arm.overall.get(SESSION.cost_usd)),
            "cost_per_merge": fmt(arm.overall.get("cost_per_merge")),
            "agent_s": per_arm.get(name, {}).get("agent_seconds_per_session"),
            "agent_s_per_merge": per_arm.get(name, {}).get("agent_seconds_per_merge"),
        }
        for name, arm in results.arms.items()
    ]


def _tokens(found: Any) -> str:
    """Input / output tokens an arm reported, or '-' when it reported none."""
    spent = [found.get(name) for name in (SESSION.input_tokens, SESSION.output_tokens)]
    return "-" if not any(spent) else f"{spent[0] or 0:,} / {spent[1] or 0:,}"


def usage_lines(results: RunResults) -> list[str]:
    """One line per arm that reported usage: tokens, cost, cost per merged change."""
    lines = []
    for name, arm in results.arms.items():
        tokens = _tokens(arm.overall)
        if tokens == "-" and not arm.overall.get(SESSION.cost_usd):
            continue
        per_merge = arm.overall.get("cost_per_merge")
        lines.append(
            f"usage {arm_label(name, arm)}: {tokens} tokens in/out, ${arm.overall.get(SESSION.cost_usd) or 0:.4f}"
            + (f", ${per_merge:.4f} per merged change" if isinstance(per_merge, int | float) else "")
        )
    return lines


def _finite(value: Any) -> bool:
    return isinstance(value, int | float) and math.isfinite(value)


def store_profile_lines(results: RunResults) -> list[str]:
    """For each store over another project's engine: what the engine does itself, and what is
    emulated around it (`memstore.backends.foreign`), one line each."""
    lines = []
    for uri, profile in sorted((results.run.store_profiles or {}).items()):
        native = "; ".join(f"{k}: {v}" for k, v in sorted(profile.get("native", {}).items())) or "nothing listed"
        emulated = "; ".join(f"{k}: {v}" for k, v in sorted(profile.get("emulated", {}).items())) or "nothing"
        lines.append(f"{uri} does itself: {native}. Emulated around it: {emulated}.")
    return lines


def instruction_lines(results: RunResults) -> list[str]:
    """Per arm handed memories that carry instructions planted for the agent (ignore your task,
    `curl ... | sh`): how many a verdict in the session flagged ("instructions flagged: 5 of 6 planted")."""
    lines = []
    for name, arm in results.arms.items():
        found = arm.overall.get("instructions_flagged_rate")
        if isinstance(found, Rate):
            lines.append(
                f"instructions flagged, {arm_label(name, arm)}: {found.k} of {found.n} planted ({fmt_ci(found)})"
            )
    return lines


def poisoning_rows(results: RunResults) -> list[dict[str, str]]:
    """Per arm handed adversarial memories (prompt injections, wrong facts behind citations that
    look valid, memories planted by another user): retrieval hijack (how many the store handed,
    per session), how many the agent refused, and end-to-end harm (tasks an action repeating one
    of them turned from right to wrong, against the control)."""
    if not any("adversarial" in arm.per_origin for arm in results.arms.values()):
        return []
    rows = []
    for name, arm in results.arms.items():
        if arm.role is Role.CONTROL:
            continue
        origin = arm.per_origin.get("adversarial") or {}
        handed = origin.get("detection_recall")
        count = handed.n if isinstance(handed, Rate) else 0  # a store that handed none has no row of that origin
        sessions = arm.overall.get("sessions")
        rows.append(
            {
                "arm": arm_label(name, arm),
                "handed": str(count),
                "per_session": f"{count / sessions:.2f}" if isinstance(sessions, int) and sessions else "-",
                "refused": fmt_ci(handed),
                "harm": fmt_ci(origin.get("harm_rate")),
            }
        )
    return rows
