"""The run's records: what one trial of one arm produces, before any analysis reads it.

Each table of a run folder has one frozen record here: `SessionRecord`, `TrialRecord`,
`EventRecord`, `FindingRecord`, `FailureRecord`. A record's fields are its table's columns, in
order (`columns`), and `row` is the plain mapping a shard and a CSV keep. `FORMAT` is the
version of that layout, written into ``results.json``, the tables' manifest and every shard;
`memstore.harness.runfolder.upgrade` reads older ones.

`Role` is what an arm is in a run, declared by its agent and its store.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from enum import StrEnum
from typing import Any

__all__ = [
    "FORMAT",
    "RECALL_KS",
    "EventRecord",
    "FailureRecord",
    "FindingRecord",
    "Role",
    "SessionRecord",
    "TrialRecord",
    "columns",
    "row",
]

FORMAT = 4  # 1: before versions were written (no "format" key); 2: one stubs' budget for the whole run;
# 3: memories paired across arms by the id their store gave them (4: by their seeded key)
RECALL_KS = (5, 10, 20, 50)  # the ranks at which retrieval recall is counted (``needed_at_K``)


class Role(StrEnum):
    """What an arm is in a run, declared by its agent and its store (never guessed from names)."""

    CONTROL = "control"  # the agent without memory: every other arm is paired with it
    TREATMENT = "treatment"  # an agent with memory, under evaluation
    HARM_PROBE = "harm-probe"  # an agent that trusts memory as stored: it shows what bad memory does
    NEGATIVE_CONTROL = "negative-control"  # a store built to break the rules: it shows the checks catch it


@dataclass(frozen=True)
class SessionRecord:
    """One session: what it was handed, what it did, how it went (`docs/metrics.md` names each)."""

    arm: str
    agent: str
    store: str
    role: str
    scenario: str
    trial: int
    task: str
    surface: str
    user: str
    scenario_kind: str
    stratum: str
    index: int
    handed: int  # memories handed at the start
    injected_chars: int  # their size as text
    verify_reads: int
    searches: int
    reads: int
    leaks: int
    expiry_violations: int
    # the store contract's promises (`memstore.harness.run.promises.PROMISES`), breaches counted
    forgotten: int
    unkept_writes: int
    lost_memories: int
    unsuperseded: int
    superseded_returned: int
    retired_returned: int
    refresh_ignored: int
    expired_returned: int
    order_breaches: int
    altered_memories: int
    scope_leaks: int
    preference_leaks: int
    surface_leaks: int
    get_leaks: int
    permission_breaches: int
    contract_chances: str  # the occasions to break each promise: "forgotten=3;get_leaks=5" (`audit.chances_text`)
    agent_error: bool
    infra_error: bool
    tampered: int
    origins: str  # the origins of the seeded memories handed, ";"-joined
    # the outcome on the task's surface (None where it does not apply, or the session did not run)
    merged: bool | None
    findings: int | None
    correct_findings: int | None
    expected_findings: int | None
    answer_correct: bool | None
    task_success: bool | None
    # whether the memories the task needs were among the first K handed (None: it needs none)
    needed_at_5: bool | None
    needed_at_10: bool | None
    needed_at_20: bool | None
    needed_at_50: bool | None
    moved_given: int
    moved_reanchored: int
    stale_use: bool
    misled_origins: str
    healed: int
    input_tokens: int
    output_tokens: int
    cache_tokens: int
    cost_usd: float
    model: str
    transcript: str


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
    bad_ids: str
    healed_ids: str
    bad_seeds: str  # the same memories by their seeded key (`EventRecord.seed`), in the same order
    healed_seeds: str


@dataclass(frozen=True)
class EventRecord:
    """One thing that happened to a memory in a session, with its origin and label in force."""

    arm: str
    agent: str
    store: str
    scenario: str
    trial: int
    task: str
    surface: str
    user: str
    seq: int
    kind: str
    memory_id: str
    detail: str
    origin: str
    truth: str
    seed: str  # the seeded memory it is, by its scenario key (KEY#N for a copy), whatever id its store gave it


@dataclass(frozen=True)
class FindingRecord:
    """One finding a review session reported, and whether it was one the scenario expects."""

    arm: str
    agent: str
    store: str
    scenario: str
    trial: int
    task: str
    surface: str
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


def columns(record: type[Record]) -> tuple[str, ...]:
    """A table's columns, in order: its record's fields."""
    return tuple(f.name for f in fields(record))


_NAMES: dict[type, tuple[str, ...]] = {}


def row(record: Record) -> dict[str, Any]:
    """The plain mapping a shard and a table keep of ``record`` (what `dataclasses.asdict` gives:
    every field is a plain value, so nothing below the record needs copying)."""
    kind = type(record)
    names = _NAMES.get(kind)
    if names is None:
        names = _NAMES[kind] = columns(kind)
    return {name: getattr(record, name) for name in names}
