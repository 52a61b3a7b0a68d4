"""Analysis: the tables of a run in, its metrics, comparisons and typed results out.

The metric registry (`metric_registry`: `@metric`, `Slice`, `registered_metrics`) and memstore's own
metrics (`metrics`, `consistency`, `health`, `usage`, in `shipped`'s order), pairs of arms (`pairs`), the
comparisons (`compare`), anytime-valid sequences (`sequential`, `anytime`), the charts' data (`curves`) and
the results as values (`run_results`: `RunResults`).
"""

from memstore.harness.analysis.anytime import anytime_intervals, sequential_order
from memstore.harness.analysis.compare import (
    FAMILIES,
    MIN_EFFECT,
    OUTCOMES,
    compare_groups,
    compare_runs,
    compare_within,
    lower_is_better,
)
from memstore.harness.analysis.curves import confusion, healing_curves
from memstore.harness.analysis.metric_registry import (
    Direction,
    Level,
    Metric,
    Slice,
    Test,
    metric,
    metric_table,
    registered_metrics,
)
from memstore.harness.analysis.metrics import compute
from memstore.harness.analysis.pairs import STRATA
from memstore.harness.analysis.run_results import ArmResult, Comparison, ComparisonVerdict, Rate, RunResults, Value
from memstore.harness.analysis.sequential import (
    SequentialDecision,
    harm_seen_decision,
    no_harm_decision,
    paired_difference_cs_path,
    rate_cs,
    rate_decision,
)

__all__ = [
    "FAMILIES",
    "MIN_EFFECT",
    "OUTCOMES",
    "STRATA",
    "ArmResult",
    "Comparison",
    "ComparisonVerdict",
    "Direction",
    "Level",
    "Metric",
    "Rate",
    "RunResults",
    "SequentialDecision",
    "Slice",
    "Test",
    "Value",
    "anytime_intervals",
    "compare_groups",
    "compare_runs",
    "compare_within",
    "compute",
    "confusion",
    "harm_seen_decision",
    "healing_curves",
    "lower_is_better",
    "metric",
    "metric_table",
    "no_harm_decision",
    "paired_difference_cs_path",
    "rate_cs",
    "rate_decision",
    "registered_metrics",
    "sequential_order",
]
