"""The values a run passes around: arms, units of work, and the rows they produce."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from memstore.harness.run.records import SessionRecord, columns
from memstore.harness.run.sandbox import AgentRuntime
from memstore.harness.scenarios.model import Scenario

__all__ = ["SESSION_COLUMNS", "TABLES", "Arm", "RunOutput", "Unit"]

TABLES = ("trials", "sessions", "events", "findings", "failures")
SESSION_COLUMNS = columns(SessionRecord)  # the sessions table, in order (one definition: the record)


@dataclass(frozen=True)
class Arm:
    """An agent paired with a store."""

    agent: str
    store: str = "sqlite:"
    negative_control: bool = False  # the person running said so (``--negative-control``): gated as one

    @property
    def store_label(self) -> str:
        """The store as a run names it: its scheme for a store named by a path or nothing
        (``sqlite:``, ``sqlite:///x.db``), a mutant as NAME(inner's label), a store named by a
        name (``mcp:server-memory``) with the store it serves in parentheses (``?store=``)."""
        scheme, _, rest = self.store.partition(":")
        if scheme == "mutant":  # mutant:NAME:INNER, shown as NAME(inner's label)
            name, _, inner = rest.partition(":")
            return f"{name}({Arm(self.agent, inner).store_label})"
        if not rest or rest.startswith("//"):
            return scheme
        name, _, query = rest.partition("?")
        pairs = [pair for pair in query.split("&") if pair]
        served = [pair.partition("=")[2] for pair in pairs if pair.startswith("store=")]
        label = f"{scheme}:{name}" + (f"({Arm(self.agent, served[-1]).store_label})" if served else "")
        others = [pair for pair in pairs if not pair.startswith("store=")]
        return label + (f"?{'&'.join(others)}" if others else "")

    @property
    def name(self) -> str:
        return f"{self.agent}/{self.store_label}"


@dataclass(frozen=True)
class Unit:
    """One trial of one scenario in one arm: the unit of work a worker runs."""

    scenario: Scenario
    trial: int
    arm: Arm
    seed: int
    limit: int
    expiry: timedelta
    runtime: AgentRuntime

    def key(self) -> dict[str, Any]:
        """The columns that say which unit a row belongs to."""
        return {
            "arm": self.arm.name,
            "agent": self.arm.agent,
            "store": self.arm.store_label,
            "scenario": self.scenario.name,
            "trial": self.trial,
        }


@dataclass
class RunOutput:
    """Rows of every table, and what they cost."""

    trials: list[dict[str, Any]] = field(default_factory=list)
    sessions: list[dict[str, Any]] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    findings: list[dict[str, Any]] = field(default_factory=list)
    timings: list[dict[str, Any]] = field(default_factory=list)
    failures: list[dict[str, Any]] = field(default_factory=list)  # units that could not run, and why
