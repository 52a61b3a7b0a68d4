"""Agents: the `Agent` protocol and the registry that turns a name into one, as pluggable as stores.

An agent spec is one of:

- a built-in name: ``no-memory``, ``trusting``, ``blind-trusting``, ``jit-verify`` (`memstore.agents.stubs`);
- ``command:CMD ARGS``: any program, run in the task's working copy (`memstore.harness.run.command`);
- ``llm:SPEC``: the LLM agent (`memstore.agents.llm`);
- ``mutant:NAME``: jit-verify with one part of its loop broken (`memstore.testing.agent_mutants`);
- ``SCHEME:ARGUMENT`` for a scheme registered in `AGENT_SCHEMES` (or the ``memstore.agent_schemes``
  entry-point group): its factory is called as ``factory(argument, config, runtime)``;
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

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, fields, replace
from typing import Protocol, runtime_checkable

from memstore.errors import ConfigurationError
from memstore.harness.run.boundary import AgentSession
from memstore.harness.run.records import Role
from memstore.harness.run.sandbox import AgentRuntime
from memstore.registry import Registry

__all__ = [
    "AGENTS",
    "AGENT_SCHEMES",
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


@dataclass(frozen=True)
class AgentConfig:
    """What bounds a stub's exploration (see the module docstring for the defaults' reasons)."""

    searches: int = 2
    reads: int = 8
    learn: bool = True

    @classmethod
    def parse(cls, pairs: Iterable[str]) -> AgentConfig:
        """From ``name=value`` strings, such as ``searches=1``."""
        config = cls()
        known = {f.name: f.type for f in fields(cls)}
        for pair in pairs:
            name, _, value = pair.partition("=")
            if name not in known:
                raise ConfigurationError(f"unknown agent parameter {name!r}; known: {', '.join(sorted(known))}")
            if name == "learn":
                if value.lower() not in {"true", "false", "1", "0"}:
                    raise ConfigurationError(f"agent parameter learn is true or false, got {value!r}")
                config = replace(config, learn=value.lower() in {"true", "1"})
                continue
            if not value.isdigit() or not 0 <= int(value) <= 100:
                raise ConfigurationError(f"agent parameter {name} is a whole number from 0 to 100, got {value!r}")
            config = replace(config, searches=int(value)) if name == "searches" else replace(config, reads=int(value))
        return config


AgentFactory = Callable[[AgentConfig], Agent]
SchemeFactory = Callable[[str, AgentConfig, AgentRuntime | None], Agent]  # (what follows "scheme:", ...)

AGENTS: Registry[AgentFactory] = Registry(
    "agent",
    ENTRY_POINT_GROUP,
    {
        "no-memory": "memstore.agents.stubs:NoMemoryAgent",
        "trusting": "memstore.agents.stubs:TrustingAgent",
        "blind-trusting": "memstore.agents.stubs:BlindTrustingAgent",
        "jit-verify": "memstore.agents.stubs:JitVerifyAgent",
    },
)
AGENT_SCHEMES: Registry[SchemeFactory] = Registry(
    "agent scheme",
    "memstore.agent_schemes",
    {
        "command": "memstore.harness.run.command:command_agent",
        "llm": "memstore.agents.llm:llm_agent",
        "mutant": "memstore.testing.agent_mutants:mutant_agent",
    },
)
BUILT_IN = tuple(AGENTS.built_in)
_SCHEME = re.compile(r"^(?P<scheme>[a-z][a-z0-9+.-]*):(?P<rest>.*)$", re.DOTALL)


def register_agent(name: str) -> Callable[[AgentFactory], AgentFactory]:
    """Register ``factory`` as the agent ``name`` (a decorator)."""
    return AGENTS.register(name)


def _scheme(spec: str) -> tuple[SchemeFactory, str] | None:
    """The scheme factory of a ``scheme:ARGUMENT`` spec (``command:``, ``llm:``, ``mutant:``, a registered
    one), with its argument; None for any other spec."""
    found = _SCHEME.match(spec)
    if found is None or not AGENT_SCHEMES.knows(found["scheme"]):
        return None
    factory = AGENT_SCHEMES.find(found["scheme"])
    return (factory, found["rest"]) if factory is not None else None


def make_agent(spec: str, config: AgentConfig | None = None, *, runtime: AgentRuntime | None = None) -> Agent:
    """An agent by spec (see the module docstring); ``runtime`` says how command agents run
    (timeout, sandbox, network, environment, what relative paths in the command mean)."""
    config = config or AgentConfig()
    schemed = _scheme(spec)
    if schemed is not None:
        factory, argument = schemed
        return factory(argument, config, runtime)
    found = AGENTS.find(spec)
    if found is None:
        known = ", ".join([*AGENTS.built_in, *sorted(AGENTS.registered), "command:CMD", "package.module:factory"])
        raise ConfigurationError(f"unknown agent {spec!r}; known: {known}")
    made = found(config)
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
    return AGENTS.portable(specs)


def restore_registrations(references: Mapping[str, str]) -> None:
    """In a worker: register the parent's agents again from their references."""
    AGENTS.restore(references)
