"""The SQL the built-in SQL backends share: one schema, its migrations and every record query,
written once and rendered for a `Dialect`.

SQLite and PostgreSQL differ here in five small ways, each a field of `Dialect`: how a query
names the table (PostgreSQL's lives in a schema), the type of a 64-bit integer, the function
that takes the larger of two values, whether reading a row to change it must lock it (SQLite's
write transaction already holds the whole file), and how a named parameter is written. What
differs beyond that (connecting, the version stamp, transactions, errors) belongs to each
backend's own module. Citations are JSON text in both, so no JSON type is needed.

Queries are written with ``{table}``, ``{integer}``, ``{greatest}`` and ``{lock}`` for the
dialect's words and ``:name`` for parameters, which are always passed by name; rows are read
by column name, as named tuples (`memstore.backends.rows`).
"""

from __future__ import annotations

import re
from abc import abstractmethod
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace
from datetime import datetime
from functools import lru_cache
from typing import Any, Protocol

from memstore.backends.base import PagedRecordStore, RecencyKey, Visibility, chain_order
from memstore.backends.rows import (
    COLUMNS,
    KIND_OF_VALUE,
    NOBODY,
    ROW_COLUMNS,
    Row,
    key_row,
    micros,
    moment,
    row_of,
    row_to_memory,
)
from memstore.model import Memory, Vote

__all__ = [
    "MIGRATIONS",
    "POSTGRESQL",
    "SCHEMA_VERSION",
    "SQLITE",
    "SWEEP_BATCH",
    "Connection",
    "Dialect",
    "SqlRecordStore",
]

SWEEP_BATCH = 1_000  # rows a sweep deletes per transaction: a long sweep never holds the lock long

# Version N is reached by running MIGRATIONS[N - 1] on a store at version N - 1.
MIGRATIONS: list[str] = [
    """
    CREATE TABLE {table} (
        id                 TEXT PRIMARY KEY,
        root               TEXT NOT NULL,
        repo               TEXT NOT NULL,
        kind               TEXT NOT NULL CHECK (kind IN ('fact', 'preference')),
        subject            TEXT NOT NULL,
        fact               TEXT NOT NULL,
        citations          TEXT NOT NULL,
        reason             TEXT NOT NULL,
        author             TEXT NOT NULL,
        surface            TEXT NOT NULL,
        created_at         {integer} NOT NULL,
        refreshed_at       {integer} NOT NULL,
        chain_refreshed_at {integer} NOT NULL,
        supersedes         TEXT,
        status             TEXT NOT NULL CHECK (status IN ('active', 'superseded', 'retired')),
        retired_reason     TEXT
    );
    CREATE INDEX memories_recent_facts ON {table} (repo, refreshed_at DESC, created_at DESC, id DESC)
        WHERE status = 'active' AND kind = 'fact';
    CREATE INDEX memories_recent_preferences ON {table} (author, refreshed_at DESC, created_at DESC, id DESC)
        WHERE status = 'active' AND kind = 'preference';
    CREATE INDEX memories_root ON {table} (root);
    CREATE INDEX memories_expiry ON {table} (chain_refreshed_at);
    """,
    # 2: votes (`RecordStore.vote`), each on one memory version, gone with its chain
    """
    CREATE TABLE {votes} (
        seq        {serial},
        memory_id  TEXT NOT NULL,
        root       TEXT NOT NULL,
        author     TEXT NOT NULL,
        up         {integer} NOT NULL CHECK (up IN (0, 1)),
        reason     TEXT NOT NULL,
        at         {integer} NOT NULL
    );
    CREATE INDEX votes_memory ON {votes} (memory_id, at, seq);
    CREATE INDEX votes_root ON {votes} (root);
    """,
]
SCHEMA_VERSION = len(MIGRATIONS)

_PARAMETER = re.compile(r":([a-z_][a-z0-9_]*)")


@dataclass(frozen=True)
class Dialect:
    """What one database writes differently in memstore's queries (see the module docstring)."""

    table: str  # the memories table as a query names it
    votes: str  # the votes table as a query names it
    serial: str  # an integer key counting up as rows are kept
    integer: str  # a 64-bit integer column
    greatest: str  # the larger of two values
    lock: str  # after a SELECT that reads a row to change it
    parameter: str  # a named parameter, ``{}`` for its name

    def sql(self, template: str) -> str:
        """``template`` in this dialect."""
        return _rendered(self, template)

    def in_schema(self, schema: str) -> Dialect:
        """This dialect with the memories table in ``schema`` (a name already checked)."""
        return replace(self, table=f'"{schema}".memories', votes=f'"{schema}".votes')

    def migrations(self, version: int, target: int) -> list[str]:
        """The statements that take a store from schema ``version`` to ``target``, in order."""
        return [
            self.sql(statement)
            for script in MIGRATIONS[version:target]
            for statement in script.split(";")
            if statement.strip()
        ]


SQLITE = Dialect(
    table="memories",
    votes="votes",
    serial="INTEGER PRIMARY KEY AUTOINCREMENT",
    integer="INTEGER",
    greatest="max",
    lock="",
    parameter=":{}",
)
POSTGRESQL = Dialect(
    table="memories",
    votes="votes",
    serial="BIGSERIAL PRIMARY KEY",
    integer="BIGINT",
    greatest="GREATEST",
    lock=" FOR UPDATE",
    parameter="%({})s",
)


@lru_cache(maxsize=256)
def _rendered(dialect: Dialect, template: str) -> str:
    words = {
        "{table}": dialect.table,
        "{votes}": dialect.votes,
        "{serial}": dialect.serial,
        "{integer}": dialect.integer,
        "{greatest}": dialect.greatest,
    }
    text = template.replace("{lock}", dialect.lock)
    for word, said in words.items():
        text = text.replace(word, said)
    return _PARAMETER.sub(lambda found: dialect.parameter.format(found.group(1)), text)


# -- the queries ------------------------------------------------------------------------------

_INSERT = f"INSERT INTO {{table}} ({', '.join(ROW_COLUMNS)}) VALUES ({', '.join(':' + c for c in ROW_COLUMNS)})"
_LOAD = f"SELECT {COLUMNS} FROM {{table}} WHERE id = :id AND chain_refreshed_at > :cutoff"
_HEAD = (
    "SELECT root, refreshed_at, chain_refreshed_at FROM {table} "
    "WHERE id = :id AND status = 'active' AND chain_refreshed_at > :cutoff{lock}"
)
_SUPERSEDED = "UPDATE {table} SET status = 'superseded' WHERE id = :id"
_CHAIN_REFRESHED = "UPDATE {table} SET chain_refreshed_at = :chain WHERE root = :root"
_RECENT = (
    "SELECT {columns} FROM {{table}} WHERE {who} = :who AND status = 'active' AND kind = '{kind}' "
    "AND refreshed_at > :cutoff {page}ORDER BY refreshed_at DESC, created_at DESC, id DESC LIMIT :limit"
)
_PAGE = "AND (refreshed_at, created_at, id) < (:after_refreshed, :after_created, :after_id) "
_REFRESH = (
    "UPDATE {table} SET refreshed_at = {greatest}(refreshed_at, :now) "
    "WHERE id = :id AND status = 'active' AND chain_refreshed_at > :cutoff"
)
_CHAIN_OF = "SELECT root, {greatest}(chain_refreshed_at, refreshed_at) AS chain FROM {table} WHERE id = :id"
_RETIRE = (
    "UPDATE {table} SET status = 'retired', retired_reason = :reason "
    "WHERE id = :id AND status = 'active' AND chain_refreshed_at > :cutoff"
)
_DELETE_CHAIN = "DELETE FROM {table} WHERE root = (SELECT root FROM {table} WHERE id = :id)"
_DELETE_CHAIN_VOTES = "DELETE FROM {votes} WHERE root = (SELECT root FROM {table} WHERE id = :id)"
_SWEEP_VOTES = "DELETE FROM {votes} WHERE NOT EXISTS (SELECT 1 FROM {table} WHERE {table}.root = {votes}.root)"
_ACTIVE_ROOT = "SELECT root FROM {table} WHERE id = :id AND status = 'active' AND chain_refreshed_at > :cutoff{lock}"
_VOTE = (
    "INSERT INTO {votes} (memory_id, root, author, up, reason, at) "
    "VALUES (:memory_id, :root, :author, :up, :reason, :at)"
)
_IDS_A_QUERY = 500  # memory ids one query of votes names (SQLite's variables are bounded)
_VOTES = "SELECT seq, memory_id, author, up, reason, at FROM {votes} WHERE memory_id IN ({ids}) ORDER BY at, seq"
_CHAIN = (
    f"SELECT {COLUMNS} FROM {{table}} WHERE root = (SELECT root FROM {{table}} WHERE id = :id) "
    "AND chain_refreshed_at > :cutoff ORDER BY created_at, id"
)
_REPOSITORIES = "SELECT DISTINCT repo FROM {table} WHERE kind = 'fact' AND chain_refreshed_at > :cutoff ORDER BY repo"
_SWEEP = "DELETE FROM {table} WHERE id IN (SELECT id FROM {table} WHERE chain_refreshed_at <= :cutoff LIMIT :batch)"


# recent()'s two reads (a repository's facts, an author's preferences), from the top or as a page.
_RECENT_FACTS = {
    paged: _RECENT.format(columns=COLUMNS, who="repo", kind="fact", page=_PAGE * paged) for paged in (0, 1)
}
_RECENT_PREFERENCES = {
    paged: _RECENT.format(columns=COLUMNS, who="author", kind="preference", page=_PAGE * paged) for paged in (0, 1)
}


class Cursor(Protocol):
    """What the shared queries read of a cursor."""

    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...


class Connection(Protocol):
    """What the shared queries need of a connection: rows come back as named tuples (`rows.Row`)."""

    def execute(self, sql: str, parameters: Mapping[str, Any], /) -> Any: ...


class SqlRecordStore(PagedRecordStore):
    """`RecordStore`'s record operations in SQL, for any `Dialect`.

    A backend supplies its `dialect`, a transaction (`_write`) and a read (`_rows`), both with
    its database's errors translated; everything else is here."""

    dialect: Dialect

    @abstractmethod
    def _write(self) -> AbstractContextManager[Connection]:
        """One write transaction; committed when the block ends, rolled back on an error."""

    @abstractmethod
    def _rows(self, query: str, params: Mapping[str, Any]) -> Sequence[Row]:
        """The rows of one query, each a named tuple (`rows.Row`)."""

    def _read(self, template: str, params: Mapping[str, Any]) -> list[Memory]:
        return [row_to_memory(row) for row in self._rows(self.dialect.sql(template), params)]

    def _run(self, conn: Connection, template: str, params: Mapping[str, Any]) -> Cursor:
        cursor: Cursor = conn.execute(self.dialect.sql(template), params)
        return cursor

    # -- writes ---------------------------------------------------------------------------

    def _insert(self, memory: Memory) -> None:
        with self._write() as conn:
            self._run(conn, _INSERT, row_of(memory, memory.id))

    def _insert_all(self, memories: Sequence[Memory]) -> None:
        """New, unrelated memories in one transaction: every one, or none (imports and benchmarks)."""
        with self._write() as conn:
            for memory in memories:
                self._run(conn, _INSERT, row_of(memory, memory.id))

    insert_many = _insert_all  # the name benchmarks bulk-load with

    def _supersede(self, old_id: str, new: Memory, cutoff: datetime) -> Memory | None:
        with self._write() as conn:
            head = self._run(conn, _HEAD, {"id": old_id, "cutoff": micros(cutoff)}).fetchone()
            if head is None:  # gone, expired, or another correction won (it held the lock first)
                return None
            root = head.root
            self._run(conn, _SUPERSEDED, {"id": old_id})
            # The new head's window never starts before the version it replaces (clocks of two
            # writers may disagree), and every version of the chain keeps the one expiry time.
            new = replace(new, refreshed_at=moment(max(micros(new.refreshed_at), head.refreshed_at)))
            self._run(conn, _INSERT, row_of(new, root))
            chain = max(head.chain_refreshed_at, micros(new.refreshed_at))
            self._run(conn, _CHAIN_REFRESHED, {"chain": chain, "root": root})
            return new

    def _refresh(self, memory_id: str, now: datetime, cutoff: datetime) -> bool:
        with self._write() as conn:
            changed = self._run(conn, _REFRESH, {"now": micros(now), "id": memory_id, "cutoff": micros(cutoff)})
            if changed.rowcount != 1:
                return False
            found = self._run(conn, _CHAIN_OF, {"id": memory_id}).fetchone()
            self._run(conn, _CHAIN_REFRESHED, {"chain": found.chain, "root": found.root})
            return True

    def _retire(self, memory_id: str, reason: str, cutoff: datetime) -> bool:
        with self._write() as conn:
            changed = self._run(conn, _RETIRE, {"reason": reason, "id": memory_id, "cutoff": micros(cutoff)})
            return changed.rowcount == 1

    def _delete_chain(self, memory_id: str) -> None:
        with self._write() as conn:
            self._run(conn, _DELETE_CHAIN_VOTES, {"id": memory_id})
            self._run(conn, _DELETE_CHAIN, {"id": memory_id})

    def _vote(self, vote: Vote, cutoff: datetime) -> bool:
        with self._write() as conn:
            found = self._run(conn, _ACTIVE_ROOT, {"id": vote.memory_id, "cutoff": micros(cutoff)}).fetchone()
            if found is None:  # gone, expired, or no longer active
                return False
            kept = {"memory_id": vote.memory_id, "root": found.root, "author": vote.author, "up": int(vote.up)}
            self._run(conn, _VOTE, {**kept, "reason": vote.reason, "at": micros(vote.at)})
            return True

    def _votes(self, memory_ids: Sequence[str]) -> list[Vote]:
        found = []
        for start in range(0, len(memory_ids), _IDS_A_QUERY):
            named = {f"id{n}": memory_id for n, memory_id in enumerate(memory_ids[start : start + _IDS_A_QUERY])}
            query = self.dialect.sql(_VOTES.replace("{ids}", ", ".join(f":{name}" for name in named)))
            found += [
                (r.at, r.seq, Vote(r.memory_id, r.author, bool(r.up), r.reason, moment(r.at)))
                for r in self._rows(query, named)
            ]
        return [vote for _, _, vote in sorted(found, key=lambda kept: kept[:2])]

    def _sweep(self, cutoff: datetime) -> int:
        """Delete expired chains, a batch per transaction."""
        deleted = 0
        while True:
            with self._write() as conn:
                batch = self._run(conn, _SWEEP, {"cutoff": micros(cutoff), "batch": SWEEP_BATCH}).rowcount
            deleted += batch
            if batch < SWEEP_BATCH:
                with self._write() as conn:
                    self._run(conn, _SWEEP_VOTES, {})
                return deleted

    # -- reads ----------------------------------------------------------------------------

    def _load(self, memory_id: str, cutoff: datetime) -> Memory | None:
        found = self._read(_LOAD, {"id": memory_id, "cutoff": micros(cutoff)})
        return found[0] if found else None

    def _load_visible(self, memory_id: str, cutoff: datetime, visible: Visibility) -> Memory | None:
        # One indexed look-up, and the row judged on its repo, kind and author before anything
        # is built: a memory the actor may not see is never built (it costs about what a missing
        # one costs, so timing tells little).
        found = self._rows(self.dialect.sql(_LOAD), {"id": memory_id, "cutoff": micros(cutoff)})
        row = found[0] if found else None
        repo, kind, author = (row.repo, row.kind, row.author) if row is not None else NOBODY
        if not visible(repo, KIND_OF_VALUE[kind], author) or row is None:
            return None
        return row_to_memory(row)

    def _recent(
        self,
        repo: str,
        *,
        facts: bool,
        preferences_of: str | None,
        cutoff: datetime,
        limit: int,
        after: RecencyKey | None = None,
    ) -> list[Memory]:
        # A page after a memory: strictly older by recent()'s key, compared as one row value.
        page = dict(zip(("after_refreshed", "after_created", "after_id"), key_row(after), strict=True)) if after else {}
        asked = {"cutoff": micros(cutoff), "limit": limit, **page}
        rows: list[Row] = []
        if facts:
            rows += self._rows(self.dialect.sql(_RECENT_FACTS[bool(after)]), {"who": repo, **asked})
        if preferences_of is not None:
            rows += self._rows(self.dialect.sql(_RECENT_PREFERENCES[bool(after)]), {"who": preferences_of, **asked})
        if facts and preferences_of is not None:
            # Merge the two ordered lists on the raw columns; build only the memories returned.
            rows.sort(key=lambda row: (row.refreshed_at, row.created_at, row.id), reverse=True)
        return [row_to_memory(row) for row in rows[:limit]]

    def _repositories(self, cutoff: datetime) -> list[str]:
        return [str(row.repo) for row in self._rows(self.dialect.sql(_REPOSITORIES), {"cutoff": micros(cutoff)})]

    def _chain(self, memory_id: str, cutoff: datetime) -> list[Memory]:
        return chain_order(self._read(_CHAIN, {"id": memory_id, "cutoff": micros(cutoff)}))
