"""Agents: the `Agent` protocol and the registry that turns a name into one.

``no-memory``, ``trusting`` and ``jit-verify`` are the built-in stubs
(`memstore.harness.run.stubs`); ``command:CMD ARGS`` runs any program as an agent
(`memstore.harness.run.command`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Protocol, runtime_checkable

from memstore.errors import ConfigurationError
from memstore.harness.run.boundary import AgentSession
from memstore.harness.run.stubs import AgentConfig, JitVerifyAgent, NoMemoryAgent, TrustingAgent

__all__ = ["AGENTS", "Agent", "AgentConfig", "make_agent"]


@runtime_checkable
class Agent(Protocol):
    """Works one session: reads ``session.task`` and ``session.memories``, acts through ``session.tools``."""

    name: str
    uses_memory: bool

    def work(self, session: AgentSession) -> None: ...


AGENTS: dict[str, Callable[[AgentConfig], Agent]] = {
    "no-memory": NoMemoryAgent,
    "trusting": TrustingAgent,
    "jit-verify": JitVerifyAgent,
}


def make_agent(
    spec: str, config: AgentConfig | None = None, *, timeout: float | None = None, base_dir: Path | None = None
) -> Agent:
    """An agent by name (``no-memory``, ``trusting``, ``jit-verify``) or ``command:CMD ARGS``.

    ``timeout`` (seconds per session) and ``base_dir`` (what relative paths in the command are
    relative to) apply to command agents.
    """
    if spec.startswith("command:"):
        from memstore.harness.run.command import DEFAULT_TIMEOUT, CommandAgent

        agent: Agent = CommandAgent(
            spec.removeprefix("command:"), timeout=timeout or DEFAULT_TIMEOUT, base_dir=base_dir
        )
        return agent
    factory = AGENTS.get(spec)
    if factory is None:
        known = ", ".join([*AGENTS, "command:CMD"])
        raise ConfigurationError(f"unknown agent {spec!r}; known: {known}")
    return factory(config or AgentConfig())
