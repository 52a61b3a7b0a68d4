"""The trial loop's hand-off to its grading: what the loop tells, and what it is told back.

The loop (`memstore.harness.run.play.loop`) plays the sessions and never reads grading data. What it
sees goes, as it happens, to the trial's `Grading`: each event, each coding change before it
merges (the grading alone decides whether it passes its check), each session once it ended
(`Played`), the trial once it ended. The grading reads the labels and writes the rows.

Which grading a run uses is chosen above this stage, by the composition root
(`memstore.harness.evaluate`), and handed down to the runner as a `GradingFactory`: this stage
names none (the harness's own is the ``trial`` entry of the ``memstore.gradings`` group).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

from memstore.harness.records import Breaches, Chances, EventKind, Lookups, Role, Spent
from memstore.harness.run.isolation.sandbox import AgentRuntime
from memstore.harness.run.output import RunOutput, Unit
from memstore.harness.scenarios import Task
from memstore.harness.world import Template, World
from memstore.model import Memory
from memstore.verify import Workspace

__all__ = ["Grading", "GradingFactory", "Played"]


@dataclass(frozen=True)
class Played:
    """What one session did, as the trial loop saw it (no grading data in it)."""

    index: int
    task: Task
    key: Mapping[str, str]  # task, surface, user
    role: Role
    handed: tuple[Memory, ...]
    events: tuple[tuple[EventKind, str, str], ...]  # (kind, memory id, detail) of the agent's own operations
    findings: tuple[tuple[str, str], ...]
    answer: str | None
    diff: str  # the committed change ("" for none)
    merged: bool | None  # None off the coding surface
    contract: Breaches  # breaches of each promise of the store contract
    chances: Chances  # occasions the store had to break each promise (`StoreAudit.take_chances`)
    lookups: Lookups  # verify_reads, searches, reads
    spent: Spent  # tokens, cost, model, transcript


class Grading(Protocol):
    """What the trial loop tells the trial's grading, as it happens (see the module docstring)."""

    def begin(self) -> None: ...
    def event(self, key: dict[str, str], kind: EventKind, memory_id: str, detail: str) -> None: ...
    def passes(self, task: Task, diff: str, runtime: AgentRuntime) -> bool: ...
    def merged(self, files: set[str]) -> None: ...
    def session(self, played: Played) -> None: ...
    def finish(self) -> None: ...


class GradingFactory(Protocol):
    """Makes one trial's grading from the unit, the scenario's template, the trial's world, its
    working copy, and where the rows go. A class with that constructor is one; it travels to
    worker processes by its ``module:qualname``, so it must be importable there."""

    def __call__(
        self, unit: Unit, template: Template, world: World, workspace: Workspace, out: RunOutput
    ) -> Grading: ...
