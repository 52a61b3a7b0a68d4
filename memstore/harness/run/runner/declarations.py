"""What a run's arms declare, read once before it runs: each agent made, each store opened.

`check_config` refuses what cannot be used (an unknown agent, a store that cannot be opened, a
registration spawn workers cannot import) and, from that same look, gives each arm's `Declared`:
its role, whether its agent is a simulation or verifies, its parameters, its store's profile.
The composition root (`memstore.harness.evaluate`) hands that on to whatever needs it (the
sequential run's looks, the run folder's metadata) instead of each making every agent and
opening every store again.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NamedTuple

from memstore import backends
from memstore.harness.records import Role
from memstore.harness.run.boundary import agents
from memstore.harness.run.boundary.agents import Agent, make_agent
from memstore.harness.run.output import Arm
from memstore.harness.run.play.stores import check_store_uri, store_profile
from memstore.harness.run.runner.config import RunConfig
from memstore.harness.run.runner.executors import Registrations, check_executor

__all__ = ["Declared", "check_config", "declared", "registrations"]


class Declared(NamedTuple):
    """What an arm's agent and store declare."""

    role: Role
    simulated: bool  # an agent's ``simulated``: the stubs are
    verifies: bool  # an agent's ``verifies``: it says it verifies memories before use (the verifier's gates)
    params: dict[str, Any]  # the parameters its agent runs with (an agent's ``params``), if it says
    store: dict[str, Any]  # what its store declares (`memstore.harness.run.play.stores.store_profile`)
    declares: frozenset[str] = frozenset()  # more an agent declares (``declares``), that a plug-in's gates ask for


def check_config(config: RunConfig) -> dict[str, Declared]:
    """Refuse, before anything runs, agents and stores that cannot be used as given (in workers
    too: what was registered in this process must be importable there); what each arm declares.

    Raises:
        ConfigurationError: naming the agent or store and what is wrong with it.
    """
    check_executor(config.executor)
    made: dict[str, Agent] = {}
    checked: set[str] = set()
    for arm in config.arms:
        made[arm.name] = make_agent(arm.agent, runtime=config.runtime_for(arm.agent))
        if arm.store not in checked:
            check_store_uri(arm.store)
            checked.add(arm.store)
    if config.workers > 1 or config.executor != "local":
        registrations(config)
    return _declared(config.arms, made)


def declared(config: RunConfig) -> dict[str, Declared]:
    """What each arm's agent and store declare (`check_config` checks, then declares)."""
    return _declared(
        config.arms, {a.name: make_agent(a.agent, runtime=config.runtime_for(a.agent)) for a in config.arms}
    )


def _declared(arms: Iterable[Arm], made: dict[str, Agent]) -> dict[str, Declared]:
    arms = list(arms)
    profiles = {uri: store_profile(uri) for uri in sorted({arm.store for arm in arms})}  # each opened once
    found = {}
    for arm in arms:
        agent = made[arm.name]
        role = agents.arm_role(agent, arm)
        params = getattr(agent, "params", None)
        simulated = bool(getattr(agent, "simulated", False))
        verifies = bool(getattr(agent, "verifies", False))
        more = agents.agent_declares(agent)
        found[arm.name] = Declared(role, simulated, verifies, dict(params or {}), profiles[arm.store], more)
    return found


def registrations(config: RunConfig) -> Registrations:
    """This process's agent and store registrations the run uses, as worker-importable references.

    Raises:
        ConfigurationError: for a registered factory that a fresh interpreter cannot import.
    """
    return (
        agents.portable_registrations([arm.agent for arm in config.arms]),
        backends.portable_registrations([arm.store for arm in config.arms]),
    )
