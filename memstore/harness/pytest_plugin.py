"""The pytest plugin: ``pytest evals/`` runs the evaluation through the same engine as ``memstore eval``.

Options (all under ``--memstore-``): the store to evaluate, trials, seed, workers, the
baseline to gate against, and where to write the run folder with its reports. The run
happens once per test session (the ``memstore_run`` fixture) and the tests of ``evals/``
assert on its results, so ``pytest evals/ --memstore-store URI`` evaluates anyone's store.
"""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from memstore.harness.analysis.results import write_run
from memstore.harness.loader import load_library
from memstore.harness.report import gates, write_reports
from memstore.harness.run.agents import AGENTS
from memstore.harness.run.runner import RunConfig, iter_arms, run

__all__ = ["EvalRun", "memstore_run"]

_RUN = pytest.StashKey["EvalRun"]()


@dataclass
class EvalRun:
    """The session's evaluation: its config, results, tables and run folder."""

    config: RunConfig
    results: dict[str, Any]
    tables: dict[str, pd.DataFrame]
    folder: Path
    baseline: Path | None

    def arm(self, agent: str) -> str:
        """The name of ``agent``'s arm on the first store evaluated."""
        return next(a.name for a in self.config.arms if a.agent == agent)

    def overall(self, agent: str) -> dict[str, Any]:
        return self.results["arms"][self.arm(agent)]["overall"]  # type: ignore[no-any-return]


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("memstore", "memstore evaluation (pytest evals/)")
    group.addoption(
        "--memstore-store",
        action="append",
        default=[],
        metavar="URI",
        help="store URI to evaluate; repeat to compare (default: sqlite:, the reference store)",
    )
    group.addoption("--memstore-trials", type=int, default=1, metavar="N", help="trials per scenario (default: 1)")
    group.addoption("--memstore-seed", type=int, default=0, metavar="S", help="run seed (default: 0)")
    group.addoption("--memstore-workers", type=int, default=2, metavar="N", help="processes (default: 2)")
    group.addoption(
        "--memstore-baseline",
        type=Path,
        default=Path("reports/baseline.json"),
        metavar="RESULTS",
        help="results.json to gate regressions against (default: reports/baseline.json)",
    )
    group.addoption(
        "--memstore-report",
        type=Path,
        default=None,
        metavar="DIR",
        help="write the run folder and its reports here (default: a temporary folder)",
    )


@pytest.fixture(scope="session")
def memstore_run(request: pytest.FixtureRequest) -> EvalRun:
    """Run the default scenario library once for the whole test session."""
    config = request.config
    found = config.stash.get(_RUN, None)
    if found is not None:
        return found
    stores = tuple(config.getoption("--memstore-store") or ["sqlite:"])
    run_config = RunConfig(
        scenarios=tuple(load_library()),
        arms=tuple(iter_arms(tuple(AGENTS), stores)),
        trials=config.getoption("--memstore-trials"),
        seed=config.getoption("--memstore-seed"),
        workers=config.getoption("--memstore-workers"),
    )
    folder = config.getoption("--memstore-report") or Path(tempfile.mkdtemp(prefix="memstore-evals-"))
    started = time.perf_counter()
    output = run(run_config)
    results, tables = write_run(folder, run_config, output, seconds=time.perf_counter() - started)
    write_reports(folder, results, tables, gates(results))
    baseline = config.getoption("--memstore-baseline")
    found = EvalRun(run_config, results, tables, folder, baseline if baseline and baseline.exists() else None)
    config.stash[_RUN] = found
    return found


def pytest_report_header(config: pytest.Config) -> str:
    stores = ", ".join(config.getoption("--memstore-store") or ["sqlite:"])
    return f"memstore: stores {stores}; seed {config.getoption('--memstore-seed')}"
