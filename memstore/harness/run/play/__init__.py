"""Playing one unit: the trial loop, its hand-off to the grading, the audit of the store, a store per trial.

The loop (`loop`: `run_unit`) plays a unit's sessions and hands what it saw to the grading it is given
(`handoff`: `Played`, `Grading`, `GradingFactory`); `kept_world` plays one and keeps its world for a
grading that reads it afterwards. The audit (`audit`) checks every promise of the store contract;
`stores` opens each trial's store.
"""

from memstore.harness.run.play.audit import Breach, StoreAudit, breach_counts
from memstore.harness.run.play.handoff import Grading, GradingFactory, Played
from memstore.harness.run.play.loop import forget_templates, kept_world, run_unit
from memstore.harness.run.play.stores import check_store_uri, store_capabilities, store_profile, trial_store

__all__ = [
    "Breach",
    "Grading",
    "GradingFactory",
    "Played",
    "StoreAudit",
    "breach_counts",
    "check_store_uri",
    "forget_templates",
    "kept_world",
    "run_unit",
    "store_capabilities",
    "store_profile",
    "trial_store",
]
