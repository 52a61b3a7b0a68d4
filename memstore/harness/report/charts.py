"""Charts for the HTML report, drawn with matplotlib as inline SVG (no files, no external assets)."""

from __future__ import annotations

import io
import re
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from memstore.harness.stats import wilson_ci

__all__ = ["confusion_chart", "forest_chart", "healing_chart", "rates_chart"]

plt.rcParams.update({"svg.hashsalt": "memstore", "font.size": 9, "svg.fonttype": "none"})
_COLORS = ["#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860", "#da8bc3", "#8c8c8c"]


def _svg(fig: Any, name: str) -> str:
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None, "Creator": None})
    plt.close(fig)
    svg = buffer.getvalue()
    svg = svg[svg.index("<svg") :]
    return re.sub(r"<svg ", f'<svg data-chart="{name}" role="img" ', svg, count=1)


def rates_chart(arms: dict[str, Any], metrics: list[str]) -> str:
    """Each arm's rate per metric, with its Wilson 95% interval ("" when there is nothing to draw)."""
    if not metrics or not arms:
        return ""
    fig, grid = plt.subplots(
        1, len(metrics), figsize=(2.6 * len(metrics), 0.5 + 0.45 * len(arms)), sharey=True, squeeze=False
    )
    axes = list(grid[0])
    names = list(arms)
    for ax, metric in zip(axes, metrics, strict=True):
        for i, arm in enumerate(names):
            value = arms[arm]["overall"].get(metric)
            if not value:
                continue
            low, high = wilson_ci(value["k"], value["n"])
            ax.errorbar(
                value["value"],
                i,
                xerr=[[max(value["value"] - low, 0.0)], [max(high - value["value"], 0.0)]],
                fmt="o",
                color=_COLORS[i % len(_COLORS)],
                capsize=3,
            )
        ax.set_title(metric.replace("_", " "))
        ax.set_xlim(-0.02, 1.02)
        ax.grid(axis="x", alpha=0.3)
    axes[0].set_yticks(range(len(names)), names)
    axes[0].invert_yaxis()
    return _svg(fig, "rates")


def forest_chart(comparisons: list[dict[str, Any]]) -> str:
    """Paired differences (a - b) with 95% intervals, one row per comparison ("" when there is none)."""
    rows = [c for c in comparisons if c["low"] is not None and c["high"] is not None]
    if not rows:
        return ""
    fig, ax = plt.subplots(figsize=(7.5, 0.6 + 0.32 * max(len(rows), 1)))
    colors = {"improved": "#55a868", "regressed": "#c44e52"}
    for i, c in enumerate(rows):
        ax.errorbar(
            c["diff"],
            i,
            xerr=[[max(c["diff"] - c["low"], 0.0)], [max(c["high"] - c["diff"], 0.0)]],
            fmt="s",
            color=colors.get(c["verdict"], "#8c8c8c"),
            capsize=3,
        )
    ax.axvline(0, color="black", linewidth=0.8)
    ax.set_yticks(range(len(rows)), [f"{c['metric']}: {c['a']} - {c['b']}" for c in rows])
    ax.invert_yaxis()
    ax.set_xlabel("difference (a - b), 95% interval; green improved, red regressed, grey neither")
    ax.grid(axis="x", alpha=0.3)
    return _svg(fig, "forest")


def confusion_chart(confusion: dict[str, dict[str, dict[str, int]]]) -> str:
    """Per arm and memory origin: how many memories handed were refused, repeated by an action
    (misled: found by the harness), or neither."""
    arms = list(confusion)
    origins = sorted({o for per in confusion.values() for o in per})
    if not arms or not origins:
        return ""
    fig, grid = plt.subplots(1, len(arms), figsize=(3.2 * len(arms), 2.8), sharey=True, squeeze=False)
    axes = list(grid[0])
    for ax, arm in zip(axes, arms, strict=True):
        bottom = [0] * len(origins)
        for j, action in enumerate(("refused", "misled", "other")):
            values = [confusion[arm].get(o, {}).get(action, 0) for o in origins]
            ax.bar(origins, values, bottom=bottom, label=action, color=_COLORS[j])
            bottom = [b + v for b, v in zip(bottom, values, strict=True)]
        ax.set_title(arm)
        ax.tick_params(axis="x", rotation=30)
    axes[0].legend(fontsize=7)
    axes[0].set_ylabel("memories handed (session, memory pairs)")
    return _svg(fig, "confusion")


def healing_chart(curves: dict[str, list[float]]) -> str:
    """Share of the initial pool's bad memories healed (retired or corrected) by session number."""
    if not curves:
        return ""
    fig, ax = plt.subplots(figsize=(6, 2.8))
    for i, (arm, curve) in enumerate(curves.items()):
        ax.step(range(1, len(curve) + 1), curve, where="post", label=arm, color=_COLORS[i % len(_COLORS)])
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("session of the trial")
    ax.set_ylabel("bad memories healed")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    return _svg(fig, "healing")
