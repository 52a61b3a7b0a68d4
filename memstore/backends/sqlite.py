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
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from memstore.backends import StoreOptions, TrialStore, per_trial, sql
from memstore.backends.rows import Row, row_type
from memstore.backends.sqlite_file import (
    APPLICATION_ID,
    parse_sqlite_uri,
    refuse_foreign_file,
    rollback,
    translate,
    with_retry,
    writable,
)
from memstore.errors import ConfigurationError, IncompatibleStore, StorageError
from memstore.uri import StoreURI

__all__ = ["APPLICATION_ID", "SqliteStore", "open_sqlite", "parse_sqlite_uri"]


class SqliteStore(sql.SqlRecordStore):
    """A `MemoryStore` in one SQLite file (or ``:memory:``).

    Opened read-only (``read_only=True``, or a file this process cannot write) it answers
    every read and refuses every write with `StorageError`; it never changes the file. Its
    queries are `memstore.backends.sql`'s, in the SQLite dialect.
    """

    dialect = sql.SQLITE

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
        conn.row_factory = _named_row
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
            version = self._check_identity(conn)  # read only: nothing is written to a file refused here
            if self.read_only:
                if version != sql.SCHEMA_VERSION:
                    raise StorageError(
                        f"{self.path} is read-only and needs a schema upgrade (version {version} to "
                        f"{sql.SCHEMA_VERSION}); open it once with write access"
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
            app_id = conn.execute("PRAGMA application_id").fetchone().application_id
            version = conn.execute("PRAGMA user_version").fetchone().user_version
            tables = conn.execute("SELECT count(*) AS objects FROM sqlite_schema").fetchone().objects
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
        elif version > sql.SCHEMA_VERSION:
            raise IncompatibleStore(
                f"{self.path} was written by a newer memstore (schema version {version}; this one "
                f"reads up to {sql.SCHEMA_VERSION}); upgrade memstore to open it"
            )
        return int(version)

    def _migrate(self, conn: sqlite3.Connection) -> None:
        if conn.execute("PRAGMA user_version").fetchone().user_version == sql.SCHEMA_VERSION:
            return
        conn.execute("BEGIN IMMEDIATE")
        try:
            # Read again under the write lock: another process may have migrated meanwhile.
            version = self._check_identity(conn)
            for statement in self.dialect.migrations(version, sql.SCHEMA_VERSION):
                conn.execute(statement)
            conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            conn.execute(f"PRAGMA user_version = {sql.SCHEMA_VERSION}")
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

    def _rows(self, query: str, params: Mapping[str, Any]) -> list[Row]:
        with self._lock:
            try:
                cursor = self._conn.cursor()
                cursor.row_factory = None  # named below, once a query rather than once a row (reads are hot)
                found = cursor.execute(query, params).fetchall()
                return list(map(row_type(tuple(d[0] for d in cursor.description))._make, found))
            except sqlite3.Error as exc:
                raise translate(exc, f"reading {self.path} failed") from exc


def _named_row(cursor: sqlite3.Cursor, values: tuple[Any, ...]) -> Row:
    """A row as a named tuple, read by column name (`memstore.backends.rows`)."""
    return row_type(tuple(d[0] for d in cursor.description))._make(values)


def trial_file(uri: str, folder: Path) -> TrialStore:
    """A trial's own SQLite file: ``SCHEME:`` alone is a fresh file in ``folder``; ``:memory:``
    lives in its process; a path names the file (its folder must exist)."""
    parsed = StoreURI.parse(uri)
    if not parsed.path:
        path = folder / "store.db"
        return TrialStore(f"{parsed.scheme}:///{path}", files=(path,), shared=True)
    if parsed.path.endswith(":memory:"):  # sqlite:///:memory: too, as the trial file has always read it
        return TrialStore(uri)
    named = Path(parse_sqlite_uri(uri)[0])
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
