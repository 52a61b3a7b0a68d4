"""The run's typed spine, from grading to report: a leaf of the harness that every stage reads.

- `rows`: the records of each table (`SessionRecord`, `TrialRecord`, `EventRecord`,
  `FindingRecord`, `FailureRecord`, and the parts of a session's: `Lookups`, `Outcome`,
  `Recall`, `Spent`), and `Role`;
- `events`: `EventKind`, the kinds of event a session records;
- `labels`: what the grading knows of a seeded memory (`Origin`, `Truth`) and an event's label in
  force (`Label`);
- `promises`: the store contract's promises (`Breaches`, one field each; `PROMISES` read off it);
- `tables`: `TABLES`, every table with its record; the column names (`SESSION.task_success`),
  and the plain row a record is written as (`row`, `from_row`);
- `meta`: `RunMeta` and `ArmMeta`, what a run was (``results.json``'s ``run``);
- `upgrade`: `FORMAT`, the version of all of it, and `upgrade`, reading an older one.

It imports the core of memstore, pandas and the standard library, never another stage.
"""

from memstore.harness.records.events import EventKind
from memstore.harness.records.labels import Label, Origin, Truth
from memstore.harness.records.meta import ArmMeta, RunMeta
from memstore.harness.records.promises import (
    CONTRACT_COLUMNS,
    EXPIRY_PROMISES,
    LEAK_PROMISES,
    PROMISES,
    Breaches,
    Chances,
    Promise,
)
from memstore.harness.records.rows import (
    RECALL_KS,
    EventRecord,
    FailureRecord,
    FindingRecord,
    Lookups,
    Outcome,
    Recall,
    Record,
    Role,
    SessionRecord,
    Spent,
    TrialRecord,
)
from memstore.harness.records.tables import (
    EVENT,
    FAILURE,
    FINDING,
    PROMISE,
    SESSION,
    SHARD_TABLES,
    TABLES,
    TRIAL,
    Columns,
    columns,
    from_row,
    row,
)
from memstore.harness.records.upgrade import FORMAT, format_of, upgrade, upgrade_tables

__all__ = [
    "CONTRACT_COLUMNS",
    "EVENT",
    "EXPIRY_PROMISES",
    "FAILURE",
    "FINDING",
    "FORMAT",
    "LEAK_PROMISES",
    "PROMISE",
    "PROMISES",
    "RECALL_KS",
    "SESSION",
    "SHARD_TABLES",
    "TABLES",
    "TRIAL",
    "ArmMeta",
    "Breaches",
    "Chances",
    "Columns",
    "EventKind",
    "EventRecord",
    "FailureRecord",
    "FindingRecord",
    "Label",
    "Lookups",
    "Origin",
    "Outcome",
    "Promise",
    "Recall",
    "Record",
    "Role",
    "RunMeta",
    "SessionRecord",
    "Spent",
    "TrialRecord",
    "Truth",
    "columns",
    "format_of",
    "from_row",
    "row",
    "upgrade",
    "upgrade_tables",
]
