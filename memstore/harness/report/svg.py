"""A small SVG canvas for the report's charts: panels with linear or categorical axes, ticks,
grid lines, marks and legends, written as text (no plotting library, no fonts read).

Text is measured by an estimate (`text_width`: an average glyph is 0.6 of the font size), which
is what the layout leaves room for; the page's own font draws it. Coordinates are written with
one decimal, so the same data gives the same bytes anywhere.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from html import escape

__all__ = ["Canvas", "Scale", "nice_ticks", "text_width"]

FONT = 11.0  # px, the charts' text
_GLYPH = 0.6  # an average glyph's width, as a share of the font size (an estimate: no font is read)
INK, GRID, MUTED = "#222222", "#dddddd", "#555555"


def text_width(text: str, size: float = FONT) -> float:
    """The estimated width in px of ``text`` at ``size``."""
    return _GLYPH * size * len(text)


def _n(value: float) -> str:
    return f"{value:.1f}".removesuffix(".0")


def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """About ``count`` round values (1, 2 or 5 times a power of ten apart) from ``low`` to ``high``."""
    if not high > low:
        return [low]
    raw = (high - low) / max(count - 1, 1)
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    first = math.ceil(low / step - 1e-9)
    return [round(i * step, 10) for i in range(first, math.floor(high / step + 1e-9) + 1)]


def _tip(title: str) -> str:
    """A mark's tooltip: what the browser shows on hover."""
    return f"<title>{escape(title)}</title>" if title else ""


def tick_label(value: float) -> str:
    return f"{value:g}" if value != 0 else "0"


@dataclass(frozen=True)
class Scale:
    """Data ``low..high`` onto pixels ``start..end`` (``end`` may be below ``start``: an upward axis)."""

    low: float
    high: float
    start: float
    end: float

    def __call__(self, value: float) -> float:
        span = self.high - self.low or 1.0
        clipped = min(max(value, self.low), self.high)
        return self.start + (clipped - self.low) / span * (self.end - self.start)


@dataclass
class Canvas:
    """Marks in px, drawn in the order added; `render` gives the ``<svg>`` element."""

    width: float
    height: float
    name: str
    parts: list[str] = field(default_factory=list)

    def line(self, x1: float, y1: float, x2: float, y2: float, color: str = INK, width: float = 1.0) -> None:
        self.parts.append(
            f'<line x1="{_n(x1)}" y1="{_n(y1)}" x2="{_n(x2)}" y2="{_n(y2)}" stroke="{color}" stroke-width="{width}"/>'
        )

    def rect(self, x: float, y: float, w: float, h: float, fill: str, title: str = "") -> None:
        tip = _tip(title)
        self.parts.append(f'<rect x="{_n(x)}" y="{_n(y)}" width="{_n(w)}" height="{_n(h)}" fill="{fill}">{tip}</rect>')

    def dot(self, x: float, y: float, color: str, *, square: bool = False, title: str = "") -> None:
        tip = _tip(title)
        if square:
            self.parts.append(f'<rect x="{_n(x - 4)}" y="{_n(y - 4)}" width="8" height="8" fill="{color}">{tip}</rect>')
        else:
            self.parts.append(f'<circle cx="{_n(x)}" cy="{_n(y)}" r="4" fill="{color}">{tip}</circle>')

    def interval(self, low: float, high: float, y: float, color: str) -> None:
        """A horizontal error bar from ``low`` to ``high`` px at ``y``, with caps."""
        self.line(low, y, high, y, color, 1.5)
        for x in (low, high):
            self.line(x, y - 4, x, y + 4, color, 1.5)

    def polyline(self, points: Sequence[tuple[float, float]], color: str) -> None:
        joined = " ".join(f"{_n(x)},{_n(y)}" for x, y in points)
        self.parts.append(f'<polyline points="{joined}" fill="none" stroke="{color}" stroke-width="1.8"/>')

    def text(
        self,
        x: float,
        y: float,
        text: str,
        *,
        anchor: str = "start",
        size: float = FONT,
        color: str = INK,
        rotate: float = 0.0,
        bold: bool = False,
    ) -> None:
        turn = f' transform="rotate({_n(rotate)} {_n(x)} {_n(y)})"' if rotate else ""
        weight = ' font-weight="bold"' if bold else ""
        self.parts.append(
            f'<text x="{_n(x)}" y="{_n(y)}" font-size="{_n(size)}" text-anchor="{anchor}" fill="{color}"{weight}{turn}>'
            f"{escape(text)}</text>"
        )

    def x_axis(self, scale: Scale, top: float, bottom: float, ticks: Sequence[float], *, grid: bool = True) -> None:
        """Ticks and their labels under ``bottom``, and vertical grid lines up to ``top``."""
        for value in ticks:
            x = scale(value)
            if grid:
                self.line(x, top, x, bottom, GRID)
            self.line(x, bottom, x, bottom + 4, MUTED)
            self.text(x, bottom + 6 + FONT, tick_label(value), anchor="middle", color=MUTED)
        self.line(scale.start, bottom, scale.end, bottom, MUTED)

    def y_axis(self, scale: Scale, left: float, right: float, ticks: Sequence[float], *, labels: bool = True) -> None:
        """Ticks left of ``left`` (labelled unless ``labels`` is false) and horizontal grid lines to ``right``."""
        for value in ticks:
            y = scale(value)
            self.line(left, y, right, y, GRID)
            if labels:
                self.line(left - 4, y, left, y, MUTED)
                self.text(left - 6, y + FONT / 3, tick_label(value), anchor="end", color=MUTED)
        self.line(left, scale.start, left, scale.end, MUTED)

    def legend(self, x: float, y: float, entries: Sequence[tuple[str, str]]) -> None:
        """A key of (label, colour) rows from (``x``, ``y``) down."""
        for i, (label, color) in enumerate(entries):
            row = y + i * (FONT + 6)
            self.rect(x, row - FONT + 2, 10, 10, color)
            self.text(x + 15, row, label)

    def render(self) -> str:
        head = (
            f'<svg xmlns="http://www.w3.org/2000/svg" data-chart="{escape(self.name)}" role="img" '
            f'width="{_n(self.width)}" height="{_n(self.height)}" viewBox="0 0 {_n(self.width)} {_n(self.height)}" '
            f'font-family="sans-serif">'
        )
        return "\n".join([head, *self.parts, "</svg>"])
