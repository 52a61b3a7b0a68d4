"""The runner: what to run, checked once, and the units run on a pool of processes or on Ray.

What to run (`config`: `RunConfig`), what the arms declare (`declarations`), the pool (`pool`: `run`) and the
executors (`executors`).
"""

from memstore.harness.run.runner.config import RunConfig
from memstore.harness.run.runner.declarations import Declared, check_config, declared
from memstore.harness.run.runner.executors import RayExecutor, check_executor
from memstore.harness.run.runner.pool import fitted_workers, iter_arms, merge_outputs, run, units

__all__ = [
    "Declared",
    "RayExecutor",
    "RunConfig",
    "check_config",
    "check_executor",
    "declared",
    "fitted_workers",
    "iter_arms",
    "merge_outputs",
    "run",
    "units",
]
