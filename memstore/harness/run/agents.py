"""Agents: the `Agent` protocol and the registry that turns a name into one, as pluggable as stores.

An agent spec is one of:

- a built-in name: ``no-memory``, ``trusting``, ``blind-trusting``, ``jit-verify`` (`memstore.harness.run.stubs`);
- ``command:CMD ARGS``: any program, run in the task's working copy (`memstore.harness.run.command`);
- ``mutant:NAME``: jit-verify with one part of its loop broken (`memstore.testing.agent_mutants`);
- a name registered in this process with `register_agent`;
- a name in the ``memstore.agents`` entry-point group (name = agent, value = ``module:factory``);
- ``package.module:factory``: a factory to import.

A factory is called as ``factory(config)`` with the stubs' `AgentConfig` and returns an object
with ``name``, ``uses_memory`` and ``work(session)`` (and, optionally, its ``role``).

Runs with several workers start fresh interpreters, so a registration made in this process
reaches them as the ``module:qualname`` of its factory: a factory spawn workers cannot import
(a lambda, a function defined inside another) is refused before the run starts, with the fix.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Mapping
from importlib.metadata import entry_points
from typing import Any, Protocol, runtime_checkable

from memstore.errors import ConfigurationError
from memstore.harness.analysis.model import Role
from memstore.harness.run.boundary import AgentSession
from memstore.harness.run.sandbox import AgentRuntime
from memstore.harness.run.stubs import AgentConfig

__all__ = [
    "BUILT_IN",
    "ENTRY_POINT_GROUP",
    "Agent",
    "AgentConfig",
    "AgentFactory",
    "agent_role",
    "arm_role",
    "make_agent",
    "portable_registrations",
    "register_agent",
    "restore_registrations",
]

ENTRY_POINT_GROUP = "memstore.agents"


@runtime_checkable
class Agent(Protocol):
    """Works one session: reads ``session.task`` and ``session.memories``, acts through ``session.tools``.

    An agent may declare its ``role`` (`Role`; an agent that does not is a treatment)."""

    name: str
    uses_memory: bool

    def work(self, session: AgentSession) -> None: ...


AgentFactory = Callable[[AgentConfig], Agent]

_BUILT_IN: dict[str, str] = {
    "no-memory": "memstore.harness.run.stubs:NoMemoryAgent",
    "trusting": "memstore.harness.run.stubs:TrustingAgent",
    "blind-trusting": "memstore.harness.run.stubs:BlindTrustingAgent",
    "jit-verify": "memstore.harness.run.stubs:JitVerifyAgent",
}
BUILT_IN = tuple(_BUILT_IN)
_REGISTERED: dict[str, AgentFactory] = {}
_FACTORY_REF = re.compile(r"^(?P<module>[A-Za-z_][\w.]*):(?P<attr>[A-Za-z_][\w.]*)$")


def register_agent(name: str) -> Callable[[AgentFactory], AgentFactory]:
    """Register ``factory`` as the agent ``name`` (a decorator)."""

    def decorate(factory: AgentFactory) -> AgentFactory:
        _REGISTERED[name] = factory
        return factory

    return decorate


def _import(reference: str, spec: str) -> AgentFactory:
    found = _FACTORY_REF.match(reference)
    if found is None:
        raise ConfigurationError(f"agent {spec!r}: {reference!r} is not a package.module:factory reference")
    try:
        target: Any = importlib.import_module(found["module"])
        for part in found["attr"].split("."):
            target = getattr(target, part)
    except (ImportError, AttributeError) as exc:
        raise ConfigurationError(f"agent {spec!r}: cannot import {reference}: {exc}") from exc
    if not callable(target):
        raise ConfigurationError(f"agent {spec!r}: {reference} is not callable")
    return target  # type: ignore[no-any-return]


def _entry_point(name: str) -> str | None:
    found = [ep for ep in entry_points(group=ENTRY_POINT_GROUP) if ep.name == name]
    return found[0].value if found else None


def _factory(spec: str) -> AgentFactory:
    if spec in _REGISTERED:
        return _REGISTERED[spec]
    if spec in _BUILT_IN:
        return _import(_BUILT_IN[spec], spec)
    reference = _entry_point(spec)
    if reference is not None:
        return _import(reference, spec)
    if _FACTORY_REF.match(spec):
        return _import(spec, spec)
    known = ", ".join([*_BUILT_IN, *sorted(_REGISTERED), "command:CMD", "package.module:factory"])
    raise ConfigurationError(f"unknown agent {spec!r}; known: {known}")


def make_agent(spec: str, config: AgentConfig | None = None, *, runtime: AgentRuntime | None = None) -> Agent:
    """An agent by spec (see the module docstring); ``runtime`` says how command agents run
    (timeout, sandbox, network, environment, what relative paths in the command mean)."""
    if spec.startswith("command:"):
        from memstore.harness.run.command import CommandAgent

        agent: Agent = CommandAgent(spec.removeprefix("command:"), runtime)
        return agent
    if spec.startswith("llm:"):
        from memstore.agents.llm import make

        return make(spec.removeprefix("llm:"))
    if spec.startswith("mutant:"):
        from memstore.testing.agent_mutants import AGENT_MUTANTS, make_agent_mutant

        name = spec.removeprefix("mutant:")
        if name not in AGENT_MUTANTS:
            raise ConfigurationError(f"unknown agent mutant {name!r}; known: {', '.join(AGENT_MUTANTS)}")
        return make_agent_mutant(name, config)
    made = _factory(spec)(config or AgentConfig())
    if not isinstance(made, Agent):
        raise ConfigurationError(f"agent {spec!r}: its factory returned {type(made).__name__}, not an Agent")
    return made


def agent_role(agent: Agent) -> Role:
    """The role an agent declares (a treatment when it declares none)."""
    return Role(getattr(agent, "role", Role.TREATMENT))


def arm_role(agent: Agent, store: object) -> Role:
    """An arm's role, as its agent and its store declare them: a store built to break the rules
    (capability ``negative-control``) makes the arm a negative control, whatever the agent."""
    if "negative-control" in getattr(store, "capabilities", frozenset()):
        return Role.NEGATIVE_CONTROL
    return agent_role(agent)


def portable_registrations(specs: list[str]) -> dict[str, str]:
    """The in-process registrations among ``specs``, as references a spawn worker can import.

    Raises:
        ConfigurationError: for a registered factory that a fresh interpreter cannot import.
    """
    found = {}
    for spec in specs:
        factory = _REGISTERED.get(spec)
        if factory is None:
            continue
        module, qualname = getattr(factory, "__module__", ""), getattr(factory, "__qualname__", "")
        if not module or module == "__main__" or "<" in qualname or not qualname:
            raise ConfigurationError(
                f"agent {spec!r} was registered with {factory!r}, which worker processes cannot import "
                "(a lambda, a function defined inside another, or one in __main__): register a module-level "
                "factory, pass its package.module:factory as the agent, or run with --workers 1"
            )
        found[spec] = f"{module}:{qualname}"
    return found


def restore_registrations(references: Mapping[str, str]) -> None:
    """In a worker: register the parent's agents again from their references."""
    for spec, reference in references.items():
        _REGISTERED[spec] = _import(reference, spec)
