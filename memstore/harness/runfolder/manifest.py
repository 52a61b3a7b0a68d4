"""Run folders: what a run is (its `Recipe`), written first as ``manifest.json``, so a run can be
resumed (``memstore eval --resume``), split across machines (``--part``) and assembled
(``memstore merge``); and the folder rules (never overwrite what is not a run folder)."""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import asdict, dataclass, fields
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memstore.errors import ConfigurationError, RunFolderError, ScenarioError
from memstore.harness.run.agents import split_params, with_params
from memstore.harness.run.output import TABLES
from memstore.harness.run.process import read_bounded
from memstore.harness.run.records import FORMAT
from memstore.harness.run.runner import RunConfig, iter_arms
from memstore.harness.run.sandbox import DEFAULT_TIMEOUT, AgentRuntime, Network, SandboxMode
from memstore.harness.runfolder.lock import LOCK
from memstore.harness.runfolder.shards import ENGINE
from memstore.harness.scenarios.data import scenario_set_hash
from memstore.harness.scenarios.loader import load_library
from memstore.harness.scenarios.model import Scenario
from memstore.harness.scenarios.sample import sample_tasks
from memstore.uri import StoreURI

__all__ = [
    "DEFAULT_AGENTS",
    "DEFAULT_STORE",
    "Recipe",
    "RunFolderError",
    "build_config",
    "holds_a_run",
    "new_folder",
    "parse_timeouts",
    "prepare_folder",
    "read_manifest",
    "write_manifest",
]

DEFAULT_AGENTS = ("no-memory", "trusting", "blind-trusting", "jit-verify")  # every stub, by its plug-in name
DEFAULT_STORE = "sqlite:"
MANIFEST = "manifest.json"
_MANIFEST_CAP = 16 * 1024 * 1024
# What decides the units and their outcomes: a resumed or merged run must agree on all of it.
IDENTITY = ("scenarios", "stores", "agents", "trials", "seed", "limit", "agent_params", "sample")


def parse_timeouts(values: tuple[str, ...]) -> tuple[float, tuple[tuple[str, float], ...]]:
    """``--agent-timeout`` values: ``SECONDS`` for every agent, ``AGENT=SECONDS`` for one."""
    default, per_agent = None, []
    for value in values:
        agent, _, seconds = value.rpartition("=") if "=" in value else ("", "", value)
        try:
            number = float(seconds)
        except ValueError as exc:
            raise ConfigurationError(f"--agent-timeout {value!r}: give SECONDS or AGENT=SECONDS") from exc
        if not 0 < number <= 86_400:
            raise ConfigurationError(f"--agent-timeout {value!r}: seconds from 0 to 86400")
        if agent:
            per_agent.append((agent, number))
        else:
            default = number

    return (default if default is not None else DEFAULT_TIMEOUT), tuple(per_agent)


def build_config(
    scenarios: tuple[Path, ...],
    stores: tuple[str, ...],
    agents: tuple[str, ...],
    trials: int,
    seed: int,
    workers: int,
    limit: int,
    agent_params: tuple[str, ...],
    agent_timeouts: tuple[str, ...],
    isolation: tuple[str, str, tuple[str, ...]] = ("auto", "none", ()),
    max_cost: float | None = None,
    executor: str = "local",
    sample: int = 0,
    *,
    negative: tuple[str, ...] = (),
    sequential: tuple[bool, int] = (False, 0),
) -> RunConfig:
    """The run the options describe (scenarios loaded and checked as files); the stores of
    ``negative`` are negative controls (each must be one of ``stores``)."""

    timeout, per_agent = parse_timeouts(agent_timeouts)
    sandbox, network, env_names = isolation
    missing = [name for name in env_names if name not in os.environ]
    if missing:
        raise ConfigurationError(f"--agent-env names variables this environment does not set: {', '.join(missing)}")
    runtime = AgentRuntime(
        timeout=timeout,
        base_dir=Path.cwd(),
        sandbox=SandboxMode(sandbox),
        network=Network(network),
        env=tuple(env_names),
    )
    library, sampled = _library(scenarios, sample, seed)
    _check_choices(stores or (DEFAULT_STORE,), negative, sequential)
    specs = [with_params(spec, agent_params) for spec in agents or DEFAULT_AGENTS]
    config = RunConfig(
        scenarios=library,
        arms=tuple(iter_arms(specs, stores or (DEFAULT_STORE,), negative)),
        trials=trials,
        seed=seed,
        workers=workers,
        limit=limit,
        runtime=runtime,
        agent_timeouts=per_agent,
        max_cost=max_cost,
        executor=executor,
        sample=sampled,
        sequential=sequential[0],
        max_sessions=sequential[1],
    )
    unknown = sorted(
        {agent for agent, _ in per_agent} - {a for arm in config.arms for a in (arm.agent, split_params(arm.agent)[0])}
    )
    if unknown:
        raise ConfigurationError(f"--agent-timeout names agent(s) not in this run: {', '.join(unknown)}")
    return config


def _library(scenarios: tuple[Path, ...], sample: int, seed: int) -> tuple[tuple[Scenario, ...], str]:
    """The scenarios named (the shipped library for none), sampled when asked, and how."""
    try:
        library = tuple(load_library(scenarios))
    except ScenarioError as exc:
        raise ConfigurationError(f"the scenarios have problems; run `memstore scenarios validate`:\n{exc}") from exc
    if not sample:
        return library, ""
    chosen, drawn = sample_tasks(library, sample, seed)
    return tuple(chosen), drawn.describe()


def _check_choices(stores: tuple[str, ...], negative: tuple[str, ...], sequential: tuple[bool, int]) -> None:
    """The run's own choices hold together: a negative control is a store it evaluates, and a
    session budget goes with a sequential run."""
    strangers = [uri for uri in negative if uri not in stores]
    if strangers:
        raise ConfigurationError(
            f"--negative-control names a store this run does not evaluate: {', '.join(strangers)} (give it to --store)"
        )
    if sequential[1] and not sequential[0]:
        raise ConfigurationError("--max-sessions goes with --sequential (a fixed run has --max-cost)")


@dataclass(frozen=True)
class Recipe:
    """A run as its options describe it (what ``manifest.json`` keeps)."""

    scenarios: tuple[str, ...] = ()  # files or folders, absolute; none: the shipped library
    stores: tuple[str, ...] = ()
    agents: tuple[str, ...] = ()
    trials: int = 1
    seed: int = 0
    workers: int = 1
    limit: int = 50
    agent_params: tuple[str, ...] = ()
    agent_timeouts: tuple[str, ...] = ()
    agent_sandbox: str = "auto"
    agent_network: str = "none"
    agent_env: tuple[str, ...] = ()
    max_cost: float | None = None
    executor: str = "local"
    sample: int = 0  # tasks drawn from the scenarios (seeded, stratified); 0: every task
    negative_controls: tuple[str, ...] = ()  # stores the person running says are built to break the contract
    sequential: bool = False  # scenarios in a seeded order, stopping when every gate is decided
    max_sessions: int = 0  # with sequential: stop after this many sessions (0: no cap)

    def config(self) -> RunConfig:
        """The run (scenarios loaded and checked as files)."""
        return build_config(
            tuple(Path(p) for p in self.scenarios),
            self.stores,
            self.agents,
            self.trials,
            self.seed,
            self.workers,
            self.limit,
            self.agent_params,
            self.agent_timeouts,
            (self.agent_sandbox, self.agent_network, self.agent_env),
            self.max_cost,
            self.executor,
            self.sample,
            negative=self.negative_controls,
            sequential=(self.sequential, self.max_sessions),
        )

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Recipe:
        """The recipe a manifest holds.

        Raises:
            ValueError: a field of the wrong type (a manifest from elsewhere, or edited).
        """
        if not isinstance(data, dict):
            raise ValueError("the recipe is not an object")
        values: dict[str, Any] = {}
        for f in fields(cls):
            if f.name not in data:
                continue
            value, kind = data[f.name], str(f.type)
            if kind.startswith("tuple"):
                ok = isinstance(value, list) and all(isinstance(v, str) for v in value)
                value = tuple(value) if ok else value
            elif kind == "int":
                ok = isinstance(value, int) and not isinstance(value, bool)
            elif kind == "bool":
                ok = isinstance(value, bool)
            elif kind.startswith("float"):
                ok = value is None or (isinstance(value, int | float) and not isinstance(value, bool))
            else:
                ok = isinstance(value, str)
            if not ok:
                raise ValueError(f"recipe.{f.name} must be {kind}, not {type(value).__name__}")
            values[f.name] = value
        return cls(**values)

    def identity(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if k in IDENTITY}


def write_manifest(folder: Path, recipe: Recipe, config: RunConfig) -> None:
    """Record what the run is, before any unit runs."""
    folder.mkdir(parents=True, exist_ok=True)
    written = recipe.to_json()
    # No password is written to disk: a resumed run connects with PGPASSWORD or ~/.pgpass.
    written["stores"] = [StoreURI.parse(s).identity for s in written["stores"]]
    data = {
        "format": FORMAT,
        "engine": ENGINE,
        "recipe": written,
        "scenario_set_hash": scenario_set_hash(config.scenarios),
    }
    partial = folder / f".{MANIFEST}.part"
    partial.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    partial.replace(folder / MANIFEST)


def read_manifest(folder: Path) -> tuple[Recipe, RunConfig]:
    """The recipe of a run folder and its run, checked against what made the folder.

    Raises:
        RunFolderError: a folder with no manifest, of another engine, or whose scenarios changed.
    """
    try:
        data = json.loads(read_bounded(folder / MANIFEST, cap=_MANIFEST_CAP))
        recipe = Recipe.from_json(data["recipe"])
    except (OSError, ValueError, KeyError, TypeError, RecursionError) as exc:
        raise RunFolderError(
            f"{folder} is not a run folder made by memstore eval (no readable {MANIFEST}: {exc})"
        ) from exc
    if data.get("engine") != ENGINE:
        raise RunFolderError(f"{folder} was made by {data.get('engine')}, not {ENGINE}: its shards cannot be reused")
    try:
        config = recipe.config()
    except (ConfigurationError, ValueError, TypeError) as exc:
        raise RunFolderError(f"{folder}: its {MANIFEST} describes a run that cannot be made: {exc}") from exc
    if scenario_set_hash(config.scenarios) != data.get("scenario_set_hash"):
        raise RunFolderError(f"the scenarios of {folder} changed since it was made: start a new run")
    return recipe, config


def same_run(recipe: Recipe, other: Recipe, what: str) -> None:
    """Refuse ``other`` unless it is the same run as ``recipe`` (scenarios, arms, trials, seed...)."""
    mine, theirs = recipe.identity(), other.identity()
    differ = [k for k in IDENTITY if mine[k] != theirs[k]]
    if differ:
        shown = "; ".join(f"{k}: {mine[k]!r} there, {theirs[k]!r} {what}" for k in differ)
        raise RunFolderError(f"not the same run ({shown})")


_RUN_FILES = {"results.json", "timings.json", "report.html", "report.md", "report.json", "junit.xml", MANIFEST} | {
    f"{name}.{ext}" for name in TABLES for ext in ("csv", "csv.gz")
}
_RUN_FILES |= {f".{name}.part" for name in _RUN_FILES}  # what a run stopped mid-write leaves (`whole`)
_RUN_FOLDERS = {"shards", "transcripts"}


def _holds_anything(folder: Path) -> bool:
    """Whether ``folder`` exists and holds something beside its lock."""
    return folder.exists() and any(p.name != LOCK for p in folder.iterdir())


def holds_a_run(folder: Path) -> bool:
    """Whether ``folder`` holds an earlier run (False when it is missing or empty).

    Raises:
        RunFolderError: it holds what is not a run folder's (it is never overwritten).
    """
    if not _holds_anything(folder):
        return False
    strangers = sorted(p.name for p in folder.iterdir() if p.name not in _RUN_FILES | _RUN_FOLDERS | {LOCK})
    if strangers:
        raise RunFolderError(
            f"{folder} does not look like a run folder (it holds {', '.join(strangers[:5])}); not overwriting it"
        )
    return True


def prepare_folder(folder: Path, overwrite: bool) -> None:
    """Refuse a folder that already holds something, unless told to replace a run folder (its
    lock, which the caller may hold, stays)."""
    if not _holds_anything(folder):
        return
    if not overwrite:
        raise RunFolderError(
            f"the run folder {folder} is not empty; pass --resume {folder} to finish it, --overwrite to replace it, "
            "or another --out"
        )
    holds_a_run(folder)
    for name in _RUN_FILES:
        (folder / name).unlink(missing_ok=True)
    for name in _RUN_FOLDERS:
        shutil.rmtree(folder / name, ignore_errors=True)


def resumed(folder: Path, given: Recipe, explicit: set[str]) -> tuple[Recipe, RunConfig]:
    """The run in ``folder``, refusing options (``explicit``: the fields of ``given`` the user
    set) that name another run; options that only say how it runs (workers, executor, timeouts)
    apply.

    Raises:
        RunFolderError: not a run folder, another engine's, or asked to be another run.
    """
    recipe, config = read_manifest(folder)
    asked = Recipe(**{**recipe.to_json(), **{k: getattr(given, k) for k in explicit}})
    same_run(recipe, asked, "asked for now")
    if explicit - set(IDENTITY):
        return asked, asked.config()
    return recipe, config


def open_run(
    given: Recipe, *, out: Path | None, resume: Path | None, explicit: set[str], overwrite: bool
) -> tuple[Recipe, RunConfig, Path]:
    """The run to make (or, with ``resume``, to finish), its config and its folder: a new run
    goes to ``out`` (default ``reports/runs/<time>-seed<S>``), which must be empty unless
    ``overwrite`` replaces a run folder there.

    Raises:
        RunFolderError: for a folder that cannot be used so; ConfigurationError for a run that cannot be made.
    """
    if resume is not None:
        if out is not None and out.resolve() != resume.resolve():
            raise RunFolderError("--resume names the run folder: leave out --out")
        recipe, config = resumed(resume, given, explicit)
        return recipe, config, resume
    config = given.config()
    folder = out or new_folder(given.seed)
    prepare_folder(folder, overwrite)
    return given, config, folder


def new_folder(seed: int) -> Path:
    """Where a new run goes when no folder is named: ``reports/runs/<time>-seed<S>``."""
    return Path("reports") / "runs" / f"{datetime.now(UTC):%Y%m%d-%H%M%S}-seed{seed}"
