"""memstore's own metrics, in the order they register: the order of results.json's comparisons,
the reports' columns and ``memstore metrics`` (the ``shipped`` entry point of ``memstore.metrics``).

Outcomes and memory first, then repeatability across trials, the store's invariants and costs,
and what the agents spent.
"""

# isort: off
from memstore.harness.analysis import metrics
from memstore.harness.analysis import consistency
from memstore.harness.analysis import health
from memstore.harness.analysis import usage

# isort: on

__all__ = ["consistency", "health", "metrics", "usage"]
