"""The values a run passes around: arms, units of work, and the rows they produce."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from memstore.harness.records import EventRecord, FailureRecord, FindingRecord, SessionRecord, TrialRecord
from memstore.harness.run.isolation.sandbox import AgentRuntime
from memstore.harness.scenarios import Scenario
from memstore.uri import StoreURI

__all__ = ["Arm", "RunOutput", "Unit"]


@dataclass(frozen=True)
class Arm:
    """An agent paired with a store."""

    agent: str
    store: str = "sqlite:"
    negative_control: bool = False  # the person running said so (``--negative-control``): gated as one

    @property
    def store_label(self) -> str:
        """The store as a run names it (`memstore.uri.StoreURI.label`): its scheme for a store
        named by a path or nothing (``sqlite:``, ``sqlite:///x.db``), a mutant as NAME(inner's
        label), a store named by a name (``mcp:server-memory``) with the store it serves in
        parentheses (``?store=``)."""
        return StoreURI.parse(self.store).label

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
    """The records of every table (typed until they are written: `memstore.harness.records.row`),
    and what the unit's parts took."""

    trials: list[TrialRecord] = field(default_factory=list)
    sessions: list[SessionRecord] = field(default_factory=list)
    events: list[EventRecord] = field(default_factory=list)
    findings: list[FindingRecord] = field(default_factory=list)
    timings: list[dict[str, Any]] = field(default_factory=list)
    failures: list[FailureRecord] = field(default_factory=list)  # units that could not run, and why
