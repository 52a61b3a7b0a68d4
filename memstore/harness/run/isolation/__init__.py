"""Isolation: what keeps an agent's process, and what it writes, from reaching the harness.

The sandbox (`sandbox`: bubblewrap, the relay, `run_isolated`), the bounded process and its supervisor
(`process`, `reaper`), the write budget (`writes`), the store guard (`guard`) and the run's scratch space
(`scratch`).
"""

from memstore.harness.run.isolation.guard import StoreGuard
from memstore.harness.run.isolation.process import Finished, gunzip_bounded, read_bounded, run_bounded
from memstore.harness.run.isolation.sandbox import (
    DEFAULT_TIMEOUT,
    AgentRuntime,
    Network,
    SandboxMode,
    resolve_mode,
    run_isolated,
)
from memstore.harness.run.isolation.scratch import clean_stale, release_all, scratch_base
from memstore.harness.run.isolation.writes import DIFF_CAP, MAX_FILE_BYTES, WRITE_BUDGET, WriteBudget, overrun, stamps

__all__ = [
    "DEFAULT_TIMEOUT",
    "DIFF_CAP",
    "MAX_FILE_BYTES",
    "WRITE_BUDGET",
    "AgentRuntime",
    "Finished",
    "Network",
    "SandboxMode",
    "StoreGuard",
    "WriteBudget",
    "clean_stale",
    "gunzip_bounded",
    "overrun",
    "read_bounded",
    "release_all",
    "resolve_mode",
    "run_bounded",
    "run_isolated",
    "scratch_base",
    "stamps",
]
