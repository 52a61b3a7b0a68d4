"""The pytest plugin: memstore's gates as tests, in any project, through the same engine as ``memstore eval``.

In a project that holds nothing of memstore's, ``pytest --memstore-store URI`` (or
``--memstore-scenarios PATH``, or ``--memstore-gates``) collects one test per gate of the run
(`memstore.harness.report.suite`): ``memstore::jit-verify/URI::contract[forgotten]``,
``::no_harm``, ``::verifier[detection_recall]``, ``::baseline``... The run happens once, at the
first of them; each failed gate is a failed test with its message, so every failed gate is
listed; a gate the sample could not decide (inconclusive, with the tasks it would take; not
exercised, with what would exercise it) is a skipped test with that reason, and a failure under
``--memstore-strict``; a failed run's folder is kept and its path printed. The ``memstore_run`` fixture gives
the same run to tests of one's own.

Options (``--memstore-``, a bad one a usage error): stores, agents, scenarios, a sample, trials,
seed, workers, the baseline, negative controls (stores built to break the contract, gated on the
audit catching them), strictness, and where to keep the run folder. A kept folder
(``--memstore-report DIR``) is never resumed: a run of an earlier session there is replaced,
and the terminal says so (a cached folder in CI would otherwise pass a store whose code changed
on results it no longer earns), and a folder holding anything else is a usage error. Only
pytest is imported here: the harness is imported when a run is asked for, so the plugin costs
nothing in a pytest session that does not use it.
"""

from __future__ import annotations

import shutil
import tempfile
import uuid
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from memstore.errors import GateFailed, MemstoreError
from memstore.harness.pytest_options import add_options

if TYPE_CHECKING:
    from memstore.harness.analysis import ArmResult, RunResults
    from memstore.harness.evaluate import Evaluation
    from memstore.harness.report import Gate
    from memstore.harness.run import RunConfig
    from memstore.harness.runfolder import Baseline

__all__ = ["EvalRun", "GateItem", "enable_gates", "memstore_run"]

_RUN = pytest.StashKey["EvalRun"]()
_ENABLED = pytest.StashKey[bool]()
_FAILED = pytest.StashKey[list[str]]()
_SESSION = pytest.StashKey[str]()
_SESSION_INPUT = "memstore_session"  # the controller's session id, in each pytest-xdist worker's workerinput
SUITE = "memstore"  # the gate tests' node id: memstore::ARM::KEY


@dataclass
class EvalRun:
    """The session's evaluation (`evaluate`'s `Evaluation`), the baseline it is gated against,
    and every gate of the run (`memstore.harness.report.families.gates`)."""

    evaluation: Evaluation
    baseline: Baseline | None
    gates: list[Gate] = field(default_factory=list)

    @property
    def results(self) -> RunResults:
        return self.evaluation.results

    @property
    def config(self) -> RunConfig:
        return self.evaluation.config

    @property
    def folder(self) -> Path:
        return self.evaluation.folder

    def gates_at(self, arm: str, key: str) -> list[Gate]:
        """The gates of the test ``memstore::ARM::KEY``: memstore's gate ``key`` of ``arm`` (``baseline``:
        one per metric compared), or every gate a plug-in's family of that name made there."""
        from memstore.harness.report import PLANNED, RUN, family_gates

        if key == "baseline":
            return [g for g in self.gates if g.arm == arm and g.key.startswith("baseline[")]
        where = None if arm == RUN else arm
        made = None if key in PLANNED else family_gates(key, self.results, self.evaluation.baseline or (), where)
        return made if made is not None else [g for g in self.gates if g.arm == arm and g.key == key]

    def arm(self, agent: str) -> str:
        """The name of ``agent``'s arm on the first store evaluated."""
        return next(a.name for a in self.config.arms if a.agent == agent)

    def overall(self, agent: str) -> ArmResult:
        return self.results.arms[self.arm(agent)]


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


def enable_gates(config: pytest.Config) -> None:
    """Collect the gate tests in this session (for a conftest.py: ``def pytest_configure(config):
    enable_gates(config)``), as ``--memstore-gates`` does."""
    config.stash[_ENABLED] = True


def _wanted(config: pytest.Config) -> bool:
    return bool(
        config.stash.get(_ENABLED, False)
        or config.getoption("--memstore-gates")
        or config.getoption("--memstore-store")
        or config.getoption("--memstore-scenarios")
    )


def _run_config(config: pytest.Config) -> RunConfig:
    """The run the options describe: a `Recipe` with this plugin's defaults (two workers, fewer
    when the run has less work and none were asked for), built as ``memstore eval`` builds its own."""
    from memstore.harness.run import fitted_workers
    from memstore.harness.runfolder import DEFAULT_AGENTS, DEFAULT_STORE, Recipe

    stores = tuple(config.getoption("--memstore-store")) or (DEFAULT_STORE,)
    negative = tuple(config.getoption("--memstore-negative-control"))
    strangers = [uri for uri in negative if uri not in stores]
    if strangers:  # told with this plugin's option names
        raise pytest.UsageError(
            f"--memstore-negative-control names a store not evaluated: {', '.join(strangers)} "
            "(give it to --memstore-store)"
        )
    workers = config.getoption("--memstore-workers")
    recipe = Recipe(
        scenarios=tuple(str(path) for path in config.getoption("--memstore-scenarios")),
        stores=stores,
        agents=tuple(config.getoption("--memstore-agent")) or DEFAULT_AGENTS,
        trials=config.getoption("--memstore-trials"),
        seed=config.getoption("--memstore-seed"),
        workers=workers or 2,
        sample=config.getoption("--memstore-sample"),
        negative_controls=negative,
    )
    run = recipe.config()
    return run if workers else replace(run, workers=fitted_workers(run))  # left to its default: fitted


def _planned(run_config: RunConfig) -> list[tuple[str, str]]:
    """The suite's gates, (arm, key), from the arms' roles and their agents' declarations (no unit
    runs), a plug-in's gate families among them."""
    from memstore.harness.report import PlannedArm, every_family, plan
    from memstore.harness.run import agent_declares, arm_role, make_agent

    arms = []
    for arm in run_config.arms:
        agent = make_agent(arm.agent)
        verifies = bool(getattr(agent, "verifies", False))
        arms.append(PlannedArm(arm.name, arm_role(agent, arm), verifies, agent_declares(agent)))
    return plan(arms, every_family())


class _Suite(pytest.Collector):
    """The node the gate tests hang from (``memstore``)."""

    def collect(self) -> list[pytest.Item]:
        return []


class GateItem(pytest.Item):
    """One gate of the run: ``memstore::ARM::KEY``."""

    def __init__(self, *, arm: str, key: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.arm, self.key = arm, key

    def runtest(self) -> None:
        found = _the_run(self.config)
        mine = found.gates_at(self.arm, self.key)
        if not mine:
            raise GateFailed(f"{self.arm} {self.key}: this gate was planned but the run did not make it")
        strict = self.config.getoption("--memstore-strict")
        failed = [g for g in mine if g.failed or (strict and not g.passed)]
        if failed:
            self.config.stash.setdefault(_FAILED, []).append(self.nodeid)
            lines = [
                f"{g.name}: {g.outcome.value}: {g.message}" + (f"; {g.advice}" if g.advice else "") for g in failed
            ]
            raise GateFailed("\n".join([*lines, f"run folder (kept): {found.folder}"]))
        undecided = [g for g in mine if not g.passed]
        if undecided:
            pytest.skip("; ".join(_why(g) for g in undecided))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, GateFailed):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, 0, f"{SUITE}::{self.arm}::{self.key}"


def _why(gate: Gate) -> str:
    """A skipped gate's reason: what the sample could not decide and what would."""
    what = f"{gate.name}: {gate.outcome.value}: {gate.message}"
    return what + (f"; {gate.advice}" if gate.advice else "") + " (--memstore-strict fails it)"


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    if not _wanted(config):
        return
    suite = _Suite.from_parent(session, name=SUITE, nodeid=SUITE)
    asked = _asked(config)
    compared = set(asked.baseline.results.arms) if asked.baseline is not None else set()
    gates = [
        GateItem.from_parent(suite, name=f"{arm}::{key}", arm=arm, key=key)
        for arm, key in _planned(asked.config)
        if key != "baseline" or arm in compared
    ]
    collected: list[pytest.Item | pytest.Collector] = list(gates)
    config.hook.pytest_collectreport(report=pytest.CollectReport(SUITE, "passed", None, collected))  # counted
    items[:] = [*gates, *items]
    _waiting_last(items)


def _waiting_last(items: list[pytest.Item]) -> None:
    """The gates come first, so that the session's run starts first; the tests that read that run
    (its ``memstore_run`` fixture) come last, so that under pytest-xdist (``--dist loadfile``:
    the gates are one unit of work) no other worker waits for the run while it is made."""
    reading = [
        item for item in items if not isinstance(item, GateItem) and "memstore_run" in getattr(item, "fixturenames", ())
    ]
    if reading:
        kept = set(map(id, reading))
        items[:] = [*(item for item in items if id(item) not in kept), *reading]


@dataclass(frozen=True)
class _Asked:
    """The run the options ask for, and the baseline it is gated against (with why, when none)."""

    config: RunConfig
    baseline: Baseline | None
    note: str


_ASKED = pytest.StashKey[_Asked]()


def _asked(config: pytest.Config) -> _Asked:
    found = config.stash.get(_ASKED, None)
    if found is not None:
        return found
    from memstore.harness.run import check_config
    from memstore.harness.runfolder import load_baseline
    from memstore.harness.scenarios import scenario_set_hash

    baseline, note = None, ""
    baseline_file = config.getoption("--memstore-baseline")
    try:  # a bad option is the user's to fix: one line, as argparse gives, never an INTERNALERROR
        run_config = _run_config(config)
        check_config(run_config)  # an agent or store that cannot be used is an error at collection
        baseline = load_baseline(baseline_file) if baseline_file and baseline_file.exists() else None
    except (MemstoreError, ValueError) as exc:
        raise pytest.UsageError(f"memstore: {exc}") from exc
    if baseline is not None:
        if baseline.results.run.scenario_set_hash != scenario_set_hash(run_config.scenarios):
            baseline, note = None, f"the baseline {baseline_file} ran another scenario set: no regression gate"
    else:
        note = f"no baseline at {baseline_file} (--memstore-baseline RUN): no regression gate"
    found = _Asked(run_config, baseline, note)
    config.stash[_ASKED] = found
    return found


@pytest.fixture(scope="session")
def memstore_run(request: pytest.FixtureRequest) -> EvalRun:
    """The run of the options given (the shipped library by default), once for the whole session."""
    return _the_run(request.config)


def _the_run(config: pytest.Config) -> EvalRun:
    found = config.stash.get(_RUN, None)
    if found is not None:
        return found
    asked = _asked(config)
    run_config, baseline = asked.config, asked.baseline
    kept = config.getoption("--memstore-report")
    from memstore.harness.pytest_run import run_afresh, run_once

    if hasattr(config, "workerinput"):  # a pytest-xdist worker: one runs it, the others read its folder
        shared = Path(config.option.basetemp).parent  # this session's: pytest makes it anew for each
        evaluation = run_once(run_config, kept or shared / "memstore-evals", shared, _session_id(config), baseline)
    else:
        folder = kept or Path(tempfile.mkdtemp(prefix="memstore-evals-"))
        if kept is None:
            config.add_cleanup(lambda: None if config.stash.get(_FAILED, []) else shutil.rmtree(folder, True))
        evaluation = run_afresh(run_config, folder, baseline)
    found = EvalRun(evaluation, baseline, evaluation.gates)
    config.stash[_RUN] = found
    return found


def _session_id(config: pytest.Config) -> str:
    """This pytest session's id: made by the controller, handed to each pytest-xdist worker."""
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None:
        return str(workerinput.get(_SESSION_INPUT) or workerinput["testrunuid"])
    return config.stash.setdefault(_SESSION, uuid.uuid4().hex)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """pytest-xdist, in the controller: each worker gets the session's id."""
    node.workerinput[_SESSION_INPUT] = _session_id(node.config)


def pytest_report_header(config: pytest.Config) -> str | None:
    if not _wanted(config):
        return None
    stores = ", ".join(config.getoption("--memstore-store") or ["sqlite:"])
    return f"memstore: stores {stores}; seed {config.getoption('--memstore-seed')}; one test per gate"


@pytest.hookimpl(trylast=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    """In the controller, before anything is collected: a kept folder that is not a run folder
    is a usage error, and one holding an earlier session's run is said to be replaced."""
    config = session.config
    kept = config.getoption("--memstore-report")
    if kept is None or hasattr(config, "workerinput") or not _wanted(config):
        return
    from memstore.harness.pytest_run import earlier_run

    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if earlier_run(kept) and reporter is not None and not config.getoption("collectonly"):
        reporter.write_line(
            f"memstore: --memstore-report {kept} holds an earlier run: it is replaced by this session's"
        )


def pytest_collection_finish(session: pytest.Session) -> None:
    asked = session.config.stash.get(_ASKED, None)
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if asked is not None and asked.note and reporter is not None:
        reporter.write_line(f"memstore: {asked.note}")


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    found = config.stash.get(_RUN, None)
    if found is None:
        return
    failed = config.stash.get(_FAILED, [])
    undecided = sum(not g.decided for g in found.gates)
    verdict = f"{len(failed)} gate test(s) failed" if failed else "no gate test failed"
    if undecided:
        verdict += f"; {undecided} gate(s) undecided on this sample (skipped unless --memstore-strict)"
    elif not failed:
        verdict = "every gate test passed"
    kept = " (kept)" if failed or config.getoption("--memstore-report") else " (removed: nothing failed)"
    terminalreporter.write_line(f"memstore: {verdict}; run folder {found.folder}{kept}")
