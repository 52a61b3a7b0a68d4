"""The row layout the SQL backends share (SQLite and PostgreSQL): times as integer microseconds
since the epoch, citations as JSON text, and a row as a named tuple, read by column name."""

from __future__ import annotations

import json
from collections import namedtuple
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from operator import attrgetter
from typing import Any

from memstore.model import Citation, Kind, Memory, Status, Surface

__all__ = [
    "COLUMNS",
    "KIND_OF_VALUE",
    "MEMORY_COLUMNS",
    "NOBODY",
    "ROW_COLUMNS",
    "Row",
    "key_row",
    "micros",
    "moment",
    "row_of",
    "row_to_memory",
    "row_type",
]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_US = timedelta(microseconds=1)

MEMORY_COLUMNS = (  # the columns a memory is read from
    "id", "repo", "kind", "subject", "fact", "citations", "reason", "author", "surface",
    "created_at", "refreshed_at", "supersedes", "status", "retired_reason",
)  # fmt: skip
ROW_COLUMNS = ("root", *MEMORY_COLUMNS, "chain_refreshed_at")  # every column a row is written with
COLUMNS = ", ".join(MEMORY_COLUMNS)  # the select list of a memory
KIND_OF_VALUE = {kind.value: kind for kind in Kind}  # a stored kind, looked up rather than parsed on each read
NOBODY = ("-/-", "fact", "")  # the (repo, kind, author) a missing id is judged as (no one may see it)


Row = Any  # a named tuple of `row_type` (psycopg's ``namedtuple_row`` makes the same): ``row.repo``


@lru_cache(maxsize=64)
def row_type(names: tuple[str, ...]) -> Any:
    """The named tuple of a row with these columns, made once for each select list."""
    return namedtuple("Row", names)


_MemoryRow = row_type(MEMORY_COLUMNS)
_values = attrgetter(*MEMORY_COLUMNS)  # a row's values by name, as one tuple (in C: reads are hot)


def micros(at: datetime) -> int:
    """``at`` as integer microseconds since the epoch."""
    return (at - _EPOCH) // _US


def moment(us: int) -> datetime:
    """Integer microseconds since the epoch as a UTC datetime."""
    return _EPOCH + us * _US


def key_row(key: tuple[datetime, datetime, str]) -> tuple[int, int, str]:
    """recent()'s key of a memory (refreshed_at, created_at, id) as the columns hold it."""
    refreshed_at, created_at, memory_id = key
    return micros(refreshed_at), micros(created_at), memory_id


def row_of(memory: Memory, root: str) -> dict[str, Any]:
    """The row of ``memory`` in the chain rooted at ``root``, by column name (`ROW_COLUMNS`)."""
    return {
        "id": memory.id,
        "root": root,
        "repo": memory.repo,
        "kind": memory.kind.value,
        "subject": memory.subject,
        "fact": memory.fact,
        "citations": json.dumps([c.to_dict() for c in memory.citations], ensure_ascii=False),
        "reason": memory.reason,
        "author": memory.author,
        "surface": memory.surface.value,
        "created_at": micros(memory.created_at),
        "refreshed_at": micros(memory.refreshed_at),
        "chain_refreshed_at": micros(memory.refreshed_at),
        "supersedes": memory.supersedes,
        "status": memory.status.value,
        "retired_reason": memory.retired_reason,
    }


def row_to_memory(row: Row) -> Memory:
    """A memory from a row holding `MEMORY_COLUMNS` (citations were validated when stored:
    trusted here).

    A row read before gives the memory it gave then. Memories are immutable, and the row is
    every value the memory is made of. The audit of a trial reads each live memory back every
    session, and building one is most of what a read costs."""
    return _decoded(_values(row))


@lru_cache(maxsize=1 << 15)
def _decoded(values: tuple[Any, ...]) -> Memory:
    row = _MemoryRow._make(values)
    return Memory(
        id=row.id,
        repo=row.repo,
        kind=KIND_OF_VALUE[row.kind],
        subject=row.subject,
        fact=row.fact,
        citations=tuple(
            Citation.trusted(c["path"], c["line"], c.get("end_line"), c.get("snippet"), c.get("commit"))
            for c in json.loads(row.citations)
        ),
        reason=row.reason,
        author=row.author,
        surface=Surface(row.surface),
        created_at=moment(row.created_at),
        refreshed_at=moment(row.refreshed_at),
        supersedes=row.supersedes,
        status=Status(row.status),
        retired_reason=row.retired_reason,
    )
