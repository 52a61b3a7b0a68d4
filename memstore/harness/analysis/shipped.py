"""memstore's own metrics (the ``shipped`` entry point of ``memstore.metrics``): importing this
module imports each of their modules (`memstore.harness.analysis.metric_registry.SHIPPED`), whose
decorators register them. Their order is `SHIPPED`'s, whichever of them was imported first: outcomes
and memory first, then repeatability across trials, the store's invariants and costs, and what the
agents spent.
"""

import importlib

from memstore.harness.analysis.metric_registry import SHIPPED

__all__: list[str] = []

for _module in SHIPPED:
    importlib.import_module(_module)
