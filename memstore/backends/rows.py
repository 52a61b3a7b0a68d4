"""The row layout the SQL backends share (SQLite and PostgreSQL): times as integer microseconds
since the epoch, citations as JSON, and the column order `row_to_memory` reads."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import Any

from memstore.model import Citation, Kind, Memory, Status, Surface

__all__ = ["COLUMNS", "KINDS", "NOBODY", "citations_json", "key_row", "micros", "moment", "row_to_memory"]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_US = timedelta(microseconds=1)

COLUMNS = (
    "id, repo, kind, subject, fact, citations, reason, author, surface, "
    "created_at, refreshed_at, supersedes, status, retired_reason"
)
KINDS = {kind.value: kind for kind in Kind}  # a stored kind, looked up rather than parsed on each read
NOBODY = ("-/-", "fact", "")  # the record a missing id is judged as (no one may see it)


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


def citations_json(memory: Memory) -> str:
    return json.dumps([c.to_dict() for c in memory.citations], ensure_ascii=False)


def row_to_memory(row: Sequence[Any]) -> Memory:
    """A memory from a row of `COLUMNS` (citations were validated when stored: trusted here).

    A row read before gives the memory it gave then (memories are immutable, and the row is
    every value the memory is made of): the audit of a trial reads each live memory back every
    session, and building one is most of what a read costs."""
    return _decoded(tuple(row))


@lru_cache(maxsize=1 << 15)
def _decoded(row: tuple[Any, ...]) -> Memory:
    return Memory(
        id=row[0],
        repo=row[1],
        kind=Kind(row[2]),
        subject=row[3],
        fact=row[4],
        citations=tuple(
            Citation.trusted(c["path"], c["line"], c.get("end_line"), c.get("snippet"), c.get("commit"))
            for c in json.loads(row[5])
        ),
        reason=row[6],
        author=row[7],
        surface=Surface(row[8]),
        created_at=moment(row[9]),
        refreshed_at=moment(row[10]),
        supersedes=row[11],
        status=Status(row[12]),
        retired_reason=row[13],
    )
