"""The pytest plugin's run: made once per session, in a folder of its own, never resumed.

A session's run goes to a temporary folder or to the one ``--memstore-report DIR`` keeps. A kept
folder is an output, as ``--junitxml`` is: a run an earlier session left there (a folder a CI
cache restored) is replaced, never resumed, because a unit's shard is named by memstore's
version, the scenario, the agent and the store's URI, not by the store's code; resuming would
pass a store that now breaks a promise on what an earlier version of it earned. A folder that
holds anything but a run folder's files is refused, never overwritten.

Under pytest-xdist the first worker to ask makes the run and marks it done with the session's
id (the controller's, handed to every worker); the others read it back. A mark left by another
session is not this session's run.
"""

from __future__ import annotations

import fcntl
from pathlib import Path

import pytest

from memstore.errors import RunFolderError
from memstore.harness.analysis import compare_runs
from memstore.harness.evaluate import Evaluation, evaluate
from memstore.harness.records import FailureRecord, from_row
from memstore.harness.report import gates
from memstore.harness.run import RunConfig
from memstore.harness.runfolder import Baseline, hold, holds_a_run, load_results, load_tables, prepare_folder

__all__ = ["earlier_run", "run_afresh", "run_once"]


def earlier_run(kept: Path) -> bool:
    """Whether the kept folder holds an earlier session's run (which this session replaces).

    Raises:
        pytest.UsageError: it holds what is not a run folder's.
    """
    try:
        return holds_a_run(kept)
    except RunFolderError as exc:
        raise pytest.UsageError(f"--memstore-report {kept}: {exc}") from exc


def run_afresh(config: RunConfig, folder: Path, baseline: Baseline | None) -> Evaluation:
    """The run of ``config`` in ``folder``, an earlier session's run there replaced first."""
    with hold(folder):  # before it is cleared: a folder another process is running in is refused
        prepare_folder(folder, overwrite=True)
        return evaluate(config, folder, baseline=baseline)


def run_once(config: RunConfig, folder: Path, shared: Path, session: str, baseline: Baseline | None) -> Evaluation:
    """The run of ``config`` in ``folder``, made by the first pytest-xdist worker that asks for it
    (under a file lock in ``shared``, the session's own folder) and read back by the others once
    this ``session`` marked it done (pytest removes ``shared`` with its other old temporary
    folders, three sessions later)."""
    done = shared / "memstore-evals.done"
    with (shared / "memstore-evals.lock").open("w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        if not done.is_file() or done.read_text(encoding="utf-8") != session:
            evaluation = run_afresh(config, folder, baseline)
            done.write_text(session, encoding="utf-8")
            return evaluation
    results, tables = load_results(folder), load_tables(folder)
    failures = [from_row(FailureRecord, r) for r in tables["failures"].astype(object).fillna("").to_dict("records")]
    against = []
    if baseline is not None:
        against = compare_runs(
            results, baseline.results, current_sessions=tables["sessions"], baseline_sessions=baseline.sessions
        )
    return Evaluation(config, results, tables, gates(results, against), against, failures, folder, 0.0)
