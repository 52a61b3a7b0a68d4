"""The pytest plugin: ``pytest evals/`` runs the evaluation through the same engine as ``memstore eval``.

Options (all under ``--memstore-``): the store to evaluate, trials, seed, workers, the
baseline to gate against, and where to write the run folder with its reports. The run
happens once per test session (the ``memstore_run`` fixture) and the tests of ``evals/``
assert on its results, so ``pytest evals/ --memstore-store URI`` evaluates anyone's store.
"""

from __future__ import annotations

import fcntl
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from memstore.harness.analysis.model import ArmResult, RunResults
from memstore.harness.analysis.results import Baseline, load_baseline, load_results, load_tables
from memstore.harness.evaluate import Evaluation, evaluate
from memstore.harness.report import gates
from memstore.harness.run.agents import BUILT_IN
from memstore.harness.run.runner import RunConfig, iter_arms
from memstore.harness.scenarios.loader import load_library

__all__ = ["EvalRun", "memstore_run"]

_RUN = pytest.StashKey["EvalRun"]()


@dataclass
class EvalRun:
    """The session's evaluation (`evaluate`'s `Evaluation`) and the baseline it is gated against."""

    evaluation: Evaluation
    baseline: Baseline | None

    @property
    def results(self) -> RunResults:
        return self.evaluation.results

    @property
    def config(self) -> RunConfig:
        return self.evaluation.config

    @property
    def folder(self) -> Path:
        return self.evaluation.folder

    def arm(self, agent: str) -> str:
        """The name of ``agent``'s arm on the first store evaluated."""
        return next(a.name for a in self.config.arms if a.agent == agent)

    def overall(self, agent: str) -> ArmResult:
        return self.results.arms[self.arm(agent)]


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("memstore", "memstore evaluation (pytest evals/)")
    group.addoption(
        "--memstore-store",
        action="append",
        default=[],
        metavar="URI",
        help="store URI to evaluate; repeat to compare (default: sqlite:, the reference store)",
    )
    group.addoption(
        "--memstore-scenarios",
        action="append",
        default=[],
        metavar="PATH",
        help="scenario file or folder to run; repeat for several (default: the shipped library)",
    )
    group.addoption("--memstore-trials", type=int, default=1, metavar="N", help="trials per scenario (default: 1)")
    group.addoption("--memstore-seed", type=int, default=0, metavar="S", help="run seed (default: 0)")
    group.addoption("--memstore-workers", type=int, default=2, metavar="N", help="processes (default: 2)")
    group.addoption(
        "--memstore-baseline",
        type=Path,
        default=Path("reports/baseline"),
        metavar="RUN",
        help="run folder (or results.json) to gate regressions against, task by task (default: reports/baseline)",
    )
    group.addoption(
        "--memstore-report",
        type=Path,
        default=None,
        metavar="DIR",
        help="keep the run folder and its reports here (default: a temporary folder, removed after the session)",
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
        scenarios=tuple(load_library(config.getoption("--memstore-scenarios"))),
        arms=tuple(iter_arms(BUILT_IN, stores)),
        trials=config.getoption("--memstore-trials"),
        seed=config.getoption("--memstore-seed"),
        workers=config.getoption("--memstore-workers"),
    )
    kept = config.getoption("--memstore-report")
    baseline_file = config.getoption("--memstore-baseline")
    baseline = load_baseline(baseline_file) if baseline_file and baseline_file.exists() else None
    if hasattr(config, "workerinput"):  # a pytest-xdist worker: one runs it, the others read its folder
        shared = request.getfixturevalue("tmp_path_factory").getbasetemp().parent
        found = EvalRun(_once(run_config, kept or shared / "memstore-evals", shared / "memstore-evals.lock"), baseline)
    else:
        folder = kept or Path(tempfile.mkdtemp(prefix="memstore-evals-"))
        if kept is None:
            config.add_cleanup(lambda: shutil.rmtree(folder, ignore_errors=True))
        found = EvalRun(evaluate(run_config, folder), baseline)
    config.stash[_RUN] = found
    return found


def _once(config: RunConfig, folder: Path, lock: Path) -> Evaluation:
    """The run of ``config`` in ``folder``, made by the first pytest-xdist worker that asks for it
    (under a file lock) and read back from the folder by the others (pytest removes the folder
    with its other old temporary folders)."""
    done = folder / ".memstore-evals-done"
    with lock.open("w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        if not done.exists():
            evaluation = evaluate(config, folder)
            done.write_text("", encoding="utf-8")
            return evaluation
    results, tables = load_results(folder), load_tables(folder)
    failures = tables["failures"].to_dict("records") if not tables["failures"].empty else []
    return Evaluation(config, results, tables, gates(results), [], failures, folder, 0.0)


def pytest_report_header(config: pytest.Config) -> str:
    stores = ", ".join(config.getoption("--memstore-store") or ["sqlite:"])
    return f"memstore: stores {stores}; seed {config.getoption('--memstore-seed')}"
