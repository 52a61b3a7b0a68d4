"""Agents: the `Agent` protocol and the registry that turns a name into one, as pluggable as stores.

An agent spec is one of:

- a built-in name: ``no-memory``, ``trusting``, ``blind-trusting``, ``jit-verify`` (the stubs);
- ``command:CMD ARGS``: any program, run in the task's working copy (`memstore.harness.run.boundary.command`);
- ``llm:SPEC``: the reference LLM agent;
- ``mutant:NAME``: jit-verify with one part of its loop broken (the agent mutants of memstore's tests);
- ``SCHEME:ARGUMENT`` for a scheme registered in `AGENT_SCHEMES` (or the ``memstore.agent_schemes``
  entry-point group): its factory is called as ``factory(argument, runtime)``;
- a name registered in this process with `register_agent`;
- a name in the ``memstore.agents`` entry-point group (name = agent, value = ``module:factory``);
- ``package.module:factory``: a factory to import.

The built-in names and schemes are entry points of memstore's own distribution, declared in its
``pyproject.toml`` by the packages that own them (`memstore.plugins`): this stage names none.

A name may carry the agent's own parameters: ``jit-verify[searches=1,reads=4]`` (`split_params`;
``--agent-param NAME=VALUE`` adds one to every agent of a run that takes parameters,
`with_params`). A factory is called as ``factory(params)`` with them (a ``name -> value`` mapping
of strings, empty when none were given) and returns an object with ``name``, ``uses_memory`` and
``work(session)`` (and, optionally, its ``role``, and the ``params`` it runs with, which the
results record for its arm). ``mutant:NAME[...]`` takes the stubs' parameters the same way.

Runs with several workers start fresh interpreters, so a registration made in this process
reaches them as the ``module:qualname`` of its factory: a factory spawn workers cannot import
(a lambda, a function defined inside another) is refused before the run starts, with the fix.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Protocol, runtime_checkable

from memstore import plugins
from memstore.errors import ConfigurationError
from memstore.harness.records import Role
from memstore.harness.run.boundary.session import AgentSession
from memstore.harness.run.isolation.sandbox import AgentRuntime
from memstore.harness.run.output import Arm
from memstore.registry import Registry
from memstore.uri import StoreURI

__all__ = [
    "AGENTS",
    "AGENT_SCHEMES",
    "ENTRY_POINT_GROUP",
    "Agent",
    "AgentFactory",
    "agent_role",
    "arm_role",
    "make_agent",
    "portable_registrations",
    "register_agent",
    "restore_registrations",
    "split_params",
    "with_params",
]

ENTRY_POINT_GROUP = plugins.AGENTS.group


@runtime_checkable
class Agent(Protocol):
    """Works one session: reads ``session.task`` and ``session.memories``, acts through ``session.tools``.

    An agent may declare its ``role`` (`Role`; an agent that does not is a treatment)."""

    name: str
    uses_memory: bool

    def work(self, session: AgentSession) -> None: ...


_NAME = r"[a-z_][a-z0-9_]*"  # a parameter's name
_PAIR = rf"{_NAME}=[^,\]]*"
_PARAMS = re.compile(rf"^(?P<base>.*?)\[(?P<pairs>{_PAIR}(?:,{_PAIR})*)?\]$", re.DOTALL)


def split_params(spec: str) -> tuple[str, dict[str, str]]:
    """An agent spec's name and the parameters it carries: ``jit-verify[reads=4]`` is
    ``("jit-verify", {"reads": "4"})``; a spec without brackets carries none."""
    found = _PARAMS.match(spec)
    if found is None:
        return spec, {}
    pairs = found["pairs"] or ""
    return found["base"], dict(pair.split("=", 1) for pair in pairs.split(",") if pair)


def _takes_params(spec: str) -> bool:
    """Whether a spec can carry parameters: a name (built-in, registered, an entry point's, an
    importable factory), or a scheme's argument where the scheme's factory says it takes them
    (``takes_params``, as ``mutant:`` does; ``command:`` and ``llm:`` do not)."""
    schemed = _scheme(spec)
    return schemed is None or bool(getattr(schemed[0], "takes_params", False))


def with_params(spec: str, pairs: Iterable[str]) -> str:
    """``spec`` with the ``NAME=VALUE`` parameters of ``pairs`` added where it gives none of its
    own for that name (agents that take no parameters, such as ``command:``, are left as given).

    Raises:
        ConfigurationError: for a pair that is not ``NAME=VALUE``.
    """
    extra: dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not re.fullmatch(_NAME, name) or "," in value or "]" in value:
            raise ConfigurationError(f"--agent-param takes NAME=VALUE (such as searches=1), got {pair!r}")
        extra[name] = value
    if not extra or not _takes_params(spec):
        return spec
    base, own = split_params(spec)
    merged = {**extra, **own}
    return f"{base}[{','.join(f'{k}={v}' for k, v in sorted(merged.items()))}]"


AgentFactory = Callable[[Mapping[str, str]], Agent]  # called with the parameters its spec carries
SchemeFactory = Callable[[str, AgentRuntime | None], Agent]  # (what follows "scheme:", how it runs)

AGENTS: Registry[AgentFactory] = plugins.AGENTS  # the built-ins: memstore's ``memstore.agents`` entry points
AGENT_SCHEMES: Registry[SchemeFactory] = plugins.AGENT_SCHEMES  # ``memstore.agent_schemes``
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


def make_agent(spec: str, *, runtime: AgentRuntime | None = None) -> Agent:
    """An agent by spec (see the module docstring); ``runtime`` says how command agents run
    (timeout, sandbox, network, environment, what relative paths in the command mean).

    Raises:
        ConfigurationError: for an unknown agent, or parameters it does not take.
    """
    schemed = _scheme(spec)
    if schemed is not None:
        factory, argument = schemed
        return factory(argument, runtime)
    name, params = split_params(spec)
    found = AGENTS.find(name)
    if found is None:
        known = ", ".join([*AGENTS.names(), "command:CMD", "package.module:factory"])
        raise ConfigurationError(f"unknown agent {name!r}; known: {known}")
    made = found(params)
    if not isinstance(made, Agent):
        raise ConfigurationError(f"agent {spec!r}: its factory returned {type(made).__name__}, not an Agent")
    return made


def agent_role(agent: Agent) -> Role:
    """The role an agent declares (a treatment when it declares none)."""
    return Role(getattr(agent, "role", Role.TREATMENT))


def agent_declares(agent: Agent) -> frozenset[str]:
    """The capabilities an agent declares beyond ``verifies`` (its ``declares``), that a plug-in's
    gate families ask for (``@gate(..., declares="careful")``)."""
    return frozenset(str(c) for c in getattr(agent, "declares", ()) or ()) - {"verifies"}


def arm_role(agent: Agent, arm: Arm) -> Role:
    """An arm's role: a negative control when the person running says its store is one
    (``--negative-control URI``: `Arm.negative_control`) or for memstore's own ``naive:`` store,
    built to break the rules; else the role its agent declares. What a store declares never
    chooses how it is judged (a store cannot turn its own gates off)."""
    if arm.negative_control or StoreURI.parse(arm.store).scheme == "naive":
        return Role.NEGATIVE_CONTROL
    return agent_role(agent)


def portable_registrations(specs: list[str]) -> dict[str, str]:
    """The in-process registrations among ``specs``, as references a spawn worker can import.

    Raises:
        ConfigurationError: for a registered factory that a fresh interpreter cannot import.
    """
    return AGENTS.portable([split_params(spec)[0] for spec in specs])


def restore_registrations(references: Mapping[str, str]) -> None:
    """In a worker: register the parent's agents again from their references."""
    AGENTS.restore(references)
