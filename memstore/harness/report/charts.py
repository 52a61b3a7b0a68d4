"""Charts for the HTML report, drawn with matplotlib as inline SVG (no files, no external assets).

Each chart is registered with `@chart` (its name, title and note) and drawn from a run's
`ChartData`; the report shows every registered chart in order, so adding one is one decorated
function here. Figures are made with `matplotlib.figure.Figure` and drawn under a local
`rc_context`, so importing this module changes none of matplotlib's global state.
"""

from __future__ import annotations

import io
import re
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import matplotlib
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from memstore.harness.analysis.compare import Comparison, Verdict
from memstore.harness.analysis.model import ArmResult, RunResults
from memstore.harness.analysis.registry import Direction, Metric, metrics
from memstore.harness.stats import wilson_ci
from memstore.registry import Registry

__all__ = [
    "CHARTS",
    "CHART_REGISTRY",
    "Chart",
    "ChartData",
    "chart",
    "confusion_chart",
    "every_chart",
    "forest_chart",
    "healing_chart",
    "rates_chart",
]

_STYLE: dict[str, Any] = {"svg.hashsalt": "memstore", "font.size": 9, "svg.fonttype": "none"}
_COLORS = ["#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860", "#da8bc3", "#8c8c8c"]
_VERDICT_COLORS = {Verdict.IMPROVED: "#55a868", Verdict.REGRESSED: "#c44e52"}


@dataclass(frozen=True)
class ChartData:
    """What a chart is drawn from: the run's results (never its raw tables), and each arm's label."""

    results: RunResults
    labels: Mapping[str, str]


@dataclass(frozen=True)
class Chart:
    """A registered chart: its name (``data-chart`` in the page), title, note and drawing."""

    name: str
    title: str
    note: str
    draw: Callable[[ChartData], str]


CHART_REGISTRY: Registry[Chart] = Registry("chart", "memstore.charts", {})  # the built-ins are this module's
CHARTS = CHART_REGISTRY.registered  # every chart, in registration order


def every_chart() -> list[Chart]:
    """The built-in charts, then those of every ``memstore.charts`` plug-in."""
    CHART_REGISTRY.load()
    return list(CHART_REGISTRY.registered.values())


def chart(name: str, *, title: str, note: str) -> Callable[[Callable[[ChartData], str]], Callable[[ChartData], str]]:
    """Register the decorated function as the chart ``name``; it returns SVG, or "" for nothing to draw."""

    def register(draw: Callable[[ChartData], str]) -> Callable[[ChartData], str]:
        CHART_REGISTRY.registered[name] = Chart(name, title, note, draw)
        return draw

    return register


@contextmanager
def _figure(width: float, height: float) -> Iterator[Figure]:
    with matplotlib.rc_context(_STYLE):  # type: ignore[arg-type]
        yield Figure(figsize=(width, height), layout="constrained")


def _svg(fig: Figure, name: str) -> str:
    buffer = io.StringIO()
    with matplotlib.rc_context(_STYLE), warnings.catch_warnings():  # type: ignore[arg-type]
        # a one-arm chart is small: matplotlib says so, and draws it anyway
        warnings.filterwarnings("ignore", message="constrained_layout not applied")
        fig.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None, "Creator": None})
    svg = buffer.getvalue()
    svg = svg[svg.index("<svg") :]
    return re.sub(r"<svg ", f'<svg data-chart="{name}" role="img" ', svg, count=1)


def rates_chart(arms: Mapping[str, ArmResult], shown: Sequence[Metric], labels: Mapping[str, str]) -> str:
    """Each arm's rate per metric with its Wilson 95% interval, each panel titled with the
    metric and which way is better ("" when there is nothing to draw)."""
    if not shown or not arms:
        return ""
    names = list(arms)
    with _figure(2.6 * len(shown), 0.7 + 0.45 * len(names)) as fig:
        axes = fig.subplots(1, len(shown), sharey=True, squeeze=False)[0]
        for ax, metric in zip(axes, shown, strict=True):
            for i, arm in enumerate(names):
                value = arms[arm].rate(metric.name)
                if value is None:
                    continue
                low, high = wilson_ci(value.k, value.n)
                ax.errorbar(
                    value.value,
                    i,
                    xerr=[[max(value.value - low, 0.0)], [max(high - value.value, 0.0)]],
                    fmt="o",
                    color=_COLORS[i % len(_COLORS)],
                    capsize=3,
                )
            arrow = "higher is better" if metric.direction is Direction.HIGHER else "lower is better"
            ax.set_title(f"{metric.name.replace('_', ' ')}\n({arrow})")
            ax.set_xlim(-0.02, 1.02)
            ax.grid(axis="x", alpha=0.3)
        axes[0].set_yticks(range(len(names)), [labels.get(n, n) for n in names])
        axes[0].invert_yaxis()
        return _svg(fig, "rates")


FOREST_ROWS = 60  # a taller forest is read by no one: the rest are in the comparisons table


def forest_chart(comparisons: Sequence[Comparison]) -> str:
    """Paired differences (a - b) with their 95% intervals, one row per comparison, coloured by
    the Holm-adjusted verdict ("" when there is none); of more than `FOREST_ROWS`, those with
    the smallest adjusted p-values, in the run's order, and the label says so."""
    rows = [c for c in comparisons if _finite(c.low) and _finite(c.high)]
    if not rows:
        return ""
    total = len(rows)
    if total > FOREST_ROWS:
        kept = sorted(range(total), key=lambda i: (_p_adjusted(rows[i]), i))[:FOREST_ROWS]
        rows = [rows[i] for i in sorted(kept)]
    with _figure(7.5, 0.8 + 0.32 * len(rows)) as fig:
        ax = fig.subplots()
        for i, c in enumerate(rows):
            ax.errorbar(
                c.diff,
                i,
                xerr=[[max(c.diff - c.low, 0.0)], [max(c.high - c.diff, 0.0)]],
                fmt="s",
                color=_VERDICT_COLORS.get(c.verdict, "#8c8c8c"),
                capsize=3,
            )
        ax.axvline(0, color="black", linewidth=0.8)
        ax.set_yticks(range(len(rows)), [f"{c.metric}: {c.a} - {c.b}" for c in rows])
        ax.invert_yaxis()
        shown = f"\nthe {len(rows)} of {total} comparisons with the smallest adjusted p-values" * (len(rows) < total)
        ax.set_xlabel(
            "difference (a - b) with its 95% interval (unadjusted);\n"
            f"colour: the Holm-adjusted verdict (green improved, red regressed, grey neither){shown}"
        )
        ax.grid(axis="x", alpha=0.3)
        return _svg(fig, "forest")


def _p_adjusted(c: Comparison) -> float:
    return c.p_adjusted if _finite(c.p_adjusted) else 1.0


def confusion_chart(confusion: Mapping[str, Mapping[str, Mapping[str, int]]]) -> str:
    """Per arm and memory origin: the share of memories handed that the agent refused, that an
    action repeated (misled), or neither; each origin's bar sums to 1, its count beside it."""
    arms = list(confusion)
    origins = sorted({o for per in confusion.values() for o in per})
    if not arms or not origins:
        return ""
    actions = ("refused", "misled", "other")
    with _figure(3.2 * len(arms), 3.0) as fig:
        axes = fig.subplots(1, len(arms), sharey=True, squeeze=False)[0]
        for ax, arm in zip(axes, arms, strict=True):
            totals = [sum(confusion[arm].get(o, {}).values()) for o in origins]
            bottom = [0.0] * len(origins)
            for j, action in enumerate(actions):
                shares = [
                    confusion[arm].get(o, {}).get(action, 0) / total if total else 0.0
                    for o, total in zip(origins, totals, strict=True)
                ]
                ax.bar(origins, shares, bottom=bottom, label=action, color=_COLORS[j])
                bottom = [b + v for b, v in zip(bottom, shares, strict=True)]
            for x, total in enumerate(totals):
                ax.annotate(f"n={total}", (x, 1.0), ha="center", va="bottom", fontsize=7)
            ax.set_title(arm)
            ax.set_ylim(0, 1.12)
            ax.tick_params(axis="x", rotation=30)
        axes[0].set_ylabel("share of memories handed")
        fig.legend(*axes[0].get_legend_handles_labels(), loc="outside right upper", fontsize=7)
        return _svg(fig, "confusion")


def healing_chart(curves: Mapping[str, Sequence[float]]) -> str:
    """Share of the initial pool's bad memories healed (retired, or corrected to what the code
    says) by the end of each session of a trial; the last point is the table's self-heal rate."""
    if not curves:
        return ""
    with _figure(6.5, 2.8) as fig:
        ax = fig.subplots()
        # Arms that heal alike draw the same line: each is offset a little (at most 0.02 of the
        # axis), so none hides another; the note says so.
        step = 0.012 if len(curves) > 1 else 0.0
        for i, (arm, curve) in enumerate(curves.items()):
            shift = step * (i - (len(curves) - 1) / 2)
            shifted = [value + shift for value in curve]
            ax.step(range(1, len(curve) + 1), shifted, where="post", label=arm, color=_COLORS[i % len(_COLORS)])
        ax.set_ylim(-0.05, 1.05)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel("session of the trial")
        ax.set_ylabel("bad memories healed")
        ax.grid(alpha=0.3)
        fig.legend(loc="outside right upper", fontsize=7)
        return _svg(fig, "healing")


def _finite(value: Any) -> bool:
    return isinstance(value, int | float) and value == value and abs(value) != float("inf")


# -- the report's charts, in the order it shows them -------------------------------------------


@chart(
    "rates",
    title="Rates per arm",
    note="Each arm's rate with its Wilson 95% interval; each panel says which way is better.",
)
def _rates(data: ChartData) -> str:
    arms = data.results.arms
    shown = [m for m in metrics(chart=True, rate=True) if any(a.rate(m.name) for a in arms.values())]
    return rates_chart(arms, shown, data.labels)


@chart(
    "forest",
    title="Paired differences",
    note="Each comparison of the run with its 95% interval (unadjusted); the colour is the Holm-adjusted verdict.",
)
def _forest(data: ChartData) -> str:
    return forest_chart(data.results.comparisons)


@chart(
    "confusion",
    title="What each arm did with each origin's memories",
    note="Of the memories each arm was handed, by where they came from, the share it refused (or retired), the "
    "share one of its actions repeated (misled, found by the harness), and the rest; n is how many (session, "
    "memory) pairs.",
)
def _confusion(data: ChartData) -> str:

    return confusion_chart(data.results.confusion)


@chart(
    "healing",
    title="Self-healing over sessions",
    note="The share of the initial pool's bad memories retired, or corrected to what the code says, by the end of "
    "each session of a trial (the harness's own count; the last point is the self-heal rate in the table). "
    "Lines are offset by up to 0.02 so that arms with the same curve stay visible.",
)
def _healing(data: ChartData) -> str:

    return healing_chart(data.results.healing)
