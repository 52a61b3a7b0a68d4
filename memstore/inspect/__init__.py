"""memstore in inspect_ai: the scenarios as an inspect task, and inspect eval logs compared as memstore compares runs.

The task (`task`: ``memstore_task``, registered for ``inspect eval memstore/memstore_task``) is one
sample a scenario (`samples`), played by its solver (`task.play`: inspect's model through each
session's tools, `sessions` and `tools`, or any memstore agent) and graded by its scorer
(`task.memstore_scorer`) with memstore's own grading, from the world the sessions left, after the
sample ran (`deferred`). ``memstore compare`` reads two or more eval logs (`logs`) as runs and gives
memstore's paired tests, intervals, gates and reports.

The task's names load on first use: they need inspect-ai (``pip install 'agent-memstore[inspect]'``),
and comparing logs needs it only to read them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from memstore.inspect.logs import EXTRA, compare_logs, is_inspect_log, log_baselines, read_log

if TYPE_CHECKING:
    from memstore.inspect.sessions import SolverAgent, tool_loop
    from memstore.inspect.task import memstore_scorer, memstore_task, play

__all__ = [
    "EXTRA",
    "SolverAgent",
    "compare_logs",
    "is_inspect_log",
    "log_baselines",
    "memstore_scorer",
    "memstore_task",
    "play",
    "read_log",
    "tool_loop",
]

_LAZY = {
    "SolverAgent": "memstore.inspect.sessions",
    "tool_loop": "memstore.inspect.sessions",
    "memstore_scorer": "memstore.inspect.task",
    "memstore_task": "memstore.inspect.task",
    "play": "memstore.inspect.task",
}


def __getattr__(name: str) -> Any:
    """A name of the task's modules, imported the first time it is asked for (they import inspect-ai)."""
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_LAZY[name]), name)
    globals()[name] = value
    return value
