"""The run folder: what a run is (`recipe`: the `Recipe` of its options and the one builder of its
`RunConfig`), the folder the commands open (`folder`: `RunFolder`), its ``manifest.json`` and
the folder rules (`manifest`), each finished unit (`shards`), the tables and ``results.json``
(`results`), all in a versioned format (`memstore.harness.records.FORMAT`) read back through
`memstore.harness.records.upgrade`.

The one library the CLI, the pytest plugin and `memstore.harness.evaluate` use for run folders:
resume (``--resume``), parts run on several machines and assembled (``memstore merge``), the
rule that a folder which is not a run folder is never overwritten, one process at a time in a
folder (`lock`), and files written whole or not at all (`atomic`).

The tables and ``results.json`` (`results`) load on first use: they import pandas, which a
command that only opens a folder or prints its help does not need.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from memstore.harness.runfolder.atomic import whole
from memstore.harness.runfolder.folder import RunFolder
from memstore.harness.runfolder.lock import hold
from memstore.harness.runfolder.manifest import holds_a_run, prepare_folder
from memstore.harness.runfolder.recipe import DEFAULT_AGENTS, DEFAULT_STORE, Recipe
from memstore.harness.runfolder.shards import run_in_folder

if TYPE_CHECKING:
    from memstore.harness.runfolder.results import (
        Baseline,
        check_same_scenarios,
        frames_of,
        load_baseline,
        load_results,
        load_tables,
        write_run,
    )

__all__ = [
    "DEFAULT_AGENTS",
    "DEFAULT_STORE",
    "Baseline",
    "Recipe",
    "RunFolder",
    "check_same_scenarios",
    "frames_of",
    "hold",
    "holds_a_run",
    "load_baseline",
    "load_results",
    "load_tables",
    "prepare_folder",
    "run_in_folder",
    "whole",
    "write_run",
]

_LAZY = ("Baseline", "check_same_scenarios", "frames_of", "load_baseline", "load_results", "load_tables", "write_run")


def __getattr__(name: str) -> Any:
    """A name of `results`, imported the first time it is asked for."""
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module("memstore.harness.runfolder.results"), name)
    globals()[name] = value
    return value
