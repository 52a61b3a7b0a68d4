"""The run's records: what one trial of one arm produces, before any analysis reads it.

Each table of a run folder has one frozen record here: `SessionRecord`, `TrialRecord`,
`EventRecord`, `FindingRecord`, `FailureRecord`. A record's fields are its table's columns, in
order (`memstore.harness.records.tables`). A record stays typed until it is written: an arm's
role is a `Role`, a session's surface a `Surface`, an event's kind an `EventKind` and its label a
`Label`, a list a tuple, an enum that may be missing None (written as an empty string);
`tables.row` turns it into the plain row a shard and a CSV keep.

`Role` is what an arm is in a run, declared by its agent and its store.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from enum import StrEnum

from memstore.harness.records.events import EventKind
from memstore.harness.records.labels import Label, Origin
from memstore.harness.records.promises import Breaches, Chances
from memstore.model import Surface

__all__ = [
    "RECALL_KS",
    "EventRecord",
    "FailureRecord",
    "FindingRecord",
    "Lookups",
    "Outcome",
    "Recall",
    "Record",
    "Role",
    "SessionRecord",
    "Spent",
    "TrialRecord",
]


class Role(StrEnum):
    """What an arm is in a run, declared by its agent and its store (never guessed from names)."""

    CONTROL = "control"  # the agent without memory: every other arm is paired with it
    TREATMENT = "treatment"  # an agent with memory, under evaluation
    HARM_PROBE = "harm-probe"  # an agent that trusts memory as stored: it shows what bad memory does
    NEGATIVE_CONTROL = "negative-control"  # a store built to break the rules: it shows the checks catch it


@dataclass(frozen=True)
class Lookups:
    """What a session looked up in the store and the code."""

    verify_reads: int = 0  # cited lines the verifier read
    searches: int = 0
    reads: int = 0


@dataclass(frozen=True)
class Outcome:
    """The outcome on the task's surface: None where it does not apply, or the session did not run."""

    merged: bool | None = None
    findings: int | None = None
    correct_findings: int | None = None
    expected_findings: int | None = None
    answer_correct: bool | None = None
    task_success: bool | None = None


@dataclass(frozen=True)
class Recall:
    """Whether the memories the task needs were among the first K handed (None: it needs none)."""

    needed_at_5: bool | None = None
    needed_at_10: bool | None = None
    needed_at_20: bool | None = None
    needed_at_50: bool | None = None


RECALL_KS = tuple(int(f.name.rpartition("_")[2]) for f in fields(Recall))  # the ranks counted (``needed_at_K``)


@dataclass(frozen=True)
class Spent:
    """What a session spent on a model, as its agent reported it, and where its transcript is."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_tokens: int = 0
    cost_usd: float = 0.0
    model: str = ""
    transcript: str = ""


@dataclass(frozen=True)
class SessionRecord:
    """One session: what it was handed, what it did, how it went (`docs/metrics.md` names each)."""

    arm: str
    agent: str
    store: str
    role: Role
    scenario: str
    trial: int
    task: str
    surface: Surface
    user: str
    scenario_kind: str
    stratum: str
    index: int
    handed: int  # memories handed at the start
    injected_chars: int  # their size as text
    lookups: Lookups  # what the session looked up
    leaks: int
    expiry_violations: int
    contract: Breaches  # the store contract's promises, breaches counted: one column each (`PROMISES`)
    contract_chances: Chances  # the occasions to break each promise (written "forgotten=3;get_leaks=5")
    agent_error: bool
    infra_error: bool
    tampered: int
    origins: tuple[Origin, ...]  # the origins of the seeded memories handed (written ";"-joined)
    outcome: Outcome
    recall: Recall
    moved_given: int
    moved_reanchored: int
    stale_use: bool
    misled_origins: tuple[Origin, ...]
    healed: int
    spent: Spent


@dataclass(frozen=True)
class TrialRecord:
    """One trial: its seeded pool, and the bad memories of it healed by the end."""

    arm: str
    agent: str
    store: str
    scenario: str
    trial: int
    trial_id: str
    sessions: int
    seeded: int
    refused_seeds: int
    bad_initial: int
    healed: int
    bad_ids: tuple[str, ...]
    healed_ids: tuple[str, ...]
    bad_seeds: tuple[str, ...]  # the same memories by their seeded key (`EventRecord.seed`), in the same order
    healed_seeds: tuple[str, ...]


@dataclass(frozen=True)
class EventRecord:
    """One thing that happened to a memory in a session, with its origin and label in force."""

    arm: str
    agent: str
    store: str
    scenario: str
    trial: int
    task: str
    surface: Surface | None  # None: an event outside any session (a template rebuilt); written ""
    user: str
    seq: int
    kind: EventKind
    memory_id: str
    detail: str
    origin: Origin | None  # None: not a seeded memory; written ""
    truth: Label | None
    seed: str  # the seeded memory it is, by its scenario key (KEY#N for a copy), whatever id its store gave it

    def numbered(self, seq: int) -> EventRecord:
        """This event at place ``seq`` of the run (`dataclasses.replace`, without its checks:
        a run numbers every event, and they are many)."""
        made = object.__new__(EventRecord)
        made.__dict__.update(self.__dict__, seq=seq)
        return made


@dataclass(frozen=True)
class FindingRecord:
    """One finding a review session reported, and whether it was one the scenario expects."""

    arm: str
    agent: str
    store: str
    scenario: str
    trial: int
    task: str
    surface: Surface
    user: str
    path: str
    correct: bool
    note: str


@dataclass(frozen=True)
class FailureRecord:
    """A unit that could not run, and why."""

    arm: str
    agent: str
    store: str
    scenario: str
    trial: int
    error: str
    where: str


Record = SessionRecord | TrialRecord | EventRecord | FindingRecord | FailureRecord
