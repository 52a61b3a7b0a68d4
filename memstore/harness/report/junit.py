"""JUnit XML: one test case per gate, so CI systems show the gates as tests: a failed gate a
failure, an undecided one (inconclusive, not exercised) skipped with its reason."""

from __future__ import annotations

from xml.sax.saxutils import escape, quoteattr

from memstore.harness.report.builtin_gates import Gate

__all__ = ["render_junit"]


def render_junit(gate_list: list[Gate]) -> str:
    """One JUnit test case per gate."""
    failures = sum(g.failed for g in gate_list)
    skipped = sum(not g.decided for g in gate_list)
    out = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<testsuite name="memstore" tests="{len(gate_list)}" failures="{failures}" errors="0" skipped="{skipped}">',
    ]
    for g in gate_list:
        out.append(f'  <testcase classname="memstore.gates" name={quoteattr(g.name)}>')
        if g.failed:
            out.append(f"    <failure message={quoteattr(g.message)}/>")
        elif not g.decided:
            reason = f"{g.outcome.value}: {g.message}" + (f"; {g.advice}" if g.advice else "")
            out.append(f"    <skipped message={quoteattr(reason)}/>")
        else:
            out.append(f"    <system-out>{escape(g.message)}</system-out>")
        out.append("  </testcase>")
    out.append("</testsuite>")
    return "\n".join(out) + "\n"
