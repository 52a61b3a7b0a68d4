"""Reports of a run: gates, and the HTML, Markdown, JUnit and JSON renderings with their charts.

`write_reports` writes the formats asked for into a run folder; each renderer is a module of
its own (`html`, `markdown`, `junit`), and what they all say (headline, failures, what is
simulated, harm and rescue) is in `content`.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import pandas as pd

from memstore.harness.analysis import RunResults
from memstore.harness.report.against import Compared, compare_baselines, compare_folders
from memstore.harness.report.builtin_gates import (
    Gate,
    gates,
    harm_seen_gate,
    invariant_gates,
    no_harm_gates,
    verifier_gates,
)
from memstore.harness.report.content import arm_label, harm_rows, headlines, simulation_notes
from memstore.harness.report.families import GateFamily, GateRun, every_family, family_gates
from memstore.harness.report.gate import EXIT, Decision, decide
from memstore.harness.report.html import render_html
from memstore.harness.report.junit import render_junit
from memstore.harness.report.markdown import render_markdown
from memstore.harness.report.suite import PLANNED, RUN, PlannedArm, plan
from memstore.harness.report.terminal import print_summary
from memstore.harness.runfolder import load_results, load_tables, whole

__all__ = [
    "EXIT",
    "FORMATS",
    "PLANNED",
    "RUN",
    "Compared",
    "Decision",
    "Gate",
    "GateFamily",
    "GateRun",
    "PlannedArm",
    "arm_label",
    "compare_baselines",
    "compare_folders",
    "decide",
    "every_family",
    "family_gates",
    "gates",
    "harm_rows",
    "harm_seen_gate",
    "headlines",
    "invariant_gates",
    "no_harm_gates",
    "plan",
    "print_summary",
    "render_again",
    "render_html",
    "render_junit",
    "render_markdown",
    "simulation_notes",
    "verifier_gates",
    "write_reports",
]

FORMATS = ("html", "md", "json", "junit")


def write_reports(
    folder: Path,
    results: RunResults,
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
            path, text = (
                folder / "report.md",
                render_markdown(results, gate_list, timings, sessions=tables.get("sessions")),
            )
        elif fmt == "junit":
            path, text = folder / "junit.xml", render_junit(gate_list)
        elif fmt == "json":
            document = {
                **results.to_json(),
                "decision": decide(gate_list).value,
                "gates": [{**asdict(g), "outcome": g.outcome.value, "passed": g.passed} for g in gate_list],
            }
            path, text = folder / "report.json", json.dumps(document, indent=2, sort_keys=True) + "\n"
        else:
            raise ValueError(f"unknown report format {fmt!r}; known: {', '.join(FORMATS)}")
        with whole(path) as partial:  # a write that fails leaves the report as it was, not cut short
            partial.write_text(text, encoding="utf-8")
        written.append(path)
    return written


def render_again(folder: Path, formats: tuple[str, ...] = ("html", "md", "junit")) -> list[Path]:
    """The reports of ``formats`` of the run folder ``folder`` written again, from its results and
    tables (of any format memstore reads); the paths written."""
    results = load_results(folder)
    return write_reports(folder, results, load_tables(folder), gates(results), formats)
