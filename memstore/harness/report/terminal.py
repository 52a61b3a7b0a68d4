"""The terminal summary of a run: a table that fits the terminal, then the verdicts in words.

The table puts metrics in rows and arms in columns, in as many blocks of arms as the width
needs, so it fits 80 columns as well as 200 without breaking a word. Every value in it is the
same as in report.md (counts and intervals are there).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from rich.console import Console
from rich.table import Table
from rich.text import Text

from memstore.harness.analysis import Level, Metric, RunResults, registered_metrics
from memstore.harness.records import Role
from memstore.harness.report.builtin_gates import Gate
from memstore.harness.report.content import (
    ROLE_NOTE,
    error_lines,
    fmt,
    headlines,
    simulation_notes,
    usage_lines,
)
from memstore.harness.report.decision import (
    PROBE_NOTE,
    failing_scenarios,
    next_step,
    store_lines,
    undecided_lines,
    verdict_line,
)
from memstore.harness.report.gate import Decision, decide
from memstore.harness.report.legends import metric_legend
from memstore.harness.run import split_params

__all__ = ["first_line", "legend", "print_summary", "short_names"]

_LABEL_WIDTH = 11
_MIN_COLUMN = 9


_SHORT_AGENTS = {"no-memory": "none", "trusting": "trust", "blind-trusting": "blind", "jit-verify": "jit"}


def _short_agent(name: str, agents: list[str], several_stores: bool) -> str:
    base, params = split_params(name)
    if params:  # a stub with parameters of its own: its name marked, numbered among its variants
        variants = [a for a in agents if split_params(a)[0] == base and split_params(a)[1]]
        mark = "'" + (str(variants.index(name) + 1) if len(variants) > 1 else "")
        return _short_agent(base, agents, several_stores)[: 14 - len(mark)] + mark
    if name.startswith("command:"):
        commands = [a for a in agents if a.startswith("command:")]
        return "cmd" + (str(commands.index(name) + 1) if len(commands) > 1 else "")
    if name.startswith("llm:"):  # after its model, not the tail of an endpoint's URL in its options
        labels = {a: _llm_label(a) for a in agents if a.startswith("llm:")}
        twins = [a for a in labels if labels[a] == labels[name]]
        return labels[name] + (str(twins.index(name) + 1) if len(twins) > 1 else "")
    tail = name.rsplit(":", 1)[-1].rsplit(".", 1)[-1]
    return (_SHORT_AGENTS.get(name, tail) if several_stores else tail)[:14]


def _llm_label(name: str) -> str:
    """``llm:MODEL?options``: the model's own name (a path's last part), marked without memory."""
    model, _, query = name.removeprefix("llm:").partition("?")
    label = (model.rstrip("/").rsplit("/", 1)[-1] or model)[:16]
    return label + (" no-mem" if re.search(r"(?:^|&)memory=(?:false|0)(?:&|$)", query, re.IGNORECASE) else "")


def _short_stores(stores: list[str]) -> dict[str, str]:
    """A store by its scheme, numbered when two share one."""
    schemes = [s.split(":", 1)[0].split("+", 1)[0][:10] or "store" for s in stores]
    return {
        s: scheme + (str(schemes[:i].count(scheme) + 1) if schemes.count(scheme) > 1 else "")
        for i, (s, scheme) in enumerate(zip(stores, schemes, strict=True))
    }


def short_names(results: RunResults) -> dict[str, str]:
    """A column header per arm that fits a narrow terminal: the agent's name when every arm uses
    one store; ``agent@store`` otherwise (built-in agents abbreviated, a store by its scheme,
    numbered when two share one). The legend gives the full names."""
    arms = results.arms
    stores = sorted({a.store for a in arms.values()})
    agents = sorted({a.agent for a in arms.values()})
    several = len(stores) > 1
    store_names = _short_stores(stores)
    return {
        n: _short_agent(a.agent, agents, several) + (f"@{store_names[a.store]}" if several else "")
        for n, a in arms.items()
    }


def legend(results: RunResults) -> str:
    """What the short names stand for: ``Arms: jit = jit-verify, none = no-memory; @sqlite =
    sqlite:, @memory = memory://; none@sqlite (control).``, or with one store ``Arms: every one
    on the store sqlite:; no-memory (control).``"""
    short = short_names(results)
    arms = results.arms
    stores = sorted({a.store for a in arms.values()})
    agents = sorted({a.agent for a in arms.values()})
    roles = [f"{short[n]}{ROLE_NOTE.get(a.role, '')}" for n, a in arms.items() if a.role in ROLE_NOTE]
    if len(stores) == 1:
        named = [f"{_short_agent(a, agents, False)} = {a}" for a in agents if _short_agent(a, agents, False) != a]
        text = f"Arms: every one on the store {stores[0]}" + (f"; {', '.join(named)}" if named else "")
    else:
        ordered = list(dict.fromkeys(a.agent for a in arms.values()))
        named = [f"{_short_agent(a, agents, True)} = {a}" for a in ordered]
        where = ", ".join(f"@{s}" + (f" = {u}" if s != u else "") for u, s in _short_stores(stores).items())
        text = f"Arms: {', '.join(named)}; stores {where}"
    return text + (f"; {', '.join(roles)}." if roles else ".")


def first_line(results: RunResults, gate_list: list[Gate]) -> Text:
    """The decision (PASS, FAIL or UNDECIDED, each gate that made it on a line of its own next),
    then the headline in one sentence: task success of every arm against its control, in points,
    with its verdict, the harm probes named as probes."""
    decision = decide(gate_list)
    line = Text(verdict_line(gate_list), style=_STYLE[decision])
    short = short_names(results)
    parts = []
    for c in results.comparisons:
        if c.metric != "task_success_rate" or c.group or results.arms[c.b].role is not Role.CONTROL:
            continue
        role = results.arms[c.a].role
        if role is Role.CONTROL:
            continue
        probe = " probe" if role is Role.HARM_PROBE else ""
        parts.append(f"{short[c.a]} {100 * c.diff:+.1f} ({c.verdict.value}{probe})")
    controls = [n for n, a in results.arms.items() if a.role is Role.CONTROL]
    if parts and controls:
        base = results.arms[controls[0]].rate("task_success_rate")
        shown = f" {100 * base.value:.1f}%" if base is not None and len(controls) == 1 else ""
        line.append(f". Task success against no memory{shown}, in points: {', '.join(parts)}.")
    return line


_STYLE = {Decision.PASS: "bold green", Decision.FAIL: "bold red", Decision.UNDECIDED: "bold yellow"}


def _gate_lines(console: Console, results: RunResults, gate_list: list[Gate]) -> None:
    """Each failed gate (with the scenarios where it failed), then each undecided one, then the
    probes named as such and each store under test against the reference."""
    for gate in (g for g in gate_list if g.failed):
        where = failing_scenarios(results, gate)
        shown = f" (scenarios: {', '.join(where)})" if where else ""
        console.print(Text(f"  \u2717 {gate.name}: {gate.message}{shown}", style="red"))
    for line in undecided_lines(gate_list):
        console.print(Text(f"  ? {line}", style="yellow"))
    probes = results.arms_of(Role.HARM_PROBE)
    if probes:
        console.print(Text(f"Probes: {', '.join(probes)}: {PROBE_NOTE}.", style="dim"))
    for line in store_lines(results, gate_list):
        console.print(Text(line, style="bold"))


def _blocks(names: list[str], width: int, short: dict[str, str]) -> Iterator[list[str]]:
    """Arms in groups whose columns fit ``width`` beside the metric labels."""
    block: list[str] = []
    used = _LABEL_WIDTH + 4
    for name in names:
        need = max(_MIN_COLUMN, min(len(short[name]), 24)) + 3
        if block and used + need > width:
            yield block
            block, used = [], _LABEL_WIDTH + 4
        block.append(name)
        used += need
    if block:
        yield block


def _summary_metrics(results: RunResults, names: list[str]) -> list[Metric]:
    """The metrics of the summary table that some arm of ``names`` measured."""
    shown = [m for m in registered_metrics(level=Level.OVERALL) if m.summary]
    return [m for m in shown if any(results.arms[n].overall.get(m.name) is not None for n in names)]


def _table(results: RunResults, names: list[str], title: str, short: dict[str, str]) -> Table:
    shown = _summary_metrics(results, names)
    table = Table(title=title, title_justify="left", pad_edge=False, box=None, show_edge=False)
    table.add_column("", no_wrap=True)
    for name in names:
        table.add_column(Text(short[name]), justify="right", no_wrap=True, min_width=_MIN_COLUMN, max_width=24)
    for metric in shown:
        table.add_row(metric.label, *(fmt(results.arms[n].overall.get(metric.name)) for n in names))
    return table


def print_summary(console: Console, results: RunResults, gate_list: list[Gate], folder: str, seconds: float) -> None:
    """First the decision and the headline in one line, then every failed gate with its message
    and every undecided one with what would decide it; the probes; each store against the reference;
    then the legend of the arms' short names and the table; then the headline sentences, agent
    errors and usage; then the notes (what is simulated), where the run is, and the next step."""
    console.print(first_line(results, gate_list))
    _gate_lines(console, results, gate_list)
    short = short_names(results)
    names = list(results.arms)
    console.print(Text(legend(results), style="dim"))
    title = f"{results.run.tasks:,} tasks x {len(names)} arms"
    for block in _blocks(names, console.width, short):
        console.print(_table(results, block, title, short))
        title = ""
    console.print(Text(metric_legend(_summary_metrics(results, names), short=True), style="dim"))
    for headline in headlines(results):
        style = {"good": "green", "bad": "red"}.get(headline.tone, "")
        console.print(Text(headline.text, style=style))
    for line in error_lines(results):
        console.print(Text(line, style="red"))
    for line in usage_lines(results):
        console.print(Text(line))
    for note in simulation_notes(results, brief=True):
        style = "bold yellow" if "WEAKER ISOLATION" in note else "dim"
        console.print(Text(f"Note: {note}", style=style))
    passed = sum(g.passed for g in gate_list)
    console.print(
        Text(
            f"run folder: {folder} (report.html, report.md, junit.xml; {seconds:.1f} s); "
            f"{passed}/{len(gate_list)} gates passed"
        )
    )
    step = next_step(gate_list, results)
    if step:
        console.print(Text(step, style="bold"))
