"""The metric registry: one definition per metric, and everything else derived from it.

A metric is declared once, next to the function that computes it (`memstore.harness.analysis.metrics`
for outcomes and memory, `memstore.harness.analysis.consistency` for repeatability across trials,
`memstore.harness.analysis.health` for invariants and costs), with its name, what it counts, which
direction is better, how two arms are compared on it, its short label and whether it is charted.
The comparison families, the outcome list that runs are compared on, the report's columns and
charts, the terminal summary and the metric table in the docs (``memstore metrics``) all read
this registry, so adding a metric is one decorated function::

    @metric("refresh_rate", label="refresh", counts="usable memories refreshed / usable memories given")
    def _refresh(s: Slice) -> Rate | None: ...
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import pandas as pd

from memstore import plugins
from memstore.registry import Registry

__all__ = [
    "METRICS",
    "REGISTRY",
    "SHIPPED",
    "Direction",
    "Level",
    "Metric",
    "PairedBy",
    "Slice",
    "Test",
    "metric",
    "metric_table",
    "registered_metrics",
]


class Direction(StrEnum):
    """Which way a metric is better."""

    HIGHER = "higher is better"
    LOWER = "lower is better"
    ZERO = "must be 0"
    COST = "a cost"


class Test(StrEnum):
    """How two arms of one run are compared on a metric (paired by scenario, trial and task)."""

    MCNEMAR = "mcnemar-exact"  # a binary session outcome: McNemar's exact test, clustered interval
    BOOTSTRAP = "paired-bootstrap"  # precision or recall: a seeded paired bootstrap
    NONE = ""  # not compared within a run


class PairedBy(StrEnum):
    """What a McNemar comparison pairs between two arms: the same task, or the same seeded memory."""

    SESSIONS = "sessions"  # one outcome per task (scenario, trial, task): a column of the sessions table
    BAD_HANDED = "bad memories handed"  # one per (task, bad seeded memory handed): a column of the memory pairs
    USABLE_HANDED = "usable memories handed"  # one per (task, usable seeded memory handed)
    BAD_INITIAL = "bad memories of the initial pool"  # one per (trial, bad seeded memory): healed or not


class Level(StrEnum):
    """The breakdowns a metric is computed for."""

    OVERALL = "overall"
    SCENARIO = "per_scenario"
    ORIGIN = "per_origin"


EVERY_LEVEL = frozenset(Level)
RUN_LEVELS = frozenset({Level.OVERALL, Level.SCENARIO})


@dataclass(frozen=True)
class Metric:
    """One metric's declaration.

    Attributes:
        name: as it appears in results.json.
        label: a short header for tables ("merge").
        counts: what it counts, as the docs' metric table says it.
        direction: which way is better.
        test: how two arms of a run are compared on it.
        column: for a McNemar comparison, the column that holds the outcome (of the sessions table,
            or of the memory pairs for memory units).
        paired_by: for a McNemar comparison, what is paired.
        surface: for a McNemar comparison, the surface whose sessions count (None: every session).
        chart: drawn in the report's rates chart.
        summary: shown in the terminal summary.
        rate: a rate with counts (compared between runs); otherwise a count or a mean.
        levels: the breakdowns it is computed for.
        compute: the function of a `Slice` that computes it.
    """

    name: str
    label: str
    counts: str
    direction: Direction
    test: Test
    column: str | None
    paired_by: PairedBy
    surface: str | None
    chart: bool
    summary: bool
    rate: bool
    levels: frozenset[Level]
    compute: Callable[[Slice], Any]


@dataclass(frozen=True)
class Slice:
    """What one breakdown of one arm is computed from.

    Attributes:
        sessions: the arm's sessions in the breakdown.
        pairs: its (session, memory handed) pairs (`memory_pairs`).
        trials: its trials.
        paired: its sessions joined with the control's (`paired_with_control`).
        failures: its units that could not run.
        origin: for a per-origin breakdown, the memory origin.
    """

    sessions: pd.DataFrame
    pairs: pd.DataFrame
    trials: pd.DataFrame
    paired: pd.DataFrame
    failures: pd.DataFrame
    origin: str | None = None


METRICS: Registry[Metric] = plugins.METRICS  # the built-ins: memstore's ``memstore.metrics`` entry point (`shipped`)
REGISTRY = METRICS.registered  # every metric by name (`registered_metrics` lists them in order)


def metric(
    name: str,
    *,
    label: str,
    counts: str,
    direction: Direction = Direction.HIGHER,
    test: Test = Test.NONE,
    column: str | None = None,
    paired_by: PairedBy = PairedBy.SESSIONS,
    surface: str | None = None,
    chart: bool = False,
    summary: bool = True,
    rate: bool = True,
    levels: frozenset[Level] = RUN_LEVELS,
) -> Callable[[Callable[[Slice], Any]], Callable[[Slice], Any]]:
    """Register the decorated function as the metric ``name`` (see `Metric` for the fields)."""
    if test is Test.MCNEMAR and column is None and paired_by is not PairedBy.BAD_INITIAL:
        raise ValueError(f"metric {name!r}: a McNemar comparison needs the session column it counts")

    def register(compute: Callable[[Slice], Any]) -> Callable[[Slice], Any]:
        if name in METRICS.registered:
            raise ValueError(f"metric {name!r} is registered twice")
        METRICS.registered[name] = Metric(
            name, label, counts, direction, test, column, paired_by, surface, chart, summary, rate, levels, compute
        )
        return compute

    return register


def registered_metrics(
    *, test: Test | None = None, rate: bool | None = None, level: Level | None = None, chart: bool | None = None
) -> list[Metric]:
    """The registered metrics that match every filter given, in registration order."""
    _load()
    return [
        m
        for m in sorted(METRICS.registered.values(), key=_shipped_first)  # stable: registration order within
        if (test is None or m.test is test)
        and (rate is None or m.rate is rate)
        and (level is None or level in m.levels)
        and (chart is None or m.chart is chart)
    ]


def metric_table() -> str:
    """The Markdown table of every metric: name, what it counts, direction, how arms are compared."""
    lines = ["| metric | what it counts | better | compared by |", "|---|---|---|---|"]
    for m in registered_metrics():
        how = m.test.value or "-"
        if m.test is Test.MCNEMAR and m.paired_by is not PairedBy.SESSIONS:
            how += f", per {m.paired_by.value}"
        lines.append(f"| `{m.name}` | {m.counts} | {m.direction.value} | {how} |")
    return "\n".join(lines) + "\n"


# memstore's own metric modules, in the order their metrics are listed: results.json's comparisons,
# the reports' columns, ``memstore metrics``. A plug-in's metrics follow them, whichever was imported first.
SHIPPED = (
    "memstore.harness.analysis.metrics",  # outcomes and memory
    "memstore.harness.analysis.consistency",  # repeatability across trials
    "memstore.harness.analysis.health",  # the store's invariants and costs
    "memstore.harness.analysis.usage",  # what the agents spent
)


def _shipped_first(metric: Metric) -> int:
    """A metric's place by its module: memstore's own in `SHIPPED`'s order, then every other."""
    module = getattr(metric.compute, "__module__", "")
    return SHIPPED.index(module) if module in SHIPPED else len(SHIPPED)


def _load() -> None:
    """Every module of the ``memstore.metrics`` entry-point group, memstore's own first, imported
    once: their decorators fill the registry."""
    METRICS.load()
