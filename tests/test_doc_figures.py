"""Figures the documentation quotes from the committed default run (reports/baseline) are that
run's: each claim below is found in its page and compared with the figure computed from
``results.json``. A baseline regenerated on purpose (reports/README.md) fails here until the
pages say what it says."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
RESULTS: dict[str, Any] = json.loads((ROOT / "reports" / "baseline" / "results.json").read_text(encoding="utf-8"))
JIT, NONE, TRUSTING, BLIND = "jit-verify/sqlite", "no-memory/sqlite", "trusting/sqlite", "blind-trusting/sqlite"


def _gain(group: str) -> dict[str, Any]:
    """jit-verify's task success against no memory in ``group``."""
    return next(
        c
        for c in RESULTS["groups"]
        if (c["a"], c["b"], c["metric"], c["group"]) == (JIT, NONE, "task_success_rate", group)
    )


def _overall(arm: str, metric: str) -> dict[str, Any]:
    found: dict[str, Any] = RESULTS["arms"][arm]["overall"][metric]
    return found


def _in_group(arm: str, group: str, metric: str) -> dict[str, Any]:
    found: dict[str, Any] = RESULTS["arms"][arm]["per_group"][group][metric]
    return found


def _points(diff: float, places: int) -> str:
    return f"{100 * diff:.{places}f}"


def _count(n: int) -> str:
    return f"{n:,}"


TASKS = _overall(TRUSTING, "harm_rate")["n"]
MINED, GENERATED = _in_group(JIT, "mined", "detection_recall"), _in_group(JIT, "generated", "detection_recall")

# (page, the claim's pattern, the figures its groups must read) -- whitespace in a pattern matches a line break too
CLAIMS: list[tuple[str, str, dict[str, str]]] = [
    (
        "README.md",
        r"adds nothing significant \(\+(?P<diff>[\d.]+) points, (?P<n>[\d,]+) tasks\)",
        {"diff": _points(_gain("discoverable")["diff"], 1), "n": _count(_gain("discoverable")["n"])},
    ),
    (
        "README.md",
        r"it adds (?P<diff>\d+) points \((?P<n>[\d,]+) tasks\)",
        {"diff": _points(_gain("not discoverable")["diff"], 0), "n": _count(_gain("not discoverable")["n"])},
    ),
    ("README.md", r"the pooled gain \(\+(?P<diff>[\d.]+) points\)", {"diff": _points(_gain("generated")["diff"], 1)}),
    (
        "README.md",
        r"harms (?P<t>[\d,]+) of (?P<n>[\d,]+) tasks \(`trusting`; (?P<b>[\d,]+) for `blind-trusting`\), and "
        r"verified memory (?P<j>[\d,]+)\.",
        {
            "t": _count(_overall(TRUSTING, "harm_rate")["k"]),
            "n": _count(TASKS),
            "b": _count(_overall(BLIND, "harm_rate")["k"]),
            "j": _count(_overall(JIT, "harm_rate")["k"]),
        },
    ),
    ("README.md", r"\(detection (?P<v>[\d.]+) there\)", {"v": f"{GENERATED['value']:.3f}"}),
    ("README.md", r"catches (?P<k>\d+) of (?P<n>\d+) bad memories", {"k": str(MINED["k"]), "n": str(MINED["n"])}),
    (
        "docs/metrics.md",
        r"generated population detection is (?P<v>[\d.]+) \((?P<k>\d+) of (?P<n>\d+)\)",
        {"v": f"{GENERATED['value']:.3f}", "k": str(GENERATED["k"]), "n": str(GENERATED["n"])},
    ),
    (
        "docs/metrics.md",
        r"detection is (?P<v>[\d.]+) \((?P<k>\d+) of (?P<n>\d+)\) and one true memory of (?P<of>\d+) is refused",
        {
            "v": f"{MINED['value']:.3f}",
            "k": str(MINED["k"]),
            "n": str(MINED["n"]),
            "of": str(_in_group(JIT, "mined", "false_invalidation_rate")["n"]),
        },
    ),
    (
        "docs/agents.md",
        r"The default library is (?P<n>[\d,]+) tasks, so two arms \(with and without memory\) are "
        r"(?P<s>[\d,]+) sessions",
        {"n": _count(TASKS), "s": _count(2 * TASKS)},
    ),
    ("docs/ci.md", r"the whole library is (?P<n>[\d,]+) tasks", {"n": _count(TASKS)}),
]


@pytest.mark.parametrize(("page", "pattern", "figures"), CLAIMS, ids=[f"{p}:{i}" for i, (p, _, _) in enumerate(CLAIMS)])
def test_a_quoted_figure_is_the_committed_runs(page: str, pattern: str, figures: dict[str, str]) -> None:
    text = re.sub(r"\s+", " ", (ROOT / page).read_text(encoding="utf-8"))
    found = re.search(pattern, text)
    assert found is not None, f"{page} no longer says {pattern!r}: put the claim back or take it off this list"
    assert found.groupdict() == figures


def test_a_changed_figure_is_caught() -> None:
    page, pattern, figures = CLAIMS[3]
    text = re.sub(r"\s+", " ", (ROOT / page).read_text(encoding="utf-8"))
    wrong = text.replace(f"harms {figures['t']} of", f"harms {int(figures['t'].replace(',', '')) + 1} of")
    found = re.search(pattern, wrong)
    assert found is not None
    assert found.groupdict() != figures
