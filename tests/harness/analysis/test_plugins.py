"""Metrics and charts from other packages: a module named in the ``memstore.metrics`` or
``memstore.charts`` entry-point group is imported on first use, and what its decorators register
joins the built-ins (in results.json, the reports, the comparisons: every reader asks the registry)."""

from __future__ import annotations

from importlib.metadata import EntryPoint
from pathlib import Path

import pandas as pd
import pytest

from memstore.errors import ConfigurationError
from memstore.harness.analysis.registry import METRICS, Slice, metrics
from memstore.harness.report.charts import CHART_REGISTRY, every_chart

PLUGIN = """
from memstore.harness.analysis.registry import Direction, metric
from memstore.harness.report.charts import chart


@metric("sessions_seen", label="seen", counts="sessions the plug-in saw", direction=Direction.HIGHER, rate=False)
def sessions_seen(found):
    return len(found.sessions)


@chart("plugin_chart", title="A plug-in's chart", note="drawn from the results")
def plugin_chart(data):
    return "<svg data-plugin='yes'></svg>"
"""


@pytest.fixture
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "team_metrics.py").write_text(PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    for registry, group in ((METRICS, "memstore.metrics"), (CHART_REGISTRY, "memstore.charts")):
        monkeypatch.setattr(registry, "registered", dict(registry.registered))
        monkeypatch.setattr(registry, "_loaded", False)
        entry = EntryPoint(name="team", value="team_metrics", group=group)
        monkeypatch.setattr(registry, "_entry_points", lambda entry=entry: {"team": entry})


def test_a_metric_and_a_chart_of_another_package_join_the_built_ins(plugin: None) -> None:
    names = [m.name for m in metrics()]
    assert names[-1] == "sessions_seen"
    assert len(names) == len(set(names)) > 40
    empty = pd.DataFrame()
    found = Slice(pd.DataFrame({"arm": ["a", "a"]}), empty, empty, empty, empty)
    assert METRICS.registered["sessions_seen"].compute(found) == 2
    charts = every_chart()
    assert [c.name for c in charts][-1] == "plugin_chart"
    assert charts[-1].draw(None) == "<svg data-plugin='yes'></svg>"  # type: ignore[arg-type]


def test_a_plugin_that_cannot_be_loaded_is_a_configuration_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(METRICS, "registered", dict(METRICS.registered))
    monkeypatch.setattr(METRICS, "_loaded", False)
    entry = EntryPoint(name="broken", value="no_such_metrics_module", group="memstore.metrics")
    monkeypatch.setattr(METRICS, "_entry_points", lambda: {"broken": entry})
    with pytest.raises(ConfigurationError, match=r"the metric plug-in 'broken' .* cannot be loaded"):
        metrics()
