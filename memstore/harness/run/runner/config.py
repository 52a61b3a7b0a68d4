"""What to run: the scenarios, the arms, and how (`RunConfig`, the runner's one input)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta

from memstore.harness.run.boundary.agents import split_params
from memstore.harness.run.isolation.sandbox import AgentRuntime
from memstore.harness.run.output import Arm
from memstore.harness.scenarios import Scenario
from memstore.store import DEFAULT_EXPIRY

__all__ = ["RunConfig"]


@dataclass(frozen=True)
class RunConfig:
    """What to run."""

    scenarios: tuple[Scenario, ...]
    arms: tuple[Arm, ...]
    trials: int = 1
    seed: int = 0
    workers: int = 1
    limit: int = 50
    expiry: timedelta = DEFAULT_EXPIRY
    runtime: AgentRuntime = field(default_factory=AgentRuntime)  # how out-of-process agents run
    agent_timeouts: tuple[tuple[str, float], ...] = ()  # per agent: (agent as given, seconds)
    max_cost: float | None = None  # USD: no new unit starts once the run's agents spent this
    executor: str = "local"  # local (a process pool), ray, or ray://HOST:PORT
    sample: str = ""  # how the tasks were sampled from the scenarios named (`sample_tasks`), if they were
    sequential: bool = False  # scenarios in a seeded order, stopping when every gate is decided (`harness.sequential`)
    max_sessions: int = 0  # a sequential run stops after this many sessions (0: no cap)

    def runtime_for(self, agent: str) -> AgentRuntime:
        """How ``agent`` runs (its own timeout, where one was given)."""
        given = dict(self.agent_timeouts)
        timeout = given.get(agent, given.get(split_params(agent)[0]))
        return self.runtime if timeout is None else self.runtime.with_timeout(timeout)
