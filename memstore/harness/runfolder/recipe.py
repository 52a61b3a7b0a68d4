"""A run as its options describe it: the `Recipe`, and the one builder of the `RunConfig` it
describes (`Recipe.config`).

``memstore eval`` hands its options to a `Recipe` by name, the pytest plugin fills one with its
own defaults, and a run folder's ``manifest.json`` keeps one; each gets its run from
`Recipe.config`. To add a run option: a field here (keyword, with its default), its line in
`Recipe.config` (and the `RunConfig` field it sets, when the run reads something new), and the
``memstore eval`` option of the same name; a field that decides the units' outcomes joins
`IDENTITY` too, so that a resumed or merged run must agree on it.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from memstore.errors import ConfigurationError, RunFolderError
from memstore.harness.run import (
    DEFAULT_TIMEOUT,
    AgentRuntime,
    Arm,
    Network,
    RunConfig,
    SandboxMode,
    iter_arms,
    split_params,
    with_params,
)
from memstore.harness.scenarios import Scenario, load_library, sample_tasks

__all__ = ["DEFAULT_AGENTS", "DEFAULT_STORE", "IDENTITY", "Recipe", "parse_timeouts", "same_run"]

DEFAULT_AGENTS = ("no-memory", "trusting", "blind-trusting", "jit-verify")  # every stub, by its plug-in name
DEFAULT_STORE = "sqlite:"
# What decides the units and their outcomes: a resumed or merged run must agree on all of it.
IDENTITY = ("scenarios", "stores", "agents", "trials", "seed", "limit", "agent_params", "sample")


@dataclass(frozen=True, kw_only=True)
class Recipe:
    """A run as its options describe it (what ``manifest.json`` keeps), each option with its
    default: a caller with other defaults (the pytest plugin's two workers) gives them here."""

    scenarios: tuple[str, ...] = ()  # files or folders; none: the shipped library
    stores: tuple[str, ...] = ()  # none: DEFAULT_STORE
    agents: tuple[str, ...] = ()  # none: DEFAULT_AGENTS
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
        """The run this recipe describes: its scenarios loaded (and sampled), its arms, how its agents run.

        Raises:
            ConfigurationError: options that do not hold together, or that name what is not there.
            ScenarioError: scenario files that cannot be read.
        """
        timeout, per_agent = parse_timeouts(self.agent_timeouts)
        runtime = self._runtime(timeout)
        library, sampled = self._library()
        stores = self.stores or (DEFAULT_STORE,)
        self._check_choices(stores)
        specs = [with_params(spec, self.agent_params) for spec in self.agents or DEFAULT_AGENTS]
        config = RunConfig(
            scenarios=library,
            arms=tuple(iter_arms(specs, stores, self.negative_controls)),
            trials=self.trials,
            seed=self.seed,
            workers=self.workers,
            limit=self.limit,
            runtime=runtime,
            agent_timeouts=per_agent,
            max_cost=self.max_cost,
            executor=self.executor,
            sample=sampled,
            sequential=self.sequential,
            max_sessions=self.max_sessions,
        )
        _check_timeouts(per_agent, config.arms)
        return config

    def _runtime(self, timeout: float) -> AgentRuntime:
        """How out-of-process agents run (relative paths in their commands: from here)."""
        missing = [name for name in self.agent_env if name not in os.environ]
        if missing:
            raise ConfigurationError(f"--agent-env names variables this environment does not set: {', '.join(missing)}")
        return AgentRuntime(
            timeout=timeout,
            base_dir=Path.cwd(),
            sandbox=SandboxMode(self.agent_sandbox),
            network=Network(self.agent_network),
            env=tuple(self.agent_env),
        )

    def _library(self) -> tuple[tuple[Scenario, ...], str]:
        """The scenarios named (the shipped library for none), sampled when asked, and how."""
        library = tuple(load_library(tuple(Path(p) for p in self.scenarios)))
        if not self.sample:
            return library, ""
        chosen, drawn = sample_tasks(library, self.sample, self.seed)
        return tuple(chosen), drawn.describe()

    def _check_choices(self, stores: tuple[str, ...]) -> None:
        """The run's own choices hold together: a negative control is a store it evaluates, and a
        session budget goes with a sequential run."""
        strangers = [uri for uri in self.negative_controls if uri not in stores]
        if strangers:
            raise ConfigurationError(
                f"--negative-control names a store this run does not evaluate: {', '.join(strangers)} "
                "(give it to --store)"
            )
        if self.max_sessions and not self.sequential:
            raise ConfigurationError("--max-sessions goes with --sequential (a fixed run has --max-cost)")

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Recipe:
        """The recipe a manifest holds (a field it lacks takes its default).

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


def _check_timeouts(per_agent: tuple[tuple[str, float], ...], arms: tuple[Arm, ...]) -> None:
    """A timeout is given only to an agent of the run (as given, or by its name without parameters)."""
    unknown = sorted(
        {agent for agent, _ in per_agent} - {a for arm in arms for a in (arm.agent, split_params(arm.agent)[0])}
    )
    if unknown:
        raise ConfigurationError(f"--agent-timeout names agent(s) not in this run: {', '.join(unknown)}")


def same_run(recipe: Recipe, other: Recipe, what: str) -> None:
    """Refuse ``other`` unless it is the same run as ``recipe`` (scenarios, arms, trials, seed...)."""
    mine, theirs = recipe.identity(), other.identity()
    differ = [k for k in IDENTITY if mine[k] != theirs[k]]
    if differ:
        shown = "; ".join(f"{k}: {mine[k]!r} there, {theirs[k]!r} {what}" for k in differ)
        raise RunFolderError(f"not the same run ({shown})")
