"""``sqlite:///path/to.db``: the embedded default store, one SQLite file.

Safe to share between processes: WAL journaling, a busy timeout, and every write in one
``BEGIN IMMEDIATE`` transaction, so concurrent writers queue instead of losing updates
and a writer killed mid-transaction leaves the last committed state. ``synchronous=NORMAL``
keeps commits cheap; with WAL it survives a killed process (only a power cut can lose
the newest transactions, never corrupt the file).

The schema is versioned (``PRAGMA user_version``) and stamped with an application id,
so a file that is not a memstore store, or comes from a newer memstore, is refused
before anything is written to it. This module is the only one that talks to sqlite3;
its errors are translated into `StorageError` here.
"""

from __future__ import annotations

import sqlite3
import threading
import urllib.parse
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

from memstore.backends import StoreOptions, TrialStore, per_trial
from memstore.backends.base import PagedRecordStore, RecencyKey, Visibility, chain_order
from memstore.backends.rows import COLUMNS as _COLUMNS
from memstore.backends.rows import KINDS as _KINDS
from memstore.backends.rows import NOBODY as _NOBODY
from memstore.backends.rows import citations_json, key_row
from memstore.backends.rows import micros as _us
from memstore.backends.rows import moment as _moment
from memstore.backends.rows import row_to_memory as _row_to_memory  # a module global: tests watch it
from memstore.backends.sqlite_file import (
    APPLICATION_ID,
    MIGRATIONS,
    SCHEMA_VERSION,
    parse_sqlite_uri,
    refuse_foreign_file,
    rollback,
    translate,
    with_retry,
    writable,
)
from memstore.errors import ConfigurationError, IncompatibleStore, StorageError
from memstore.model import Memory

__all__ = ["APPLICATION_ID", "MIGRATIONS", "SCHEMA_VERSION", "SqliteStore", "open_sqlite", "parse_sqlite_uri"]


class SqliteStore(PagedRecordStore):
    """A `MemoryStore` in one SQLite file (or ``:memory:``).

    Opened read-only (``read_only=True``, or a file this process cannot write) it answers
    every read and refuses every write with `StorageError`; it never changes the file.
    """

    def __init__(
        self, path: str, options: StoreOptions, *, busy_timeout: float = 30.0, read_only: bool = False
    ) -> None:
        super().__init__(options)
        self.path = path
        self.read_only = read_only or options.read_only
        self._lock = threading.RLock()
        self._conn = self._connect(busy_timeout, create=options.create)

    def __repr__(self) -> str:
        return f"SqliteStore({self.path!r}{', read-only' if self.read_only else ''})"

    # -- opening and migrating ------------------------------------------------------

    def _open(self, busy_timeout: float, *, create: bool) -> sqlite3.Connection:
        if self.path == ":memory:":
            return sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        exists = refuse_foreign_file(Path(self.path), create=create and not self.read_only)
        if exists and not writable(Path(self.path)):
            self.read_only = True
        target = "file:" + urllib.parse.quote(str(Path(self.path).absolute()))

        def connect(uri: str) -> sqlite3.Connection:
            return sqlite3.connect(uri, timeout=busy_timeout, isolation_level=None, check_same_thread=False, uri=True)

        if not self.read_only:
            return connect(target)
        try:
            conn = connect(f"{target}?mode=ro")
            conn.execute("SELECT count(*) FROM sqlite_schema").fetchone()
            return conn
        except sqlite3.OperationalError:
            # A WAL file on a read-only file system, with no shared-memory file beside it: nothing
            # can change it under us, so it can be read as immutable.
            return connect(f"{target}?immutable=1")

    def _connect(self, busy_timeout: float, *, create: bool) -> sqlite3.Connection:
        try:
            conn = self._open(busy_timeout, create=create)
        except sqlite3.Error as exc:
            raise translate(exc, f"cannot open {self.path}") from exc
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
            version = self._check_identity(conn)  # read only: nothing is written to a file refused here
            if self.read_only:
                if version != SCHEMA_VERSION:
                    raise StorageError(
                        f"{self.path} is read-only and needs a schema upgrade (version {version} to "
                        f"{SCHEMA_VERSION}); open it once with write access"
                    )
                return conn
            if self.path != ":memory:":
                with_retry(lambda: conn.execute("PRAGMA journal_mode = WAL"), busy_timeout)
            conn.execute("PRAGMA synchronous = NORMAL")
            self._migrate(conn)
        except sqlite3.DatabaseError as exc:
            conn.close()
            raise translate(exc, f"{self.path} cannot be opened as a memstore store", opening=True) from exc
        except BaseException:
            conn.close()
            raise
        return conn

    def _check_identity(self, conn: sqlite3.Connection) -> int:
        """The schema version of the store; raises for a file that is not a store this can open.

        The stamp, the version and the schema are read in one transaction, so a store another
        process is creating right now is seen either before it started or after it finished.
        """
        began = not conn.in_transaction
        if began:
            conn.execute("BEGIN")
        try:
            app_id = conn.execute("PRAGMA application_id").fetchone()[0]
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            tables = conn.execute("SELECT count(*) FROM sqlite_schema").fetchone()[0]
        finally:
            if began:
                conn.execute("COMMIT")
        if app_id == 0 and version == 0:
            if tables:
                raise IncompatibleStore(
                    f"{self.path} is a SQLite database of something else ({tables} schema objects "
                    "and no memstore stamp); refusing to touch it"
                )
        elif app_id != APPLICATION_ID:
            raise IncompatibleStore(
                f"{self.path} is a SQLite database of another application (application_id {app_id:#x}); "
                "refusing to touch it"
            )
        elif version == 0:
            raise IncompatibleStore(
                f"{self.path} carries memstore's stamp but no schema version: it was not written by memstore; "
                "refusing to touch it"
            )
        elif version > SCHEMA_VERSION:
            raise IncompatibleStore(
                f"{self.path} was written by a newer memstore (schema version {version}; this one "
                f"reads up to {SCHEMA_VERSION}); upgrade memstore to open it"
            )
        return int(version)

    def _migrate(self, conn: sqlite3.Connection) -> None:
        if conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION:
            return
        conn.execute("BEGIN IMMEDIATE")
        try:
            # Read again under the write lock: another process may have migrated meanwhile.
            version = self._check_identity(conn)
            for target in range(version + 1, SCHEMA_VERSION + 1):
                for statement in MIGRATIONS[target - 1].split(";"):
                    if statement.strip():
                        conn.execute(statement)
            conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            conn.execute("COMMIT")
        except BaseException:
            rollback(conn)
            raise

    def close(self) -> None:
        """Close the connection; the store cannot be used afterwards."""
        with self._lock:
            self._conn.close()

    # -- plumbing -------------------------------------------------------------------

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        if self.read_only:
            raise StorageError(f"{self.path} is open read-only; this command cannot change it")
        with self._lock:
            try:
                self._conn.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                raise translate(exc, f"cannot write to {self.path}") from exc
            try:
                yield self._conn
                self._conn.execute("COMMIT")
            except sqlite3.Error as exc:
                rollback(self._conn)
                raise translate(exc, f"writing to {self.path} failed") from exc
            except BaseException:
                rollback(self._conn)
                raise

    def _rows(self, sql: str, params: Sequence[Any]) -> list[Any]:
        with self._lock:
            try:
                return self._conn.execute(sql, params).fetchall()
            except sqlite3.Error as exc:
                raise translate(exc, f"reading {self.path} failed") from exc

    def _read(self, sql: str, params: Sequence[Any]) -> list[Memory]:
        return [_row_to_memory(row) for row in self._rows(sql, params)]

    @staticmethod
    def _insert_row(conn: sqlite3.Connection, memory: Memory, root: str) -> None:
        conn.execute(
            "INSERT INTO memories (id, root, repo, kind, subject, fact, citations, reason, author, surface, "
            "created_at, refreshed_at, chain_refreshed_at, supersedes, status, retired_reason) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                memory.id,
                root,
                memory.repo,
                memory.kind.value,
                memory.subject,
                memory.fact,
                citations_json(memory),
                memory.reason,
                memory.author,
                memory.surface.value,
                _us(memory.created_at),
                _us(memory.refreshed_at),
                _us(memory.refreshed_at),
                memory.supersedes,
                memory.status.value,
                memory.retired_reason,
            ),
        )

    # -- record operations ----------------------------------------------------------

    def _insert(self, memory: Memory) -> None:
        with self._write() as conn:
            self._insert_row(conn, memory, memory.id)

    def _insert_all(self, memories: Sequence[Memory]) -> None:
        """New, unrelated memories in one transaction: every one, or none (imports and benchmarks)."""
        with self._write() as conn:
            for memory in memories:
                self._insert_row(conn, memory, memory.id)

    insert_many = _insert_all  # the name benchmarks bulk-load with

    def _supersede(self, old_id: str, new: Memory, cutoff: datetime) -> Memory | None:
        with self._write() as conn:
            found = conn.execute(
                "SELECT root, refreshed_at, chain_refreshed_at FROM memories "
                "WHERE id = ? AND status = 'active' AND chain_refreshed_at > ?",
                (old_id, _us(cutoff)),
            ).fetchone()
            if found is None:
                return None
            root, old_refreshed, chain = found
            conn.execute("UPDATE memories SET status = 'superseded' WHERE id = ?", (old_id,))
            # The new head's window never starts before the version it replaces (clocks of two
            # writers may disagree), and every version of the chain keeps the one expiry time.
            new = replace(new, refreshed_at=_moment(max(_us(new.refreshed_at), old_refreshed)))
            self._insert_row(conn, new, root)
            chain = max(chain, _us(new.refreshed_at))
            conn.execute("UPDATE memories SET chain_refreshed_at = ? WHERE root = ?", (chain, root))
            return new

    def _load(self, memory_id: str, cutoff: datetime) -> Memory | None:
        found = self._read(
            f"SELECT {_COLUMNS} FROM memories WHERE id = ? AND chain_refreshed_at > ?",
            (memory_id, _us(cutoff)),
        )
        return found[0] if found else None

    def _load_visible(self, memory_id: str, cutoff: datetime, visible: Visibility) -> Memory | None:
        # One indexed look-up, and the row judged on its repo, kind and author before anything
        # is built: a memory the actor may not see is never built (it costs about what a missing
        # one costs, so timing tells little).
        found = self._rows(
            f"SELECT {_COLUMNS} FROM memories WHERE id = ? AND chain_refreshed_at > ?", (memory_id, _us(cutoff))
        )
        row = found[0] if found else None
        repo, kind, author = (row[1], row[2], row[7]) if row is not None else _NOBODY
        if not visible(repo, _KINDS[kind], author) or row is None:
            return None
        return _row_to_memory(row)

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
        order = "ORDER BY refreshed_at DESC, created_at DESC, id DESC LIMIT ?"
        # A page after a memory: strictly older by recent()'s key, compared as one row value.
        page, key = ("AND (refreshed_at, created_at, id) < (?, ?, ?) ", key_row(after)) if after else ("", ())
        rows: list[Any] = []
        if facts:
            rows += self._rows(
                f"SELECT {_COLUMNS} FROM memories WHERE repo = ? AND status = 'active' AND kind = 'fact' "
                f"AND refreshed_at > ? {page}{order}",
                (repo, _us(cutoff), *key, limit),
            )
        if preferences_of is not None:
            rows += self._rows(
                f"SELECT {_COLUMNS} FROM memories WHERE author = ? AND status = 'active' "
                f"AND kind = 'preference' AND refreshed_at > ? {page}{order}",
                (preferences_of, _us(cutoff), *key, limit),
            )
        if facts and preferences_of is not None:
            # Merge the two ordered lists on the raw columns; build only the memories returned.
            rows.sort(key=lambda row: (row[10], row[9], row[0]), reverse=True)
        return [_row_to_memory(row) for row in rows[:limit]]

    def _refresh(self, memory_id: str, now: datetime, cutoff: datetime) -> bool:
        with self._write() as conn:
            changed = conn.execute(
                "UPDATE memories SET refreshed_at = max(refreshed_at, ?) "
                "WHERE id = ? AND status = 'active' AND chain_refreshed_at > ?",
                (_us(now), memory_id, _us(cutoff)),
            ).rowcount
            if changed != 1:
                return False
            (root, chain) = conn.execute(
                "SELECT root, max(chain_refreshed_at, refreshed_at) FROM memories WHERE id = ?", (memory_id,)
            ).fetchone()
            conn.execute("UPDATE memories SET chain_refreshed_at = ? WHERE root = ?", (chain, root))
            return True

    def _retire(self, memory_id: str, reason: str, cutoff: datetime) -> bool:
        with self._write() as conn:
            changed = conn.execute(
                "UPDATE memories SET status = 'retired', retired_reason = ? "
                "WHERE id = ? AND status = 'active' AND chain_refreshed_at > ?",
                (reason, memory_id, _us(cutoff)),
            ).rowcount
            return changed == 1

    def _delete_chain(self, memory_id: str) -> None:
        with self._write() as conn:
            conn.execute("DELETE FROM memories WHERE root = (SELECT root FROM memories WHERE id = ?)", (memory_id,))

    def _chain(self, memory_id: str, cutoff: datetime) -> list[Memory]:
        return chain_order(
            self._read(
                f"SELECT {_COLUMNS} FROM memories WHERE root = (SELECT root FROM memories WHERE id = ?) "
                "AND chain_refreshed_at > ? ORDER BY created_at, id",
                (memory_id, _us(cutoff)),
            )
        )

    def _sweep(self, cutoff: datetime) -> int:
        with self._write() as conn:
            deleted: int = conn.execute("DELETE FROM memories WHERE chain_refreshed_at <= ?", (_us(cutoff),)).rowcount
            return deleted


def trial_file(uri: str, folder: Path) -> TrialStore:
    """A trial's own SQLite file: ``SCHEME:`` alone is a fresh file in ``folder``; ``:memory:``
    lives in its process; a path names the file (its folder must exist)."""
    scheme, _, rest = uri.partition(":")
    if not rest.strip("/"):
        path = folder / "store.db"
        return TrialStore(f"{scheme}:///{path}", files=(path,), shared=True)
    if rest.endswith(":memory:"):
        return TrialStore(uri)
    named = Path(parse_sqlite_uri("sqlite:" + rest)[0])
    return TrialStore(uri, shared=True, folder=named.parent)


@per_trial(
    trial_file,
    hint="use '{scheme}:' (a private file per trial), or put {{scenario}}, {{trial}} and {{arm}} in the path",
)
def open_sqlite(uri: str, options: StoreOptions) -> SqliteStore:
    """Factory for ``sqlite:`` URIs (see `parse_sqlite_uri`)."""
    path, extra = parse_sqlite_uri(uri)
    try:
        busy_timeout = float(extra.get("busy_timeout", 30.0))
    except ValueError as exc:
        raise ConfigurationError(f"busy_timeout must be a number of seconds, got {extra['busy_timeout']!r}") from exc
    return SqliteStore(path, options, busy_timeout=busy_timeout)
