"""The terminal summary of a run: a table that fits the terminal, then the verdicts in words.

The table puts metrics in rows and arms in columns, in as many blocks of arms as the width
needs, so it fits 80 columns as well as 200 without breaking a word. Every value in it is the
same as in report.md (counts and intervals are there).
"""

from __future__ import annotations

from collections.abc import Iterator

from rich.console import Console
from rich.table import Table
from rich.text import Text

from memstore.harness.analysis.model import RunResults
from memstore.harness.analysis.registry import Level, metrics
from memstore.harness.report.content import arm_label, error_lines, fmt, headlines, simulation_notes, usage_lines
from memstore.harness.report.gates import Gate

__all__ = ["print_summary", "verdict_line"]

_LABEL_WIDTH = 11
_MIN_COLUMN = 9


def _blocks(names: list[str], width: int) -> Iterator[list[str]]:
    """Arms in groups whose columns fit ``width`` beside the metric labels."""
    block: list[str] = []
    used = _LABEL_WIDTH + 4
    for name in names:
        need = max(_MIN_COLUMN, min(len(name), 24)) + 3
        if block and used + need > width:
            yield block
            block, used = [], _LABEL_WIDTH + 4
        block.append(name)
        used += need
    if block:
        yield block


def _table(results: RunResults, names: list[str], title: str) -> Table:
    shown = [m for m in metrics(level=Level.OVERALL) if m.summary]
    shown = [m for m in shown if any(results.arms[n].overall.get(m.name) is not None for n in names)]
    table = Table(title=title, title_justify="left", pad_edge=False, box=None, show_edge=False)
    table.add_column("", no_wrap=True)
    for name in names:
        label = arm_label(name, results.arms[name])
        table.add_column(Text(label), justify="right", overflow="fold", min_width=_MIN_COLUMN, max_width=24)
    for metric in shown:
        table.add_row(metric.label, *(fmt(results.arms[n].overall.get(metric.name)) for n in names))
    return table


def verdict_line(gate_list: list[Gate]) -> Text:
    """``PASS: all N gates passed`` or ``FAIL: K of N gates failed: name; name; ...``."""
    failed = [g.name for g in gate_list if not g.passed]
    if not failed:
        return Text(f"PASS: all {len(gate_list)} gates passed")
    return Text(f"FAIL: {len(failed)} of {len(gate_list)} gates failed: {'; '.join(failed)}")


def print_summary(console: Console, results: RunResults, gate_list: list[Gate], folder: str, seconds: float) -> None:
    """The verdict (PASS, or FAIL naming the failed gates), the summary table, the headline
    sentences, the failed gates with their messages, and where the run is."""
    console.print(verdict_line(gate_list), style="bold green" if all(g.passed for g in gate_list) else "bold red")
    names = list(results.arms)
    title = f"memstore eval: {results.run['tasks']} tasks x {len(names)} arms"
    for block in _blocks(names, console.width):
        console.print(_table(results, block, title))
        title = ""
    for headline in headlines(results):
        style = {"good": "green", "bad": "red"}.get(headline.tone, "")
        console.print(Text(headline.text, style=style))
    for line in error_lines(results):
        console.print(Text(line, style="red"))
    for line in usage_lines(results):
        console.print(Text(line))
    for note in simulation_notes(results):
        style = "bold yellow" if "WEAKER ISOLATION" in note else "dim"
        console.print(Text(f"Note: {note}", style=style))
    failed = [g for g in gate_list if not g.passed]
    for gate in failed:
        console.print(Text(f"FAILED {gate.name}: {gate.message}", style="bold red"))
    console.print(
        Text(
            f"run folder: {folder} (report.html, report.md, junit.xml; {seconds:.1f} s); "
            f"{len(gate_list) - len(failed)}/{len(gate_list)} gates passed"
        )
    )
