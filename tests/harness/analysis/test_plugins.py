"""Metrics and charts from other packages: a module named in the ``memstore.metrics`` or
``memstore.charts`` entry-point group of an installed distribution is imported on first use, and
what its decorators register joins the built-ins (in results.json, the reports, the comparisons:
every reader asks the registry)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from memstore.errors import ConfigurationError
from memstore.harness.analysis.metric_registry import METRICS, Slice, registered_metrics
from memstore.harness.report.charts import CHART_REGISTRY, every_chart
from tests.distributions import install

PLUGIN = """
from memstore.harness.analysis.metric_registry import Direction, metric
from memstore.harness.report.charts import chart


@metric("sessions_seen", label="seen", counts="sessions the plug-in saw", direction=Direction.HIGHER, rate=False)
def sessions_seen(found):
    return len(found.sessions)


@chart("plugin_chart", title="A plug-in's chart", note="drawn from the results")
def plugin_chart(data):
    return "<svg data-plugin='yes'></svg>"
"""


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    """The registries with the built-ins loaded, to be loaded again (a plug-in's join them) and restored after."""
    registered_metrics(), every_chart()
    for registry in (METRICS, CHART_REGISTRY):
        monkeypatch.setattr(registry, "registered", dict(registry.registered))
        monkeypatch.setattr(registry, "_loaded", False)


def test_a_metric_and_a_chart_of_another_package_join_the_built_ins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh: None
) -> None:
    groups = {"memstore.metrics": {"team": "team_metrics"}, "memstore.charts": {"team": "team_metrics"}}
    install(tmp_path, "team-metrics", groups, monkeypatch, modules={"team_metrics": PLUGIN})
    names = [m.name for m in registered_metrics()]
    assert names[-1] == "sessions_seen"
    assert len(names) == len(set(names)) > 40
    empty = pd.DataFrame()
    found = Slice(pd.DataFrame({"arm": ["a", "a"]}), empty, empty, empty, empty)
    assert METRICS.registered["sessions_seen"].compute(found) == 2
    charts = every_chart()
    assert [c.name for c in charts][-1] == "plugin_chart"
    assert charts[-1].draw(None) == "<svg data-plugin='yes'></svg>"  # type: ignore[arg-type]


def test_a_plugin_that_cannot_be_loaded_is_a_configuration_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh: None
) -> None:
    install(tmp_path, "broken-metrics", {"memstore.metrics": {"broken": "no_such_metrics_module"}}, monkeypatch)
    with pytest.raises(
        ConfigurationError, match=r"the metric plug-in 'broken' .* from broken-metrics\) cannot be loaded"
    ):
        registered_metrics()


ORDER_PROBE = """
import importlib, sys
for name in sys.argv[1:]:
    importlib.import_module(name)
from memstore.harness.analysis.metric_registry import registered_metrics
print(" ".join(m.name for m in registered_metrics()))
"""


def test_memstores_own_metrics_come_first_in_their_order_whatever_was_imported_first(tmp_path: Path) -> None:
    import subprocess
    import sys

    from memstore.harness.analysis.metric_registry import SHIPPED

    usual = [m.name for m in registered_metrics() if m.compute.__module__ in SHIPPED]
    assert usual[0] == "task_success_rate"
    (tmp_path / "early_metrics.py").write_text(PLUGIN.replace("sessions_seen", "early_seen"))
    first = (  # a plug-in's module imported before memstore's own registered theirs, and theirs backwards
        "early_metrics",
        "memstore.harness.analysis.usage",
        "memstore.harness.analysis.health",
        "memstore.harness.analysis.consistency",
    )
    env = {"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"}
    argv = [sys.executable, "-c", ORDER_PROBE, *first]
    listed = subprocess.run(argv, capture_output=True, text=True, check=True, env=env).stdout.split()
    assert listed == [*usual, "early_seen"]
