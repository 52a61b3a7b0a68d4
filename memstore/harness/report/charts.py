"""Charts for the HTML report, inline SVG (no files, no external assets) written by `svg.Canvas`.

Each chart is registered with `@chart` (its name, title and note) and drawn from a run's
`ChartData`; the report shows every registered chart in order, so adding one is one decorated
function here (a plug-in's chart may draw its SVG any way it likes). The built-ins write their
SVG by hand rather than through a plotting library: a report is written at the end of every
run, and matplotlib cost 1.7 s of CPU per run to import and lay out four small charts
(docs/benchmarks.md).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from memstore import plugins
from memstore.harness.analysis import (
    ArmResult,
    Comparison,
    ComparisonVerdict,
    Direction,
    Metric,
    RunResults,
    registered_metrics,
)
from memstore.harness.report.svg import FONT, MUTED, Canvas, Scale, nice_ticks, text_width
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

_COLORS = ["#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860", "#da8bc3", "#8c8c8c"]
_VERDICT_COLORS = {ComparisonVerdict.IMPROVED: "#55a868", ComparisonVerdict.REGRESSED: "#c44e52"}


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


CHART_REGISTRY: Registry[Chart] = plugins.CHARTS  # the built-ins are this module's (its ``shipped`` entry point)
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


_RATE_TICKS = nice_ticks(0.0, 1.0)  # 0, 0.25, ..., 1
_ROW = 24.0  # px per arm or comparison row


def rates_chart(arms: Mapping[str, ArmResult], shown: Sequence[Metric], labels: Mapping[str, str]) -> str:
    """Each arm's rate per metric with its Wilson 95% interval, each panel titled with the
    metric and which way is better ("" when there is nothing to draw)."""
    if not shown or not arms:
        return ""
    names = list(arms)
    rows = [labels.get(n, n) for n in names]
    left, panel, gap, top = max(text_width(r) for r in rows) + 14, 170.0, 24.0, 40.0
    bottom = top + _ROW * len(names) + 6
    canvas = Canvas(left + len(shown) * (panel + gap), bottom + 26, "rates")
    for i, row in enumerate(rows):
        canvas.text(left - 8, top + _ROW * (i + 0.5) + FONT / 3, row, anchor="end")
    for k, metric in enumerate(shown):
        x0 = left + k * (panel + gap)
        scale = Scale(-0.02, 1.02, x0, x0 + panel)
        arrow = "higher is better" if metric.direction is Direction.HIGHER else "lower is better"
        canvas.text(x0 + panel / 2, 14, metric.name.replace("_", " "), anchor="middle", bold=True)
        canvas.text(x0 + panel / 2, 28, f"({arrow})", anchor="middle", color=MUTED)
        canvas.x_axis(scale, top, bottom, _RATE_TICKS)
        canvas.line(x0, top, x0, bottom, MUTED)
        for i, arm in enumerate(names):
            value = arms[arm].rate(metric.name)
            if value is None:
                continue
            low, high = wilson_ci(value.k, value.n)
            y, color = top + _ROW * (i + 0.5), _COLORS[i % len(_COLORS)]
            canvas.interval(scale(min(low, value.value)), scale(max(high, value.value)), y, color)
            tip = f"{rows[i]}: {value.value:.3f} ({value.k}/{value.n}), 95% [{low:.3f}, {high:.3f}]"
            canvas.dot(scale(value.value), y, color, title=tip)
    return canvas.render()


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
    names = [f"{c.metric}: {c.a} - {c.b}" for c in rows]
    notes = [
        "difference (a - b) with its 95% interval (unadjusted);",
        "colour: the Holm-adjusted verdict (green improved, red regressed, grey neither)",
    ]
    if len(rows) < total:
        notes.append(f"the {len(rows)} of {total} comparisons with the smallest adjusted p-values")
    left, panel, top = max(text_width(n) for n in names) + 14, 420.0, 8.0
    bottom = top + _ROW * len(rows) + 6
    width = left + max(panel, max(text_width(n) for n in notes)) + 16
    canvas = Canvas(width, bottom + 30 + len(notes) * (FONT + 4), "forest")
    low = min([0.0, *(c.low for c in rows)])
    high = max([0.0, *(c.high for c in rows)])
    pad = (high - low) * 0.05 or 0.05
    scale = Scale(low - pad, high + pad, left, left + panel)
    canvas.x_axis(scale, top, bottom, nice_ticks(low - pad, high + pad))
    canvas.line(scale(0.0), top, scale(0.0), bottom, width=1.2)
    for i, (c, name) in enumerate(zip(rows, names, strict=True)):
        y, color = top + _ROW * (i + 0.5), _VERDICT_COLORS.get(c.verdict, "#8c8c8c")
        canvas.text(left - 8, y + FONT / 3, name, anchor="end")
        canvas.interval(scale(min(c.low, c.diff)), scale(max(c.high, c.diff)), y, color)
        tip = f"{name}: {c.diff:+.3f}, 95% [{c.low:+.3f}, {c.high:+.3f}], {c.verdict.value}"
        canvas.dot(scale(c.diff), y, color, square=True, title=tip)
    for j, note in enumerate(notes):
        canvas.text(left, bottom + 30 + j * (FONT + 4), note, color=MUTED)
    return canvas.render()


def _p_adjusted(c: Comparison) -> float:
    return c.p_adjusted if _finite(c.p_adjusted) else 1.0


_ACTIONS = ("refused", "misled", "other")


def confusion_chart(confusion: Mapping[str, Mapping[str, Mapping[str, int]]]) -> str:
    """Per arm and memory origin: the share of memories handed that the agent refused, that an
    action repeated (misled), or neither; each origin's bar sums to 1, its count beside it."""
    arms = list(confusion)
    origins = sorted({o for per in confusion.values() for o in per})
    if not arms or not origins:
        return ""
    band, gap, left, top, height = 44.0, 30.0, 58.0, 26.0, 160.0
    panel = band * len(origins)
    bottom = top + height
    legend_x = left + len(arms) * (panel + gap)
    under = max(text_width(o) for o in origins) * 0.5 + FONT + 10  # labels turned 30 degrees
    canvas = Canvas(legend_x + 90, bottom + under, "confusion")
    scale = Scale(0.0, 1.12, bottom, top)
    canvas.text(14, top + height / 2, "share of memories handed", anchor="middle", rotate=-90, color=MUTED)
    for k, arm in enumerate(arms):
        x0 = left + k * (panel + gap)
        canvas.text(x0 + panel / 2, 14, arm, anchor="middle", bold=True)
        canvas.y_axis(scale, x0, x0 + panel, _RATE_TICKS, labels=k == 0)
        canvas.line(x0, bottom, x0 + panel, bottom, MUTED)
        for j, origin in enumerate(origins):
            counts = confusion[arm].get(origin, {})
            total = sum(counts.values())
            x, stacked = x0 + band * j + band * 0.15, 0.0
            for a, action in enumerate(_ACTIONS):
                share = counts.get(action, 0) / total if total else 0.0
                if share > 0:
                    y = scale(stacked + share)
                    tip = f"{arm}, {origin}: {action} {counts.get(action, 0)} of {total}"
                    canvas.rect(x, y, band * 0.7, scale(stacked) - y, _COLORS[a], title=tip)
                stacked += share
            middle = x0 + band * (j + 0.5)
            canvas.text(middle, scale(1.0) - 4, f"n={total}", anchor="middle", size=FONT - 2)
            canvas.text(middle, bottom + 14, origin, anchor="end", rotate=-30)
    canvas.legend(legend_x, top + FONT, [(a, _COLORS[i]) for i, a in enumerate(_ACTIONS)])
    return canvas.render()


def healing_chart(curves: Mapping[str, Sequence[float]]) -> str:
    """Share of the initial pool's bad memories healed (retired, or corrected to what the code
    says) by the end of each session of a trial; the last point is the table's self-heal rate."""
    if not curves:
        return ""
    sessions = max((len(c) for c in curves.values()), default=1) or 1
    left, panel, top, height = 58.0, 420.0, 10.0, 170.0
    bottom = top + height
    legend = max(text_width(a) for a in curves) + 30
    canvas = Canvas(left + panel + 16 + legend, bottom + 44, "healing")
    x = Scale(0.6, sessions + 0.4, left, left + panel)
    y = Scale(-0.05, 1.05, bottom, top)
    ticks = list(range(1, sessions + 1)) if sessions <= 12 else [t for t in nice_ticks(1, sessions) if t == int(t)]
    canvas.y_axis(y, left, left + panel, _RATE_TICKS)
    canvas.x_axis(x, top, bottom, [float(t) for t in ticks], grid=False)
    canvas.text(left + panel / 2, bottom + 38, "session of the trial", anchor="middle", color=MUTED)
    canvas.text(14, top + height / 2, "bad memories healed", anchor="middle", rotate=-90, color=MUTED)
    # Arms that heal alike draw the same line: each is offset a little (at most 0.02 of the
    # axis), so none hides another; the note says so.
    step = 0.012 if len(curves) > 1 else 0.0
    for i, (arm, curve) in enumerate(curves.items()):
        shift, color = step * (i - (len(curves) - 1) / 2), _COLORS[i % len(_COLORS)]
        points: list[tuple[float, float]] = []
        for s, value in enumerate(curve, start=1):
            level = y(value + shift)
            points += [(x(s), level), (x(s + 1) if s < len(curve) else x(s) + 12, level)]
        canvas.polyline(points, color)
        if curve:
            canvas.dot(x(len(curve)), y(curve[-1] + shift), color, title=f"{arm}: {curve[-1]:.3f}")
    canvas.legend(left + panel + 16, top + FONT, [(a, _COLORS[i % len(_COLORS)]) for i, a in enumerate(curves)])
    return canvas.render()


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
    shown = [m for m in registered_metrics(chart=True, rate=True) if any(a.rate(m.name) for a in arms.values())]
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
