"""The report's SVG canvas: round ticks that cover the range, scales that map and clip, and
charts whose marks say what they were drawn from."""

from __future__ import annotations

import itertools
import math
import xml.etree.ElementTree as ET

from hypothesis import given
from hypothesis import strategies as st

from memstore.harness.report.charts import confusion_chart, healing_chart
from memstore.harness.report.svg import Canvas, Scale, nice_ticks

_SVG = "{http://www.w3.org/2000/svg}"


def _texts(root: ET.Element, tag: str) -> list[str]:
    return sorted(e.text or "" for e in root.iter(_SVG + tag))


def _titled(root: ET.Element) -> dict[str, ET.Element]:
    """Each titled rect by its title."""
    return {t.text or "": r for r in root.iter(f"{_SVG}rect") if (t := r.find(f"{_SVG}title")) is not None}


@given(
    st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False),
    st.floats(1e-6, 1e6, allow_nan=False, allow_infinity=False),
)
def test_ticks_are_evenly_spaced_round_values_inside_the_range(low: float, span: float) -> None:
    high = low + span
    ticks = nice_ticks(low, high)
    assert 2 <= len(ticks) <= 11
    assert all(low - 1e-6 * span <= t <= high + 1e-6 * span for t in ticks)
    steps = {round(b - a, 9) for a, b in itertools.pairwise(ticks)}
    assert len({round(s / max(steps), 6) for s in steps}) == 1  # one step
    step = max(steps)
    mantissa = step / 10 ** math.floor(math.log10(step))
    assert any(math.isclose(mantissa, m, rel_tol=1e-6) for m in (1, 2, 2.5, 5, 10))


def test_the_rates_axis_has_five_ticks_and_a_scale_clips_to_its_ends() -> None:
    assert nice_ticks(0.0, 1.0) == [0.0, 0.25, 0.5, 0.75, 1.0]
    up = Scale(0.0, 1.0, 200.0, 100.0)  # an upward axis: 0 at the bottom
    assert (up(0.0), up(0.5), up(1.0), up(7.0), up(-3.0)) == (200.0, 150.0, 100.0, 100.0, 200.0)


def test_text_is_escaped_and_the_svg_is_well_formed() -> None:
    canvas = Canvas(100, 50, 'a"b')
    canvas.text(1, 2, "<script>alert(1)</script> & more")
    svg = canvas.render()
    root = ET.fromstring(svg)
    assert root.get("data-chart") == 'a"b'
    assert _texts(root, "text") == ["<script>alert(1)</script> & more"]
    assert "<script>" not in svg


def test_the_confusion_chart_stacks_each_origins_shares_to_its_count() -> None:
    svg = confusion_chart({"trusting": {"stale": {"misled": 3, "other": 1}, "genuine": {"other": 4}}})
    root = ET.fromstring(svg)
    tips = _texts(root, "title")
    assert tips == [
        "trusting, genuine: other 4 of 4",
        "trusting, stale: misled 3 of 4",
        "trusting, stale: other 1 of 4",
    ]
    bars = {tip: float(rect.get("height", "0")) for tip, rect in _titled(root).items()}
    assert math.isclose(bars["trusting, stale: misled 3 of 4"], 3 * bars["trusting, stale: other 1 of 4"], rel_tol=0.02)
    assert {"n=4"} == {t for t in _texts(root, "text") if t.startswith("n=")}


def test_the_healing_chart_draws_one_step_line_per_arm_ending_on_its_last_value() -> None:
    svg = healing_chart({"jit-verify": [0.0, 0.5, 1.0], "trusting": [0.0, 0.0, 0.0]})
    root = ET.fromstring(svg)
    assert len(list(root.iter(f"{_SVG}polyline"))) == 2
    tips = _texts(root, "title")
    assert tips == ["jit-verify: 1.000", "trusting: 0.000"]
    assert healing_chart({}) == ""
    assert confusion_chart({}) == ""
